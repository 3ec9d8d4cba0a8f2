"""Quire in real Chromium against real llama-server instances (Gemma 3 270M, one thread):
connect and model discovery, a streamed cited answer, Stop, a cut answer, every study
generator through structured output, embeddings and hybrid search, and the same from file://.

Answers are kept short (Answer length) so a 2-core machine gets through; what is checked is
what Quire promises about the protocol, not what a 270M base model writes."""

import json
from urllib.parse import urlparse

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready, wait_until

from .conftest import CHAT_ALIAS, CONTEXT, EMBED_ALIAS

pytestmark = pytest.mark.browser

BIO = ("# Cells\n## Energy\nMitochondria make ATP, the energy currency of the cell. The mitochondrion has its own "
       "DNA.\n## Division\nMitosis makes two identical daughter cells. Meiosis makes four gametes.\n")
ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground and has large crystals.\n"
SHORT = 96  # tokens per answer in these tests: a few seconds at one thread


def open_page(context, url, server_url, log):
    page = log.attach(context.new_page())
    page.set_default_timeout(300_000)  # a real model on a busy 2-core machine
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(server_url)})")  # read by csp.js
    page.goto(url)
    wait_ready(page)
    return page


def connect(page, server_url, **settings):
    return page.evaluate("""async ([docs, settings]) => {
        for (const [name, text] of docs) await quire.stage({name, text}, {category: 'Science'});
        await quire.train();
        return await quire.saveSettings(settings);
    }""", [[["Biology.md", BIO], ["Rocks.md", ROCKS]],
           {"url": server_url, "kind": "openai", "chat_model": CHAT_ALIAS, "num_predict": SHORT, **settings}])


def ask_in_ui(page, question):
    page.get_by_test_id("nav-ask").click()
    page.get_by_test_id("chat-new").click()
    page.get_by_test_id("chat-input").fill(question)
    page.get_by_test_id("chat-ask").click()


def wait_answered(page, count):
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {count} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


GENERATE = """async ([kind, count]) => {
    const set = await quire.generate(kind, {count, difficulty: 'easy'});
    return set;
}"""


@pytest.mark.parametrize("kind,count", [("quiz", 2), ("flashcards", 2), ("workshop", 2), ("mindmap", 1)])
def test_study_generators_get_valid_items_through_structured_output(context, built_dist, serve, llama_chat, page_log,
                                                                    kind, count):
    page = open_page(context, serve(built_dist).url, llama_chat.url, page_log)
    connect(page, llama_chat.url)
    made = page.evaluate(GENERATE, [kind, count])
    assert made["made_without_ai"] is False, made.get("report")
    if kind in ("quiz", "flashcards"):
        assert 1 <= len(made["items"]) <= count and all(i["chunk_ids"] for i in made["items"])
    elif kind == "workshop":
        assert made["outline"]["modules"] and all(m["lessons"] for m in made["outline"]["modules"])
    else:
        assert made["map"]["topic"] and made["map"]["children"]
    assert not page_log.errors, page_log.errors


def test_embeddings_and_hybrid_search_from_the_embedding_instance(context, built_dist, serve, llama_embed, page_log):
    """Passages embedded by llama-server --embeddings in the tab, then hybrid search.  With
    per-role servers (chat and embeddings apart) the embedding server is set on its own."""
    page = open_page(context, serve(built_dist).url, llama_embed.url, page_log)
    page.evaluate("""async ([docs]) => {
        for (const [name, text] of docs) await quire.stage({name, text}, {category: 'Science'});
        await quire.train();
    }""", [[["Biology.md", BIO], ["Rocks.md", ROCKS]]])
    settings = page.evaluate("quire._call('llmSettings')")
    role = {"embed_url": llama_embed.url, "embed_kind": "openai"} if "embed_url" in settings else \
        {"url": llama_embed.url, "kind": "openai"}
    page.evaluate("s => quire.saveSettings(s)", {**role, "embed_model": EMBED_ALIAS})
    done = page.evaluate("quire.embed()")
    assert done["embedded"] == done["total"] > 0
    hits = page.evaluate("quire.search('How does lava become rock?', {k: 3})")
    assert all(h["dense_status"] not in (None, "off", "no-vector") and h["dense_score"] is not None for h in hits)
    assert not page_log.errors, page_log.errors


