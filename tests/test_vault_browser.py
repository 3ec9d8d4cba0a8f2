"""Strangers' vaults and real Anki decks in real Chromium.

A crafted vault (valid checksums) that names another model server and switches on
web addresses imports its data, says what it ignored, and after a reload the page
still reaches only the loopback server.  Deep JSON and zip bombs are refused on the
page, and the engine stays usable.  A deck exported by Anki's own backend (the modern
zstd package) imports through ``quire.importDeck`` with its name."""

import pytest

from anki_decks import DECK, EXPECTED, export
from conftest import PageLog, wait_ready
from vault_crafts import EVIL, HOSTILE_SETTINGS, bomb_vault, crafted, nested_vault, v2_vault

pytestmark = pytest.mark.browser
ROCKS = "# Rocks\nBasalt forms when lava cools quickly.\n"

PAGE_STATE = """async () => ({
  csp: [...document.querySelectorAll('meta[http-equiv="Content-Security-Policy"]')].map(m => m.content),
  allowUrlFetch: localStorage.getItem('quire.allowUrlFetch'),
  llmUrl: localStorage.getItem('quire.llm.url'),
  maxFileMB: localStorage.getItem('quire.maxFileMB'),
  status: await quire.llmStatus(),
})"""


def rocks_library():
    from quire.model import sha256_hex

    chunk = {"chunk_id": "s1:0", "n": 0, "text": ROCKS, "hash": sha256_hex(ROCKS), "location": {"section": ["Rocks"]},
             "source_id": "s1", "start": 0, "end": len(ROCKS)}
    source = {"id": "s1", "name": "rocks.md", "status": "trained", "added": 1.0, "category": None, "language": "en",
              "size": len(ROCKS), "chunks": 1}
    return {"sources": {"s1": source}, "chunks": {"s1": [chunk]}}


def hostile_vault():
    return crafted({"settings": HOSTILE_SETTINGS, **rocks_library()})


def open_page(context, url):
    page = context.new_page()
    page.set_default_timeout(120_000)
    log = PageLog()
    log.attach(page)
    page.goto(url + "#privacy")
    wait_ready(page)
    return page, log


def import_file(page, name, data, mode="merge"):
    page.get_by_test_id(f"vault-mode-{mode}").check()
    page.once("dialog", lambda d: d.accept())
    page.get_by_test_id("vault-file").set_input_files(files=[{"name": name, "mimeType": "application/zip", "buffer": data}])
    page.get_by_test_id("vault-import").click()


@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_a_crafted_vault_never_moves_the_model_server(built_dist, serve, context, tmp_path, mode):
    server = serve(built_dist)
    page, log = open_page(context, server.url)
    before = page.evaluate(PAGE_STATE)
    import_file(page, "hostile.quire", hostile_vault(), mode)
    page.get_by_test_id("vault-done").wait_for()
    ignored = page.get_by_test_id("vault-ignored").all_inner_texts()
    assert any(f"The vault named the model server {EVIL}" in t for t in ignored), ignored
    assert any("web pages by address" in t for t in ignored), ignored
    assert [s["name"] for s in page.evaluate("quire.sources()")] == ["rocks.md"]  # the data came in

    page.reload()
    wait_ready(page)
    after = page.evaluate(PAGE_STATE)
    narrowed = [c for c in after["csp"] if c.startswith("connect-src")]  # csp.js's policy; index.html's is wider
    assert after["csp"] == before["csp"] and len(narrowed) == 1
    assert "evil" not in narrowed[0] and " http: https:" not in narrowed[0] and "127.0.0.1:11434" in narrowed[0]
    assert after["allowUrlFetch"] != "1" and after["llmUrl"] == before["llmUrl"]
    assert after["status"]["url"] == before["status"]["url"] == "http://127.0.0.1:11434"
    assert after["status"]["kind"] == "ollama" and after["status"]["settings"]["chat_model"] != "exfiltrate"
    assert after["maxFileMB"] == "300"  # the one harmless page setting
    assert page.evaluate("q => quire.search(q)", "basalt lava")[0]["source"] == "rocks.md"
    assert not [e for e in log.errors if "11434" not in e], log.errors  # no model server runs here


@pytest.mark.parametrize("name, make, reason", [
    ("deep.quire", lambda: nested_vault(5000), "nested 5001 levels deep"),
    ("bomb.quire", lambda: bomb_vault(64), "looks like a zip bomb"),
])
def test_deep_json_and_zip_bombs_are_refused_on_the_page(built_dist, serve, context, name, make, reason):
    server = serve(built_dist)
    page, log = open_page(context, server.url)
    page.evaluate("async () => { await quire.stage({name: 'notes.md', text: '# Notes\\nChloroplasts do photosynthesis.'}); "
                  "await quire.train(); }")
    import_file(page, name, make(), "replace")
    error = page.get_by_test_id("vault-error")
    error.wait_for()
    assert reason in error.inner_text() and "Nothing was imported" in error.inner_text()
    # the engine is alive and nothing changed
    assert page.evaluate("quire.status()")["stage"] == "ready"
    assert [s["name"] for s in page.evaluate("quire.sources()")] == ["notes.md"]
    assert page.evaluate("q => quire.search(q)", "chloroplasts")[0]["source"] == "notes.md"
    assert not log.errors, log.errors


def test_a_vault_exported_before_format_3_imports_with_one_passage_key(built_dist, serve, context):
    """Format 2 keyed a passage's id "id"; in the page it is searched, opened and stored as "chunk_id"."""
    server = serve(built_dist)
    page, log = open_page(context, server.url)
    import_file(page, "today.quire", v2_vault(rocks_library()), "replace")
    page.get_by_test_id("vault-done").wait_for()
    hit = page.evaluate("q => quire.search(q)", "basalt lava")[0]
    assert hit["chunk_id"] == "s1:0" and "id" not in hit and hit["source"] == "rocks.md"
    stored = page.evaluate("quire.chunks('s1')")
    assert [c["chunk_id"] for c in stored] == ["s1:0"] and "id" not in stored[0]
    page.reload()  # read back from IndexedDB
    wait_ready(page)
    assert page.evaluate("q => quire.search(q)", "basalt lava")[0]["chunk_id"] == "s1:0"
    page.evaluate("quire.showView('search')")
    page.get_by_test_id("search-input").fill("basalt lava")
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("open-passage").first.click()
    page.locator('[data-testid="passage-context"]:not([aria-busy])').wait_for()  # the engine's whole page came
    assert "Basalt forms" in page.get_by_test_id("passage-mark").inner_text()
    assert not log.errors, log.errors


def test_a_modern_anki_package_imports_with_its_name(built_dist, serve, context, tmp_path):
    apkg = export(tmp_path / "anki", legacy=False)
    server = serve(built_dist)
    page, log = open_page(context, server.url)
    view = page.evaluate("""async (bytes) => quire.importDeck({name: 'Cells.apkg', data: new Uint8Array(bytes)})""",
                         list(apkg.read_bytes()))
    assert view["title"] == DECK
    assert [i["type"] for i in view["items"]] == [c["type"] for c in EXPECTED]
    assert view["items"][0]["front"] == EXPECTED[0]["front"] and view["items"][2]["text"] == EXPECTED[2]["text"]
    assert not log.errors, log.errors
