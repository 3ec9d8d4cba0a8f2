"""One writer at a time, in one tab and across tabs (real Chromium, persistent profile).

Two pages Train different files at once: every file of both is findable from both
pages without a reload.  Erase during a Train cancels it cleanly and says so.  A stored
index that lost a trained source is repaired when the library opens.
"""

import pytest

from conftest import launch_profile, open_logged, wait_until

pytestmark = pytest.mark.browser

ROCKS = ["basalt", "granite", "gneiss", "schist", "marble", "slate", "quartzite", "obsidian", "pumice",
         "andesite", "diorite", "gabbro", "peridotite", "rhyolite", "dacite"]
MINERALS = ["feldspar", "olivine", "pyroxene", "amphibole", "biotite", "muscovite", "calcite", "dolomite",
            "halite", "gypsum", "fluorite", "apatite", "corundum", "topaz", "beryl"]

STAGE = """words => quire.stage(words.map(w => ({name: w + '.md', text: '# ' + w + '\\n' + w + ' is described here in detail.'})))"""
TRAIN = """() => { window.trained = quire.train({onProgress: e => (window.events = window.events || []).push(e)})
  .then(r => r, e => ({error: e.message, kind: e.kind})); }"""
ALL_FOUND = """async words => {
  for (const w of words) {
    const hits = await quire.search(w);
    if (!hits.length || hits[0].source !== w + '.md') return false;
  }
  return true;
}"""


# The engine's worker as in a browser without Web Locks (Safari before 15.4, Firefox before 96):
# its navigator has no `locks`.  The worker is a blob: script; it is started from a small blob
# that removes them and then loads it (the page's CSP is bypassed for that import only).
NO_WEB_LOCKS_IN_THE_WORKER = """(() => {
  const Native = self.Worker;
  self.Worker = function (url, options) {
    const prelude = 'delete WorkerNavigator.prototype.locks; importScripts(' + JSON.stringify(String(url)) + ');';
    return new Native(URL.createObjectURL(new Blob([prelude], {type: 'text/javascript'})), options);
  };
  self.Worker.prototype = Native.prototype;
})();"""


@pytest.mark.parametrize("locks", ["web-locks", "lease"])
def test_two_tabs_train_at_once_and_both_find_everything(locks, playwright_instance, built_dist, serve, tmp_path):
    """Both tabs Train at once: one waits for the other, every file is trained once.  Where the
    browser has no Web Locks the tabs take turns through a lease in IndexedDB (worker-lease.js);
    before it, each tab only kept itself to one writer."""
    url = serve(built_dist).url
    ctx = launch_profile(playwright_instance, tmp_path / "profile", bypass_csp=locks == "lease")
    if locks == "lease":
        ctx.add_init_script(NO_WEB_LOCKS_IN_THE_WORKER)
    (a, log_a), (b, log_b) = open_logged(ctx, url), open_logged(ctx, url)
    leases = "async () => (await indexedDB.databases()).some(d => d.name === 'quire-writer-lease')"
    for page, words in ((a, ROCKS), (b, MINERALS)):  # both stage, then both Train at once
        page.evaluate(f"() => {{ window.staged = ({STAGE})({words!r}); }}")
    a.evaluate("window.staged")
    b.evaluate("window.staged")
    a.evaluate(TRAIN)
    b.evaluate(TRAIN)
    results = [a.evaluate("window.trained"), b.evaluate("window.trained")]
    assert not any("error" in r for r in results), results
    assert sum(r["added"] for r in results) == 30, results  # every file trained once, by one tab or the other
    waited = [e for p in (a, b) for e in p.evaluate("window.events || []") if e["stage"] == "waiting-other-tab"]
    assert waited and "another Quire tab" in waited[0]["message"]
    assert a.evaluate(leases) is (locks == "lease")  # the turns were taken the way this browser has
    # each page catches up with the other's change by itself (no reload)
    for page in (a, b):
        wait_until(page, f"({ALL_FOUND})({ROCKS + MINERALS!r})", every_ms=500)  # awaits the async check
        statuses = {s["name"]: s["status"] for s in page.evaluate("quire.sources()")}
        assert statuses == {f"{w}.md": "trained" for w in ROCKS + MINERALS}
    assert not log_a.errors and not log_b.errors, log_a.errors + log_b.errors
    ctx.close()


