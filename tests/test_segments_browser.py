"""The segmented index in real Chromium (persistent profile): an old single-blob library is
migrated on open without loss (its vectors moved into the embedding cache), vectors come back
from IndexedDB on reopen, the storage counters match what is stored, and dead rows are
merged in the background."""

import pytest

from conftest import launch_profile, open_logged

pytestmark = pytest.mark.browser

WORDS = ["basalt", "granite", "gneiss", "schist", "marble", "slate"]
STAGE = """words => quire.stage(words.map(w => ({name: w + '.md', text: '# ' + w + '\\n' + w + ' is a rock. '
  + (w + ' forms layers. ').repeat(40)})))"""
ALL_FOUND = """async words => {
  for (const w of words) {
    const hits = await quire.search(w);
    if (!hits.length || hits[0].source !== w + '.md') return false;
  }
  return true;
}"""
PY = "(s) => window.quire.run(s)"

# Make the stored library look like one saved before segments: the whole index (with its
# vectors) as one value under "hybrid", and no embedding cache.
TO_OLD_FORMAT = """
import numpy as np
import quire.browser as b
lib, store = b._engine.library, b._engine.store
ids = sorted(lib.index.live_ids())
vecs = np.random.default_rng(3).normal(size=(len(ids), 8)).astype(np.float32)
lib.index.add_vectors(ids, vecs, "m-test")
old = lib.index.to_bytes()
await store.commit([("index", "hybrid", old)], [("index", k) for k in await store.keys("index")]
                   + [("vectors", k) for k in await store.keys("vectors")])
len(ids)
"""
STATE = """
import quire.browser as b
lib, store = b._engine.library, b._engine.store
keys = await store.keys("index")
{"keys": keys[:3], "hybrid": "hybrid" in keys, "vectors": len(await store.keys("vectors")),
 "dense": lib.index.dense.n_live, "model": lib.index.dense_model, "chunks": lib.index.n_chunks,
 "segments": len((await store.get("index", "manifest") or {"segments": []})["segments"])}
"""
# Every stored value counted the slow way, to check the counters commits keep.
RECOUNT = """async () => {
  const db = await new Promise((ok, fail) => { const r = indexedDB.open('quire.library');
    r.onsuccess = () => ok(r.result); r.onerror = () => fail(r.error); });
  const out = {};
  for (const name of Array.from(db.objectStoreNames).filter(n => n !== '_sizes')) {
    const values = await new Promise(ok => { const r = db.transaction(name).objectStore(name).getAll(); r.onsuccess = () => ok(r.result); });
    const bytes = values.reduce((n, v) => n + (typeof v === 'string' ? v.length : (v && v.byteLength) || 0), 0);
    if (values.length) out[name] = {count: values.length, bytes};
  }
  db.close();
  return out;
}"""


def wait_state(page, done, timeout: float = 90.0) -> dict:
    """Poll the engine's STATE until ``done(state)`` (wait_for_function does not await a promise).

    Each poll is an engine call, and what the tab does in the background (attaching the cached
    vectors, merging) waits until no call has run for 300 ms (site/engine/worker-quiet.js): polls
    closer together than that kept it waiting for ever on a busy machine, so they are a second apart."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        state = page.evaluate(PY, STATE)
        if done(state):
            return state
        assert time.monotonic() < deadline, f"gave up waiting; last state {state}"
        page.wait_for_timeout(1000)


def nonzero(usage: dict) -> dict:
    return {k: v for k, v in usage.items() if v["count"]}


def counted_and_recounted(page) -> tuple[dict, dict]:
    """The counters and a full count, taken with no commit between them: a commit in the
    background (a burst of progress actions is saved once edits pause) may land between the two
    reads, so they are read again until the counters were the same before and after the count
    (a commit writes its records and their counters in one transaction)."""
    for _ in range(100):
        before = nonzero(page.evaluate("quire._call('usage')"))
        recount = page.evaluate(RECOUNT)
        if nonzero(page.evaluate("quire._call('usage')")) == before:
            return before, recount
    raise AssertionError("the library never stopped changing for the length of a count")


def test_old_library_migrates_vectors_return_counters_hold_and_merge_runs(playwright_instance, built_dist, serve, tmp_path):
    url = serve(built_dist).url
    profile = tmp_path / "profile"
    ctx = launch_profile(playwright_instance, profile)
    page, _ = open_logged(ctx, url)
    page.evaluate(f"({STAGE})({WORDS!r}).then(() => quire.train())")
    n = page.evaluate(PY, TO_OLD_FORMAT)
    ctx.close()

    ctx = launch_profile(playwright_instance, profile)  # opens the old format: migrates, saves as segments
    page, log = open_logged(ctx, url)
    assert page.evaluate("quire.status().library.save") is True
    # The migration is saved in the background, once this tab holds the writer lock.
    state = wait_state(page, lambda s: not s["hybrid"] and s["segments"] == 1)
    assert state["vectors"] == state["dense"] == n and state["model"] == "m-test" and not state["hybrid"]
    assert page.evaluate(ALL_FOUND, WORDS)
    assert not log.errors, log.errors
    ctx.close()

    ctx = launch_profile(playwright_instance, profile)  # segments now: nothing to migrate, vectors from IndexedDB
    page, log = open_logged(ctx, url)
    assert page.evaluate("quire.status().library.save") is False
    # Keyword search answers at once; the cached vectors attach in the background.
    state = wait_state(page, lambda s: s["dense"] == n)
    assert state["dense"] == n == state["chunks"] and state["model"] == "m-test"
    assert page.evaluate(ALL_FOUND, WORDS)

    # The counters every commit keeps match a full count, after renames, removals and a Train.
    ids = {s["name"]: s["id"] for s in page.evaluate("quire.sources()")}
    page.evaluate("([a]) => quire.setCategory(a, 'Igneous')", [ids["basalt.md"]])
    page.evaluate(f"({STAGE})(['pumice']).then(() => quire.train())")
    for name in ("gneiss.md", "schist.md", "marble.md"):
        page.evaluate("(id) => quire.remove(id)", ids[name])
    counted, recounted = counted_and_recounted(page)
    assert counted == recounted

    # Three of seven sources removed: the worker merges the index once the tab is quiet.
    wait_state(page, lambda s: s["segments"] == 1)
    assert page.evaluate(ALL_FOUND, ["basalt", "granite", "slate", "pumice"])
    assert page.evaluate("quire.search('schist')") == []
    counted, recounted = counted_and_recounted(page)
    assert counted == recounted
    assert any("search index merged" in line for line in log.lines), log.lines[-5:]
    assert not log.errors, log.errors
    ctx.close()
