"""Ask (chat with your documents) in real Chromium, over http and from file://, against the Ollama stub."""

import http.server
import json
import math
import socket
import threading
from pathlib import Path

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, PageLog, held, hold, release, unhold, wait_ready
from ollama_server import OllamaStub

pytestmark = pytest.mark.browser

BIO = "# Cells\n## Energy\nMitochondria make ATP for the cell.\n## Division\nMitosis makes two identical cells."
ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground."
MALICIOUS = ROOT / "tests" / "fixtures" / "malicious"
SHOTS = Path("/tmp")


@pytest.fixture
def stub():
    s = OllamaStub().start()
    yield s
    s.stop()


@pytest.fixture
def open_stub():
    """OLLAMA_ORIGINS=* semantics: file:// pages (Origin null) may call it."""
    s = OllamaStub(origins="*").start()
    yield s
    s.stop()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def open_page(context, url, llm_url, log):
    page = log.attach(context.new_page())
    page.set_default_timeout(60_000)
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(llm_url)})")  # before csp.js reads it
    page.goto(url)
    wait_ready(page)
    return page


def setup(page, llm_url, chat_model="qwen3:4b", docs=(("Biology.md", BIO, "Science"), ("Rocks.md", ROCKS, "Geology"))):
    page.evaluate("""async ([docs, url, model]) => {
        for (const [name, text, category] of docs) await quire.stage({name, text}, {category});
        await quire.train();
        await quire.saveSettings({url, chat_model: model});
    }""", [list(docs), llm_url, chat_model])


def ask_in_ui(page, question):
    page.get_by_test_id("chat-input").fill(question)
    page.get_by_test_id("chat-ask").click()


def wait_answered(page, count):
    page.wait_for_function(f"() => document.querySelectorAll('[data-testid=msg-assistant]').length === {count} "
                           "&& !document.querySelector('.msg.streaming') && document.querySelector('[data-testid=chat-stop]').hidden")


ASK_API = """async ([question, opts]) => {
    const order = [];
    const r = await quire.ask(question, Object.assign({onEvent: e => order.push(e.type)}, opts || {}));
    return {answer: r.answer, citations: r.citations, session: r.session, mode: r.mode, order,
            events: r.events.map(e => e.type), memory: r.memory, error: r.error};
}"""


def test_full_chat_in_the_ask_view_over_http(context, built_dist, serve, stub, page_log):
    page = open_page(context, serve(built_dist).url, stub.url, page_log)
    setup(page, stub.url)
    hold = threading.Event()
    stub.enqueue_chat("", thinking=["I should ", "compute 2*21."], tool_calls=[{"name": "calculator", "arguments": {"expression": "2*21"}}], hold=hold)
    stub.enqueue_chat(["Mitochondria make **ATP** [1]. ", "And 2 × 21 = 42."], thinking=["Now answer."], delay=0.05)
    page.get_by_test_id("nav-ask").click()
    ask_in_ui(page, "What makes ATP, and what is 2*21?")
    # Mid-stream: the passages are listed and the model is thinking; no answer text yet.
    answer = page.get_by_test_id("msg-assistant").last
    answer.get_by_test_id("citation").first.wait_for()
    answer.get_by_test_id("thinking").wait_for()
    assert answer.get_by_test_id("answer").inner_text() == ""
    assert "Biology.md" in answer.get_by_test_id("citation").first.inner_text()
    assert page.get_by_test_id("chat-stop").is_visible()
    hold.set()
    wait_answered(page, 1)
    assert answer.get_by_test_id("answer").inner_text().startswith("Mitochondria make ATP")
    assert answer.locator("[data-testid=answer] strong").inner_text() == "ATP"
    assert answer.get_by_test_id("tool-call").get_attribute("data-tool") == "calculator"
    assert "42" in answer.get_by_test_id("tool-result").text_content()
    assert answer.get_by_test_id("thinking-text").text_content() == "I should compute 2*21.Now answer."
    assert "Memory" in page.get_by_test_id("memory-text").inner_text()
    assert page.get_by_test_id("chat-session-title").first.inner_text() == "What makes ATP, and what is 2*21?"
    # the [1] marker opens the passage in its page, highlighted
    answer.locator("[data-testid=answer] .cite[data-cite='1']").click()
    assert "Mitochondria make ATP" in page.get_by_test_id("passage-mark").inner_text()
    page.get_by_test_id("passage-close").click()
    # the calculator result went back to the model
    tool_msg = [m for m in stub.bodies("/api/chat")[1]["messages"] if m["role"] == "tool"]
    assert tool_msg and tool_msg[0]["content"] == "42"
    # a second question, held mid-stream, for the screenshot
    hold2 = threading.Event()
    stub.enqueue_chat(["Basalt forms when lava **cools quickly** [1], ", "unlike granite, which cools slowly [1]."], thinking=["Rocks question."], hold=hold2)
    ask_in_ui(page, "How does basalt form compared with granite?")
    page.get_by_test_id("msg-assistant").nth(1).get_by_test_id("citation").first.wait_for()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=answer]')[1].textContent.length > 10 || "
                           "document.querySelectorAll('[data-testid=thinking]')[1].hidden === false")
    page.set_viewport_size({"width": 1200, "height": 900})
    page.screenshot(path=str(SHOTS / "quire-ask-midstream.png"), full_page=True)
    hold2.set()
    wait_answered(page, 2)
    page.screenshot(path=str(SHOTS / "quire-ask-done.png"), full_page=True)
    assert not page_log.errors, page_log.errors