def test_erase_during_train_cancels_it_and_says_so(playwright_instance, built_dist, serve, tmp_path, pdf_dir):
    ctx = launch_profile(playwright_instance, tmp_path / "profile")
    page, log = open_logged(ctx, serve(built_dist).url)
    pdf = list((pdf_dir / "py-pdf-sample-files/GeoTopo-komprimiert.pdf").read_bytes())
    page.evaluate("bytes => quire.stage({name: 'GeoTopo.pdf', data: new Uint8Array(bytes)})", pdf)  # read first, slowly
    page.evaluate(f"({STAGE})({ROCKS!r})")
    page.evaluate(TRAIN)
    page.wait_for_function("() => (window.events || []).some(e => e.stage === 'extract')")
    erased = page.evaluate("quire.eraseAll()")
    trained = page.evaluate("window.trained")
    assert erased["erased"] is True
    assert erased["train"] == "cancelled", erased
    assert "cancelled" in erased["message"] and "nothing from it was saved" in erased["message"]
    assert trained["kind"] == "TrainCancelled" and "so that “Erase all knowledge” could run" in trained["error"], trained
    assert "TypeError" not in str(trained)
    assert page.evaluate("quire.sources()") == [] and page.evaluate("quire.search('basalt')") == []
    assert not log.errors, log.errors
    ctx.close()


# Would opening the stored library now repair anything?  (What a restart would find.)
SAVED = """
import quire.browser as b
from quire.library import Library
(await Library.open(b._engine.store, repair="memory")).repaired
"""


def test_a_stored_index_missing_a_source_is_repaired_on_open(playwright_instance, built_dist, serve, tmp_path):
    url = serve(built_dist).url
    profile = tmp_path / "profile"
    ctx = launch_profile(playwright_instance, profile)
    page, _ = open_logged(ctx, url)
    page.evaluate(f"({STAGE})({ROCKS[:3]!r}).then(() => quire.train())")
    # what two tabs overwriting each other's index left behind: a trained source not in it
    page.evaluate("""quire.run(`
import quire.browser as b
lib = b._engine.library
sid = next(s["id"] for s in lib.sources() if s["name"] == "granite.md")
lib.index.remove_source(sid)
await b._engine.store.commit([], [("index", "src:" + sid)])
`)""")
    assert page.evaluate("quire.search('granite')") == []
    ctx.close()

    ctx = launch_profile(playwright_instance, profile)
    page, log = open_logged(ctx, url)
    assert page.evaluate("quire.status().library.repaired") == ["granite.md"]
    assert page.evaluate(ALL_FOUND, ROCKS[:3])
    # The repair is saved in the background once this tab holds the writer lock: wait for it
    # (wait_for_function would not await the engine's promise).  The save waits until no call
    # has run for 300 ms (site/engine/worker-quiet.js): polls a second apart leave it that gap.
    for _ in range(90):
        if not page.evaluate("(s) => quire.run(s)", SAVED):
            break
        page.wait_for_timeout(1000)
    assert not page.evaluate("(s) => quire.run(s)", SAVED), "the repair was not saved"
    assert not log.errors, log.errors
    ctx.close()

    ctx = launch_profile(playwright_instance, profile)  # the repair was saved
    page, _ = open_logged(ctx, url)
    assert page.evaluate("quire.status().library.repaired") == []
    assert page.evaluate(ALL_FOUND, ROCKS[:3])
    ctx.close()


# The other tab's engine fails to load the next change once.
FLAKY_RELOAD = """
import quire.browser as b
from quire.errors import LibraryError
_reload_for_real = b.METHODS.own["reloadLibrary"]
flaky_left = [1]
def _flaky(engine, ctx):
    if flaky_left[0]:
        flaky_left[0] -= 1
        raise LibraryError("the library could not be read just now (test)")
    return _reload_for_real(engine, ctx)
b.METHODS.own["reloadLibrary"] = _flaky
"""


