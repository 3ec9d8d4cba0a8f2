"""QuireStore (site/assets/store-*.js) on its own, in real Chromium: a page that loads only its
parts, on its own origin, so its databases are the test's.

- The page and the engine's worker load the same parts in the same order (index.html and
  the build's engine script).
- A commit whose second value cannot be stored (the browser refuses it at once) lands none of
  its writes and fails with a message for a person.  (Before: the refusal escaped untranslated
  and the transaction committed the writes made before it.)
- The room probe answers in the page and in a worker, where it writes in place: nothing is
  left on the disk after it, and it never creates a file once the first one exists (making a
  file on a full disk fails with an InvalidStateError that cannot tell a full disk from
  anything else, so the probe could not answer when it was needed).
- A transaction whose connection closes before it finishes ends then: a write fails with a
  message (and marks the log torn), a read is read again.  (Before: Chromium's close after a
  full disk's I/O error left such a write waiting for ever, and the question that made it.)
"""

import re
import shutil
from pathlib import Path

import pytest

from quire_build.assemble import STORE_SCRIPTS

pytestmark = pytest.mark.browser

SITE = Path(__file__).resolve().parent.parent / "site"
# The parts, in the order the page loads them.
PARTS = re.findall(r'<script src="assets/(store-[a-z]+\.js)"></script>', (SITE / "index.html").read_text(encoding="utf-8"))
WORKER = ("importScripts(" + ", ".join(f"'{p}'" for p in PARTS) + ");"
          " onmessage = async e => postMessage(await QuireStore.room(e.data));")


def test_the_page_and_the_worker_load_the_same_parts_in_order():
    assert PARTS == ["store-db.js", "store-seal.js", "store-library.js", "store-tabs.js"]
    assert [p.removeprefix("assets/") for p in STORE_SCRIPTS] == PARTS


def store_site(root: Path) -> Path:
    """A page at ``root`` that loads only the store's parts (and a worker that asks for room)."""
    root.mkdir(parents=True, exist_ok=True)
    for part in PARTS:
        shutil.copy(SITE / "assets" / part, root / part)
    (root / "index.html").write_text('<!doctype html><meta charset="utf-8"><title>QuireStore</title>'
                                     '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">'
                                     + "".join(f'<script src="{p}"></script>' for p in PARTS), encoding="utf-8")
    (root / "room-worker.js").write_text(WORKER, encoding="utf-8")
    return root


@pytest.fixture
def store_page(tmp_path, serve, context):
    page = context.new_page()
    page.goto(serve(store_site(tmp_path / "site")).url)
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


def test_a_packed_commit_stores_each_text_and_byte_value_under_its_own_key(store_page):
    """The engine sends a commit as one JSON text and one buffer (py/quire/browser/idb.py):
    every byte value comes back as its own bytes, in order, texts as texts, deletes applied."""
    got = store_page.evaluate("""async () => {
        const L = QuireStore.library;
        await L.commit([['notes', 'gone', 'x']], []);
        const spec = {puts: [['notes', 'b1', null], ['notes', 't', '{"a": 1}'], ['notes', 'b2', null], ['notes', 'empty', null]],
                      deletes: [['notes', 'gone']], lengths: [3, 2, 0]};
        await L.commitPacked(JSON.stringify(spec), new Uint8Array([1, 2, 3, 250, 251]));
        const b1 = await L.get('notes', 'b1'), b2 = await L.get('notes', 'b2'), e = await L.get('notes', 'empty');
        return {b1: Array.from(b1), b2: Array.from(b2), empty: Array.from(e), t: await L.get('notes', 't'),
                keys: await L.keys('notes'), bytes: (await L.usage()).notes};
    }""")
    assert got == {"b1": [1, 2, 3], "b2": [250, 251], "empty": [], "t": '{"a": 1}', "keys": ["b1", "b2", "empty", "t"],
                   "bytes": {"count": 4, "bytes": 3 + 2 + 0 + 8}}


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


# A transaction kept busy (a chain of reads) while its connection gets a close event, then let
# go: Chromium closes a connection after another transaction's I/O error, and a transaction made
# on it just before then neither completed nor aborted (a question on a full disk waited for
# ever on its save).  Here the close is dispatched, so the transaction itself would still finish.
CLOSED_MIDWAY = """async (mode) => {
    const conn = QuireStore.connection({name: 'closing-' + mode, version: 1, stores: ['kv']});
    window.spinning = true;
    // The close comes once the transaction exists: a write first waits for the start to be
    // judged (store-tabs.js), so awaiting the connection alone can close it before that.
    let started;
    const running = new Promise(ok => { started = ok; });
    const out = QuireStore.run(conn, ['kv'], mode, t => new Promise(resolve => {
        started();
        const st = t.objectStore('kv');
        if (mode === 'readwrite') st.put('v', 'k');
        const spin = () => { st.get('k').onsuccess = e => window.spinning ? spin() : resolve(e.target.result || 'read'); };
        spin();
    }), mode === 'readwrite' ? 'save' : 'read its library');
    await running;
    const db = await conn.get();
    db.dispatchEvent(new Event('close'));
    // a retried read runs on the same (still open) connection: the close must not reach it
    window.spinning = false;
    try { return 'resolved: ' + await out; } catch (e) { return e.name + ' | ' + e.message; }
}"""


def test_a_write_whose_connection_closes_midway_fails_instead_of_waiting(store_page):
    message = store_page.evaluate(CLOSED_MIDWAY, "readwrite")
    assert message == ("QuireStoreError | The browser’s storage failed to save (UnknownError: the browser closed "
                       "the database connection before this write finished)"), message
    assert store_page.evaluate("QuireStore.torn()")  # Chromium closes after an I/O error: the log may be torn