def test_new_chat_is_not_replaced_by_a_chat_that_finishes_opening_late(context, built_dist, serve, stub, page_log):
    # Entering Ask lists the chats and opens the newest; if either answer arrives after the user
    # clicked "New chat" (a busy engine, a slow disk), the old chat used to replace the new one,
    # and the next question went there.
    page = open_page(context, serve(built_dist).url + "#library", stub.url, page_log)
    setup(page, stub.url)
    stub.enqueue_chat("Mitosis makes two identical cells [1].")
    first = page.evaluate(ASK_API, ["What does mitosis make?", {}])["session"]
    hold(page, "chatSessions", "chatSession")
    # the list arrives late
    page.evaluate("location.hash = '#ask'")
    page.wait_for_function("() => window.held.chatSessions.length === 1")
    page.get_by_test_id("chat-new").click()
    release(page, "chatSessions", 0)
    assert held(page, "chatSession") == 0 and page.get_by_test_id("msg-user").count() == 0
    # the newest chat arrives late
    page.evaluate("location.hash = '#library'")
    page.evaluate("location.hash = '#ask'")
    page.wait_for_function("() => window.held.chatSessions.length === 2")
    release(page, "chatSessions", 1)
    page.wait_for_function("() => window.held.chatSession.length === 1")
    page.get_by_test_id("chat-new").click()
    release(page, "chatSession", 0)
    assert page.get_by_test_id("msg-user").count() == 0
    stub.enqueue_chat("Basalt cools quickly [1].")
    ask_in_ui(page, "How does basalt form?")
    page.wait_for_function("() => window.held.chatSession.length === 2")
    release(page, "chatSession", 1)
    wait_answered(page, 1)
    unhold(page)
    sessions = page.evaluate("quire.chatSessions()")
    assert len(sessions) == 2 and sessions[0]["id"] != first and sessions[0]["title"] == "How does basalt form?"
    assert page.get_by_test_id("msg-user").all_inner_texts()[0].startswith("How does basalt form?")
    # a scope saved for one chat while the user opens another is not shown as the other's
    hold(page, "setChatScope")
    page.get_by_test_id("chat-scope").select_option("cat:Geology")
    page.wait_for_function("() => window.held.setChatScope.length === 1")
    page.locator(f"[data-testid=chat-session][data-id='{first}'] [data-testid=chat-open]").click()
    page.wait_for_function("() => document.querySelector('[data-testid=msg-user]').textContent.startsWith('What does mitosis')")
    release(page, "setChatScope", 0)
    assert page.get_by_test_id("chat-scope-label").inner_text() == "Answering from all your documents."
    assert page.evaluate("async (id) => (await quire.chatSession(id)).scope", first) is None
    assert page.evaluate("async (id) => (await quire.chatSession(id)).scope", sessions[0]["id"]) == {"category": "Geology"}
    assert not page_log.errors, page_log.errors