CSP = "() => [...document.querySelectorAll('meta[http-equiv=\"Content-Security-Policy\"]')].map(m => m.content)"


def sent_to(requests, server) -> set[str]:
    """The paths the page (its worker included) requested from one server."""
    return {urlparse(url).path for url in requests if url.startswith(server.url + "/")}


def generated(server) -> bool:
    """llama-server's log prints a slot's timing ("eval time") after every generation, never after an embedding."""
    return "eval time" in server.log.read_text()


def test_chat_and_embeddings_on_two_real_instances_at_once(context, built_dist, serve, llama_chat, llama_embed,
                                                           page_log):
    """A user's set-up with two servers: chat on one llama-server, embeddings on another, typed
    into Settings.  After Reload now the page may reach exactly both; the passages and the
    question are embedded on one, the answer is written by the other."""
    requests = []
    context.on("request", lambda r: requests.append(r.url))  # the page's and its worker's
    page = open_page(context, serve(built_dist).url, llama_chat.url, page_log)
    page.evaluate("""async ([docs]) => {
        for (const [name, text] of docs) await quire.stage({name, text}, {category: 'Science'});
        await quire.train();
        await quire.saveSettings({num_predict: SHORT_PLACEHOLDER});
    }""".replace("SHORT_PLACEHOLDER", str(SHORT)), [[["Biology.md", BIO], ["Rocks.md", ROCKS]]])
    page.get_by_test_id("nav-settings").click()
    page.get_by_test_id("llm-kind").select_option("openai")
    page.get_by_test_id("llm-url").fill(llama_chat.url)
    page.get_by_test_id("llm-embed-same").uncheck()
    page.get_by_test_id("llm-embed-kind").select_option("openai")
    page.get_by_test_id("llm-embed-url").fill(llama_embed.url)
    page.get_by_test_id("llm-save").click()
    # The page opened with the chat server admitted (csp.js read it); the new embedding server is not yet.
    page.get_by_text(f"Saved: Quire will use {llama_embed.url} after this page is reloaded.").wait_for()
    reload_box = page.get_by_test_id("llm-reload")
    with page.expect_navigation():
        reload_box.get_by_role("button", name="Reload now").click()
    wait_ready(page)
    assert page.evaluate(CSP)[1] == f"connect-src 'self' data: blob: {llama_chat.url} {llama_embed.url}"
    page.get_by_test_id("nav-settings").click()
    page.wait_for_function("() => document.querySelector('[data-testid=llm-embed-state]')?.dataset.state === 'connected'"
                           " && document.querySelector('[data-testid=llm-state]')?.dataset.state === 'connected'")
    # Each server offers one model: chosen without asking, each from its own server.
    settings = page.evaluate("quire._call('llmSettings')")
    assert (settings["chat_model"], settings["embed_model"]) == (CHAT_ALIAS, EMBED_ALIAS), settings
    assert (settings["url"], settings["embed_url"]) == (llama_chat.url, llama_embed.url)

    done = page.evaluate("quire.embed()")
    assert done["embedded"] == done["total"] > 0
    r = page.evaluate("""async (q) => { const r = await quire.ask(q);
        return {mode: r.mode, answer: r.answer, citations: r.citations}; }""", "What does mitosis make?")
    assert r["mode"] == "llm" and r["answer"].strip()
    assert r["citations"] and r["citations"][0]["source"] == "Biology.md"
    hits = page.evaluate("quire.search('How does lava become rock?', {k: 3})")
    assert all(h["dense_status"] not in (None, "off", "no-vector") and h["dense_score"] is not None for h in hits)
    chat_paths, embed_paths = sent_to(requests, llama_chat), sent_to(requests, llama_embed)
    assert "/v1/chat/completions" in chat_paths and "/v1/embeddings" not in chat_paths, chat_paths
    assert "/v1/embeddings" in embed_paths and "/v1/chat/completions" not in embed_paths, embed_paths
    # And from the servers' side: the answer was generated on the chat instance, never on the other.
    assert generated(llama_chat) and not generated(llama_embed)
    assert not page_log.errors, page_log.errors