def test_a_read_whose_connection_closes_midway_is_read_again(store_page):
    assert store_page.evaluate(CLOSED_MIDWAY, "readonly") == "resolved: read"


def test_usage_counters_stay_exact_for_commits_of_a_few_keys_and_of_many(store_page):
    # A commit reads the stored sizes of the keys it writes key by key when they are few, and a
    # bucket's sizes in one read when they are many (a Train of 5,000 notes): both ways, the
    # counters must still match what is stored.
    out = store_page.evaluate("""async () => {
        const L = QuireStore.library;
        await L.usage();  // the counters exist from here on
        const many = (n, tail) => Array.from({length: n}, (_, i) => ['notes', 'k' + i, 'x'.repeat(i % 7 + 1) + tail]);
        await L.commit(many(200, ''), []);
        await L.commit(many(100, 'yy'), [['notes', 'k150'], ['notes', 'k151'], ['notes', 'never-stored']]);
        await L.commit([['notes', 'k3', 'z'], ['notes', 'k199', 'zzzz']], [['notes', 'k160'], ['notes', 'k2']]);
        const all = await L.all('notes');
        return {counted: (await L.usage()).notes, count: all.length, bytes: all.reduce((n, kv) => n + kv[1].length, 0)};
    }""")
    assert out["count"] == 200 - 4
    assert out["counted"] == {"count": out["count"], "bytes": out["bytes"]}



# A bucket with many deletes (a Train deleting its staged originals) is deleted run by run with
# key ranges: every key between two deleted keys that is not deleted itself must stay, keys put in
# the same commit must land after the deletes, and the counters stay exact.  Firefox and WebKit
# run it too (tests/test_engines_many_sources.py).
RANGE_DELETES = """async () => {
        const L = QuireStore.library;
        await L.usage();
        const key = i => 'n' + String(i).padStart(4, '0');
        await L.commit(Array.from({length: 500}, (_, i) => ['notes', key(i), 'v' + i]), []);
        // every key but those divisible by 7, and a run kept whole (200-239); 'n0003' and 'n0400' put back
        const gone = [];
        for (let i = 0; i < 500; i++) if (i % 7 && !(i >= 200 && i < 240)) gone.push(['notes', key(i)]);
        gone.push(['notes', 'never-stored'], ['notes', 'n9999']);
        const spied = [];
        const real = IDBObjectStore.prototype.delete;
        IDBObjectStore.prototype.delete = function (k) { if (this.name === 'notes') spied.push(k instanceof IDBKeyRange); return real.call(this, k); };
        try {
          await L.commit([['notes', 'n0003', 'again'], ['notes', 'n0400', 'again'], ['notes', 'n0240x', 'new']], gone.reverse());
        } finally { IDBObjectStore.prototype.delete = real; }
        const all = await L.all('notes');
        return {keys: all.map(kv => kv[0]), again: all.filter(kv => kv[1] === 'again').map(kv => kv[0]),
                deletes: spied.length, ranges: spied.filter(Boolean).length,
                counted: (await L.usage()).notes, bytes: all.reduce((n, kv) => n + kv[1].length, 0)};
    }"""


def check_range_deletes(out: dict) -> None:
    key = "n{:04d}".format
    want = sorted({key(i) for i in range(500) if i % 7 == 0 or 200 <= i < 240} | {"n0003", "n0400", "n0240x"})
    assert out["keys"] == want
    assert out["again"] == ["n0003", "n0400"]
    # one delete per run between kept keys, not one per key: 423 keys deleted
    assert out["deletes"] < 100 and out["ranges"] == out["deletes"], out
    assert out["counted"] == {"count": len(want), "bytes": out["bytes"]}


def test_many_deletes_go_as_runs_and_delete_exactly_their_keys(store_page):
    check_range_deletes(store_page.evaluate(RANGE_DELETES))


def test_counters_of_the_older_kind_are_counted_again_once_and_replaced(store_page):
    # Before sizes were kept in groups, '\0totals' held the counts and every key had its own size
    # record.  Such a library is counted again by usage(), and its old records are gone after.
    out = store_page.evaluate("""async () => {
        const L = QuireStore.library;
        await L.commit([['notes', 'a', 'xx'], ['notes', 'b', 'yyyy']], []);
        const db = await new Promise((ok, fail) => { const r = indexedDB.open('quire.library');
            r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
        await new Promise((ok, fail) => { const t = db.transaction('_sizes', 'readwrite'); const s = t.objectStore('_sizes');
            s.clear(); s.put({notes: {count: 7, bytes: 70}}, '\\u0000totals'); s.put(2, 'notes\\u0000a'); s.put(4, 'notes\\u0000b');
            t.oncomplete = ok; t.onerror = () => fail(t.error); });
        await L.commit([['notes', 'c', 'zzz']], []);  // not counted yet: there are no counters of this kind
        const counted = (await L.usage()).notes;
        await L.commit([['notes', 'd', 'w']], [['notes', 'a']]);  // counted from here on
        const after = (await L.usage()).notes;
        const keys = await new Promise(ok => { const r = db.transaction('_sizes').objectStore('_sizes').getAllKeys(); r.onsuccess = () => ok(r.result); });
        db.close();
        return {counted, after, old: keys.filter(k => k === '\\u0000totals' || !k.includes('#') && k.startsWith('notes'))};
    }""")
    assert out["counted"] == {"count": 3, "bytes": 2 + 4 + 3}
    assert out["after"] == {"count": 3, "bytes": 4 + 3 + 1}
    assert out["old"] == []