def test_a_tab_that_failed_to_load_another_tabs_change_tries_again(playwright_instance, built_dist, serve, tmp_path):
    """Tab A trains files; tab B hears of it, but loading the change fails once.  Before, B stayed
    stale until the next change (nothing else asked again); now it tries again, a little later each
    time, finds A's files, and keeps the error as quire.lastCatchUpError."""
    url = serve(built_dist).url
    ctx = launch_profile(playwright_instance, tmp_path / "profile")
    (a, log_a), (b, log_b) = open_logged(ctx, url), open_logged(ctx, url)
    a.evaluate(f"({STAGE})({ROCKS[:3]!r})")
    wait_until(b, "quire.sources().then(s => s.length === 3)")  # B caught up with the staging
    b.evaluate("(s) => quire.run(s)", FLAKY_RELOAD)
    a.evaluate(TRAIN)  # one change, announced once
    assert a.evaluate("window.trained")["added"] == 3
    wait_until(b, f"({ALL_FOUND})({ROCKS[:3]!r})", every_ms=300)
    assert b.evaluate("(s) => quire.run(s)", "import __main__; __main__.flaky_left[0]") == 0  # it did fail once
    assert "could not be read just now" in b.evaluate("quire.lastCatchUpError")
    assert not log_a.errors and not log_b.errors, log_a.errors + log_b.errors
    ctx.close()


# The writer lease of a tab that is gone: its record in IndexedDB (worker-lease.js), with its
# last heartbeat at `beat` (ms since the epoch).
PUT_FOREIGN_HOLDER = """(beat) => new Promise((resolve, reject) => {
  const req = indexedDB.open('quire-writer-lease', 1);
  req.onupgradeneeded = () => req.result.createObjectStore('lease');
  req.onsuccess = () => {
    const db = req.result, tx = db.transaction('lease', 'readwrite');
    tx.objectStore('lease').put({holders: {'closed-tab:1': {mode: 'exclusive', beat}}}, 'quire.library');
    tx.oncomplete = () => { db.close(); resolve(true); };
    tx.onerror = () => reject(tx.error);
  };
  req.onerror = () => reject(req.error);
})"""
HOLDERS = """() => new Promise((resolve, reject) => {
  const req = indexedDB.open('quire-writer-lease', 1);
  req.onsuccess = () => {
    const get = req.result.transaction('lease').objectStore('lease').get('quire.library');
    get.onsuccess = () => { resolve(Object.keys((get.result || {holders: {}}).holders)); req.result.close(); };
    get.onerror = () => reject(get.error);
  };
  req.onerror = () => reject(req.error);
})"""


def test_without_web_locks_a_closed_tabs_lease_is_taken_over_once_it_stops_beating(
        playwright_instance, built_dist, serve, tmp_path):
    """A tab that held the writer lease was closed mid-Train, so it never gave the lease back.
    While its heartbeat is fresh, a Train here waits and says another tab is training; once
    the closed tab has not been heard from for 30 s (worker-lease.js STALE), the Train takes
    the lease over and finishes, and the closed tab's record is gone."""
    ctx = launch_profile(playwright_instance, tmp_path / "profile", bypass_csp=True)
    ctx.add_init_script(NO_WEB_LOCKS_IN_THE_WORKER)
    page, log = open_logged(ctx, serve(built_dist).url)
    page.evaluate(f"({STAGE})({ROCKS[:3]!r})")
    # Its last heartbeat in the future: it stays "alive" however slow this machine is.
    page.evaluate(PUT_FOREIGN_HOLDER, 10 ** 13)
    page.evaluate(TRAIN)
    wait_until(page, "(window.events || []).some(e => e.stage === 'waiting-other-tab')")
    assert page.evaluate("quire.sources()")[0]["status"] == "staged"
    # Now it was last heard from 31 s ago: its tab is gone.
    page.evaluate(f"() => ({PUT_FOREIGN_HOLDER})(Date.now() - 31000)")
    trained = page.evaluate("window.trained")
    assert trained.get("added") == 3, trained
    assert "closed-tab:1" not in page.evaluate(HOLDERS)
    assert not log.errors, log.errors
    ctx.close()