def test_from_file_the_page_connects_answers_and_generates(playwright_instance, built_dist, llama_chat, tmp_path):
    """llama-server answers CORS for any origin, ``null`` included: a page opened from disk works."""
    ctx = playwright_instance.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                                 args=CHROMIUM_ARGS)
    try:
        log = PageLog()
        page = open_page(ctx, (built_dist / "index.html").as_uri(), llama_chat.url, log)
        assert connect(page, llama_chat.url)["status"] == "connected"
        r = page.evaluate("async () => { const r = await quire.ask('What does mitosis make?'); "
                          "return {mode: r.mode, answer: r.answer}; }")
        assert r["mode"] == "llm" and r["answer"].strip()
        made = page.evaluate(GENERATE, ["flashcards", 1])
        assert made["made_without_ai"] is False and made["items"]
        assert not log.errors, log.errors
    finally:
        ctx.close()


# Last: after a Stop, llama-server (one slot) may still be finishing the dropped request, and a
# test after it in the same session waited on that slot (seen once here, not understood yet).
def test_connect_discover_answer_stop_and_cut_over_http(context, built_dist, serve, llama_chat, page_log):
    page = open_page(context, serve(built_dist).url, llama_chat.url, page_log)
    status = connect(page, llama_chat.url)
    assert status["status"] == "connected" and status["chat_ready"]
    [model] = status["models"]
    assert model["name"] == CHAT_ALIAS and model["context_length"] == CONTEXT

    # A streamed answer, passages first, in the Ask view; the template cannot call tools, and it says so.
    r = page.evaluate("""async (q) => {
        const order = [];
        const r = await quire.ask(q, {onEvent: e => order.push(e.type)});
        return {order, mode: r.mode, answer: r.answer, citations: r.citations, events: r.events};
    }""", "What makes ATP?")
    assert r["mode"] == "llm" and r["answer"].strip()
    assert r["order"][0] == "citations" and r["order"].count("content") > 1 and r["order"][-1] == "done"
    assert r["citations"][0]["source"] == "Biology.md"
    notices = [e for e in r["events"] if e["type"] == "notice"]
    assert notices[0]["code"] == "no_tools"
    assert not [e for e in r["events"] if e["type"] in ("connection", "extractive", "error")]

    # Stop, pressed while the model writes: the answer so far is kept.
    page.evaluate("quire.saveSettings({num_predict: 2048})")
    ask_in_ui(page, "Explain in detail everything these notes say about cells, division and rocks.")
    first = page.get_by_test_id("msg-assistant").last
    page.wait_for_function("() => { const a = [...document.querySelectorAll('[data-testid=answer]')].pop(); "
                           "return a && a.textContent.length > 0; }")
    page.get_by_test_id("chat-stop").click()
    wait_answered(page, 1)
    assert first.get_by_test_id("answer-status").inner_text().startswith("Stopped")
    session = page.evaluate("async () => quire.chatSession((await quire.chatSessions())[0].id)")
    assert session["messages"][-1]["stopped"] and session["messages"][-1]["content"]

    # Answer length reached (set in Settings): the answer says it was cut and what to do.
    page.get_by_test_id("nav-settings").click()
    page.wait_for_function("() => document.querySelector('[data-testid=llm-num-predict]').value === '2048'")
    page.get_by_test_id("llm-num-predict").fill("16")
    page.get_by_test_id("llm-save").click()
    wait_until(page, "quire._call('llmSettings').then(s => s.num_predict === 16)")
    ask_in_ui(page, "Write a long essay about mitochondria.")
    wait_answered(page, 1)
    cut = page.locator("[data-testid=answer-notice][data-code=cut]")
    assert cut.inner_text() == "The answer was cut at 16 tokens; raise Answer length in Settings."
    assert "cannot call tools" in page.locator("[data-testid=answer-notice][data-code=no_tools]").inner_text()
    assert not page_log.errors, page_log.errors