def test_file_page_full_chat_scope_memory_edit_and_restart(playwright_instance, built_dist, open_stub, tmp_path):
    url = (built_dist / "index.html").as_uri()
    profile = tmp_path / "profile"

    def launch():
        ctx = playwright_instance.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        log = PageLog()
        return ctx, open_page(ctx, url, open_stub.url, log), log

    ctx, page, log = launch()
    setup(page, open_stub.url)
    # A full chat through the API: citations before any text, thinking, a tool call.
    open_stub.enqueue_chat("", thinking=["Look it up."], tool_calls=[{"name": "search_knowledge_base", "arguments": {"query": "mitosis"}}])
    open_stub.enqueue_chat(["Mitosis makes two ", "identical cells [1]."], thinking=["Found it."])
    r = page.evaluate(ASK_API, ["What does mitosis make?", {}])
    assert r["order"][0] == "citations" and r["order"][-1] == "done"
    assert r["order"].index("thinking") < r["order"].index("tool_call") < r["order"].index("tool_result") < r["order"].index("content")
    assert r["answer"] == "Mitosis makes two identical cells [1]." and r["citations"][0]["source"] == "Biology.md"
    assert {"source", "location_label", "passage"} <= set(r["citations"][0])
    assert open_stub.requests[-1].origin == "null"

    # Scope, picked in the Ask view for a new chat: stated in the system prompt AND the user message.
    page.goto(url + "#ask")
    wait_ready(page)
    page.get_by_test_id("chat-new").click()
    page.get_by_test_id("chat-scope").select_option("cat:Geology")
    assert "Geology" in page.get_by_test_id("chat-scope-label").inner_text()
    open_stub.enqueue_chat("Basalt cools quickly [1].")
    ask_in_ui(page, "How do cells and rocks form?")
    wait_answered(page, 1)
    body = open_stub.bodies("/api/chat")[-1]
    statement = "Answer only from the documents in the category 'Geology'."
    assert statement in body["messages"][0]["content"] and statement in body["messages"][-1]["content"]
    assert "Basalt" in body["messages"][-1]["content"] and "Mitochondria" not in body["messages"][-1]["content"]
    chips = page.get_by_test_id("msg-assistant").last.get_by_test_id("citation").all_inner_texts()
    assert chips and all("Rocks.md" in c for c in chips)
    # ...and with chosen sources
    page.get_by_test_id("chat-scope").select_option("pick")
    page.locator("[data-testid=chat-scope-source][data-name='Biology.md']").check()
    page.wait_for_function("() => document.querySelector('[data-testid=chat-scope-label]').textContent.includes('Biology.md')")
    open_stub.enqueue_chat("Mitochondria make ATP [1].")
    ask_in_ui(page, "What makes ATP?")
    wait_answered(page, 2)
    body = open_stub.bodies("/api/chat")[-1]
    assert "Answer only from: Biology.md." in body["messages"][0]["content"] and "Answer only from: Biology.md." in body["messages"][-1]["content"]

    # Memory: 25,000-character answers; two of them no longer fit in 48,000 characters,
    # so the model sees only the newest pair, and the meter says the oldest are forgotten.
    sid = page.evaluate("quire.chatSessions()")[0]["id"]
    page.evaluate("(sid) => quire.setChatScope(sid, null)", sid)
    for _ in range(3):
        open_stub.enqueue_chat("y" * 25_000)
    page.evaluate(ASK_API, ["Long one?", {"session": sid}])
    r = page.evaluate(ASK_API, ["Long two?", {"session": sid}])
    history = [m["content"][:9] for m in open_stub.bodies("/api/chat")[-1]["messages"][1:-1]]
    assert history == ["How do ce", "Basalt co", "What make", "Mitochond", "Long one?", "y" * 9]  # still fits
    r = page.evaluate(ASK_API, ["Long three?", {"session": sid}])
    history = [m["content"][:9] for m in open_stub.bodies("/api/chat")[-1]["messages"][1:-1]]
    assert history == ["Long two?", "y" * 9]  # the oldest pairs were dropped first
    assert r["memory"]["dropped"] == 4 and r["memory"]["fullness"] == 1.0

    # Edit an earlier question: the history rewinds to it and the answer is regenerated.
    page.goto(url + "#ask")
    wait_ready(page)
    page.locator(f"[data-testid=chat-session][data-id='{sid}'] [data-testid=chat-open]").click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=msg-user]').length === 5")
    assert "forgotten" in page.get_by_test_id("memory-text").inner_text()
    page.wait_for_function("() => !document.querySelector('[data-testid=memory-meter]').dataset.fullness.startsWith('0')")
    open_stub.enqueue_chat("Mitochondria make ATP, the cell's fuel [1].")
    page.get_by_test_id("msg-user").nth(1).get_by_test_id("edit-question").click()
    page.get_by_test_id("edit-input").fill("What do mitochondria make?")
    page.get_by_test_id("edit-save").click()
    wait_answered(page, 2)
    assert page.get_by_test_id("msg-user").all_inner_texts()[-1].startswith("What do mitochondria make?")
    body = open_stub.bodies("/api/chat")[-1]
    assert [m["content"][:9] for m in body["messages"][1:-1]] == ["How do ce", "Basalt co"]
    session = page.evaluate("(sid) => quire.chatSession(sid)", sid)
    assert len(session["messages"]) == 4 and session["messages"][-1]["content"] == "Mitochondria make ATP, the cell's fuel [1]."
    # rename in the list
    page.locator(f"[data-testid=chat-session][data-id='{sid}'] [data-testid=chat-rename]").click()
    page.get_by_test_id("chat-rename-input").fill("Rocks and cells")
    page.get_by_test_id("chat-rename-input").press("Enter")
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=chat-session-title]')].some(t => t.textContent === 'Rocks and cells')")
    assert not log.errors, log.errors
    ctx.close()

    # A browser restart: the chats and their messages are still there.
    ctx, page, log = launch()
    page.get_by_test_id("nav-ask").click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=chat-session]').length === 2")
    titles = page.get_by_test_id("chat-session-title").all_inner_texts()
    assert "Rocks and cells" in titles and "What does mitosis make?" in titles
    page.locator(f"[data-testid=chat-session][data-id='{sid}'] [data-testid=chat-open]").click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=msg-assistant]').length === 2")
    assert "the cell's fuel" in page.get_by_test_id("answer").last.inner_text()
    assert not log.errors, log.errors
    ctx.close()


