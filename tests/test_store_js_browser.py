"""site/assets/store.js on its own, in real Chromium: a page that loads only it, on its own
origin, so its databases are the test's.

- A commit whose second value cannot be stored (the browser refuses it at once) lands none of
  its writes and fails with a message for a person.  (Before: the refusal escaped untranslated
  and the transaction committed the writes made before it.)
- The room probe answers in the page and in a worker, where it writes in place: nothing is
  left on the disk after it, and it never creates a file once the first one exists (making a
  file on a full disk fails with an InvalidStateError that cannot tell a full disk from
  anything else, so the probe could not answer when it was needed).
"""

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

STORE_JS = Path(__file__).resolve().parent.parent / "site" / "assets" / "store.js"
WORKER = "importScripts('store.js'); onmessage = async e => postMessage(await QuireStore.room(e.data));"


@pytest.fixture
def store_page(tmp_path, serve, context):
    root = tmp_path / "site"
    root.mkdir()
    shutil.copy(STORE_JS, root / "store.js")
    (root / "index.html").write_text('<!doctype html><meta charset="utf-8"><title>store.js</title>'
                                     '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">'
                                     '<script src="store.js"></script>', encoding="utf-8")
    (root / "room-worker.js").write_text(WORKER, encoding="utf-8")
    page = context.new_page()
    page.goto(serve(root).url)
    page.evaluate("QuireStore.openLibrary(['notes'], 1)")
    return page


def test_a_value_refused_at_once_lands_no_write_of_its_commit(store_page):
    message = store_page.evaluate("""async () => {
        try { await QuireStore.library.commit([['notes', 'a', 'kept?'], ['notes', 'b', () => 1]], []); }
        catch (e) { return e.name + ' | ' + e.message; }
        return 'it worked'; }""")
    assert message.startswith("QuireStoreError | The browser’s storage failed to save (DataCloneError"), message
    assert store_page.evaluate("QuireStore.library.keys('notes')") == []
    assert store_page.evaluate("QuireStore.library.usage()").get("notes", {"count": 0})["count"] == 0
    # the store still works afterwards
    store_page.evaluate("QuireStore.library.commit([['notes', 'a', 'fine']], [])")
    assert store_page.evaluate("QuireStore.library.get('notes', 'a')") == "fine"


def test_the_room_probe_answers_in_page_and_worker_and_leaves_nothing(store_page):
    files = """async () => { const d = await navigator.storage.getDirectory(); const out = {};
        for await (const [name, h] of d.entries()) out[name] = (await h.getFile()).size; return out; }"""
    assert store_page.evaluate("QuireStore.room(4 << 20)") is True
    assert store_page.evaluate(files) == {".quire-room": 0}
    in_worker = """n => new Promise((resolve, reject) => { const w = new Worker('room-worker.js');
        w.onmessage = e => { w.terminate(); resolve(e.data); }; w.onerror = e => reject(new Error(e.message));
        w.postMessage(n); })"""
    assert store_page.evaluate(in_worker, 4 << 20) is True
    assert store_page.evaluate(files) == {".quire-room": 0}