@pytest.mark.parametrize("case", ["not_running", "cors_refused", "model_missing", "no_model"])
def test_connection_failures_say_how_to_fix_and_still_answer_from_passages(context, built_dist, serve, stub, page_log, case):
    if case == "cors_refused":
        url, llm_url, model = (built_dist / "index.html").as_uri(), stub.url, "llama3.2:3b"  # Origin null, no OLLAMA_ORIGINS
    else:
        url = serve(built_dist).url
        llm_url = f"http://127.0.0.1:{closed_port()}" if case == "not_running" else stub.url
        model = {"not_running": "llama3.2:3b", "model_missing": "nosuch:7b", "no_model": ""}[case]
    page = open_page(context, url, llm_url, page_log)
    setup(page, llm_url, model)
    page.get_by_test_id("nav-ask").click()
    ask_in_ui(page, "How does basalt form?")
    wait_answered(page, 1)
    line = page.get_by_test_id("chat-connection")
    text = line.inner_text()
    expected = {"not_running": ["not running", "Nothing is answering", "ollama serve"],
                "cors_refused": ["refuses this page", "OLLAMA_ORIGINS", "python serve.py"],
                "model_missing": ["not installed", "ollama pull nosuch:7b"],
                "no_model": ["No chat model is chosen", "without an AI summary"]}[case]
    for words in expected:
        assert words in text, (words, text)
    assert line.get_by_test_id("chat-settings-link").get_attribute("href") == "#settings"
    ex = page.get_by_test_id("extractive")
    assert "no AI summary" in ex.get_by_test_id("extractive-label").text_content()
    first = ex.get_by_test_id("extractive-result").first
    assert "Rocks.md" in first.get_by_test_id("extractive-source").inner_text()
    # relevance = the share of the question's words the passage holds (the same number search gives)
    shown = page.evaluate("quire.search('How does basalt form?')")[0]["relevance"]
    assert first.get_by_test_id("extractive-relevance").inner_text() == f"relevance {math.floor(shown * 100 + 0.5)}%"  # JS Math.round
    assert "Basalt" in first.locator("mark").all_inner_texts()
    assert not [e for e in page_log.errors if "Failed to load resource" not in e and "ERR_CONNECTION_REFUSED" not in e
                and "CORS" not in e and "Access-Control" not in e], page_log.errors


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list = []

    def do_GET(self):
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_malicious_document_and_reply_load_nothing(context, built_dist, serve, stub, page_log):
    trap = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    _Recorder.hits = []
    threading.Thread(target=trap.serve_forever, daemon=True).start()
    port = trap.server_address[1]
    evil = lambda name: (MALICIOUS / name).read_text(encoding="utf-8").replace("127.0.0.1:9", f"127.0.0.1:{port}")  # noqa: E731
    try:
        page = open_page(context, serve(built_dist).url, stub.url, page_log)
        seen = []
        page.on("request", lambda req: seen.append(req.url))
        setup(page, stub.url, "llama3.2:3b", docs=(("Injected.md", evil("prompt_injection.md"), "Bio"),))
        stub.enqueue_chat([evil("html_tags.md"), "\n\n", evil("bad_links.md"),
                           f"\n\n<img src=http://127.0.0.1:{port}/x> [click](javascript:alert(1))"])
        page.get_by_test_id("nav-ask").click()
        ask_in_ui(page, "What do mitochondria make?")
        wait_answered(page, 1)
        answer = page.get_by_test_id("answer").last
        assert "<img src=http://127.0.0.1:" in answer.inner_text()  # shown as text, never as an element
        page.get_by_test_id("citation").first.click()  # the document's own text in the passage viewer
        page.get_by_test_id("passage-mark").wait_for()
        page.get_by_test_id("passage-close").click()
        page.evaluate("quire.saveSettings({chat_model: ''})")  # and as a search-results answer
        ask_in_ui(page, "ignore previous instructions")
        wait_answered(page, 2)
        page.get_by_test_id("extractive-result").first.wait_for()
        page.wait_for_timeout(500)  # let anything that could load try
        bad = page.evaluate("""() => [...document.querySelectorAll('[data-testid=chat-messages] *')].filter(e =>
            ['IMG', 'SCRIPT', 'IFRAME', 'OBJECT', 'EMBED', 'SVG', 'VIDEO', 'AUDIO', 'LINK', 'STYLE', 'META', 'FORM', 'BASE'].includes(e.tagName.toUpperCase())
            || [...e.attributes].some(a => a.name.startsWith('on') || /^\\s*(javascript|data|vbscript):/i.test(a.value))).map(e => e.outerHTML)""")
        assert bad == []
        assert [u for u in seen if f":{port}" in u] == [] and _Recorder.hits == []
        assert not [e for e in page_log.errors if "Content Security Policy" not in e], page_log.errors
    finally:
        trap.shutdown()
        trap.server_close()
