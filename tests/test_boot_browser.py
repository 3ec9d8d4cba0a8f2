"""The built bundle boots in real Chromium: over http, from file://, offline, and fails helpfully."""

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, LEAN_BUILD, copy_dist, wait_ready, wait_until, with_test_hooks

from boot_probes import CALLS_WHILE_LOADING, NUMPY_LIBS_NOT_LINKED_AHEAD

pytestmark = pytest.mark.browser

NUMPY_PROBE = "import numpy as np\nfloat(np.linalg.norm(np.array([3.0, 4.0])) + np.arange(10).sum())"
DENSE_PROBE = """
import numpy as np
from quire.retrieval import kernels
from quire.retrieval.dense import DenseIndex
rng = np.random.default_rng(7)
m = rng.standard_normal((1003, 771)).astype(np.float32)
q = rng.standard_normal(771).astype(np.float32)
index = DenseIndex()
index.add(list(range(1003)), m)
hits = index.search(q, k=5)
unit = m / np.linalg.norm(m, axis=1, keepdims=True)
expect = np.argsort(-(unit.astype(np.float64) @ (q / np.linalg.norm(q))))[:5].tolist()
{"backend": kernels.backend(), "hits": [i for i, _ in hits], "expect": expect,
 "max_diff": float(np.abs(kernels.matvec(m, q) - (m.astype(np.float64) @ q)).max())}
"""


def open_page(context, url, page_log):
    """A page at ``url`` with the test hooks (``quire.run``), its console in ``page_log``."""
    page = page_log.attach(context.new_page())
    page.set_default_timeout(90_000)
    page.goto(with_test_hooks(url))
    return page


def assert_clean(page_log):
    assert not page_log.errors, "browser console had errors:\n" + "\n".join(page_log.errors)


def assert_engine_works(page, mode):
    status = wait_ready(page)
    assert status["stage"] == "ready" and status["mode"] == mode
    assert status["versions"]["python"].startswith("3.12") and status["versions"]["numpy"] == "2.0.2"
    assert page.evaluate("(src) => window.quire.run(src)", NUMPY_PROBE) == 50.0
    assert page.get_by_test_id("boot-progress").get_attribute("aria-valuenow") == "100"
    assert page.get_by_test_id("engine-badge").inner_text() == "Engine ready"
    for stage in ("shell", "download", "pyodide", "numpy", "wheels", "quire", "ready"):
        assert stage in status["timings"], f"stage {stage} never reported"
    return status


def assert_dynlibs_compiled_ahead(status, page_log):
    """numpy's shared libraries were compiled while the snapshot was restored, not by dlopen in
    the middle of `import numpy` (in WebKit a synchronous compile waits seconds for its compiler
    threads); the worker names any library the build's list (BOOT_DYNLIBS) missed."""
    assert "dynlibs-linked" in status["marks"]
    assert status["marks"]["dynlibs-linked"] <= status["marks"]["numpy-imported"]
    late = [line for line in page_log.lines if "not compiled ahead" in line or "ahead failed" in line]
    assert not late, late


def test_boots_over_http(context, built_dist, serve, page_log):
    server = serve(built_dist)
    page = open_page(context, server.url, page_log)
    assert_engine_works(page, "http")
    # scikit-learn arrives in the background, after the engine is ready.
    assert page.evaluate("window.quire.sklearnReady").startswith("1.6.1")
    assert page.evaluate("(s) => window.quire.run(s)", "import sklearn; sklearn.__version__") == "1.6.1"
    status = page.evaluate("window.quire.status()")
    assert status["timings"]["sklearn"] > status["timings"]["ready"]
    # numpy's other libraries (numpy.random, numpy.fft), which scipy and scikit-learn import,
    # were compiled ahead too: none was left to a synchronous compile in dlopen.
    assert "other-dynlibs-linked" in status["marks"]
    assert page.evaluate("(s) => window.quire.run(s)", NUMPY_LIBS_NOT_LINKED_AHEAD) == []
    assert_clean(page_log)


def test_scikit_learn_loads_only_once_study_asks_for_it(context, built_dist, serve, page_log):
    """scipy and scikit-learn cost 8-10 s of the machine's CPU (15-30 s on a busy one) and were
    loaded in every tab right after ready, used or not.  Now a tab does its own work after ready
    (the services, every passage read) and leaves them out; opening Study asks for them, so they
    are there by the time a tool is picked."""
    page = open_page(context, serve(built_dist).url, page_log)
    wait_ready(page)
    page.evaluate("() => quire.backgroundDone()")  # all a tab does by itself after ready
    status = page.evaluate("window.quire.status()")
    assert status["sklearn"] == "pending" and "passages-read" in status["marks"], status
    assert not any(m.startswith("imported ") or m.startswith("loaded ") for m in status["marks"]), status["marks"]
    page.evaluate("() => { location.hash = '#about'; }")
    facts = page.get_by_test_id("engine-facts").inner_text()
    assert "loads when Study is opened" in facts, facts
    page.evaluate("() => { location.hash = '#study'; }")  # no Generate pressed
    page.wait_for_function("() => window.quire.status().sklearn === 'ready'")
    assert page.evaluate("(s) => window.quire.run(s)", "import sklearn, sys; 'scipy.stats' in sys.modules") is True
    page.evaluate("() => { location.hash = '#about'; }")
    assert "1.6.1 / scipy 1.14.1" in page.get_by_test_id("engine-facts").inner_text()
    assert_clean(page_log)


def test_scikit_learn_loads_in_steps_beside_calls_and_a_call_that_never_settles(context, built_dist, serve, page_log):
    """scipy and scikit-learn took the engine's thread for 4 s on a quiet machine and 16-27 s on
    a busy one, in one piece, so a passage clicked meanwhile opened that much later.  They now load
    in steps (the packages, then one module at a time), and calls made meanwhile are answered between the steps; a
    call that never settles (the engine waited for a quiet moment) no longer holds them back."""
    page = open_page(context, serve(built_dist).url, page_log)
    wait_ready(page)
    out = page.evaluate(CALLS_WHILE_LOADING)
    assert out["why"] is None, out
    imports = sorted(v for k, v in out["marks"].items() if k.startswith("imported "))
    loads = sorted(v for k, v in out["marks"].items() if k.startswith("loaded "))
    # In pieces (worker-study-order.js): a module at a time once its parent is in, not the 17
    # packages named in worker-lazy.js, each with everything its __init__ imports (scikit-learn's
    # was one step of about 2.5 s of the engine's thread); none of the pieces failed to import.
    assert len(imports) >= 50 and len(loads) == 1, out["marks"]
    assert "imported sklearn.utils._param_validation" not in out["marks"]  # came with its parent
    assert {"imported joblib", "imported scipy.stats", "imported sklearn"} <= set(out["marks"]), out["marks"]
    assert not [line for line in page_log.lines if "ahead failed" in line]
    # Calls were answered between the first package loaded and the last module imported.
    between = [t for t in out["answered"] if loads[0] < t < imports[-1]]
    assert between, out
    # The packages were unpacked in steps too (quire.unpack), with calls answered between them.
    unpacked = [f"unpacked {p}" for p in ("openblas", "scipy", "joblib", "threadpoolctl", "scikit-learn", "sqlite3")]
    assert set(unpacked) <= set(out["marks"]), out["marks"]
    assert [t for t in out["answered"] if out["marks"]["unpacking"] < t < out["marks"]["unpacked scikit-learn"]], out
    # KMeans and what it imports follow, after the study tools were reported ready.
    page.wait_for_function("() => window.quire.status().marks['sklearn-imported']")
    assert page.evaluate("(s) => window.quire.run(s)", "import sys; 'sklearn.cluster' in sys.modules") is True
    assert_clean(page_log)


def test_boots_from_disk_with_no_server(context, built_dist, tmp_path, page_log):
    """A copy of dist/ in another folder (a USB stick) opened from file://."""
    stick = copy_dist(built_dist, tmp_path / "usb stick" / "Quire")
    page = open_page(context, (stick / "index.html").as_uri(), page_log)
    status = assert_engine_works(page, "file")
    # The same fast path as over http: the snapshot, and dense search on the SIMD kernel.
    assert "snapshot-restored" in status["marks"] and status["versions"]["dense_kernel"] == "wasm-simd"
    assert_dynlibs_compiled_ahead(status, page_log)
    probe = page.evaluate("(s) => window.quire.run(s)", DENSE_PROBE)
    assert probe["backend"] == "wasm-simd" and probe["hits"] == probe["expect"]
    assert_clean(page_log)


def test_engine_starts_from_the_snapshot_and_searches_with_simd(context, built_dist, serve, page_log):
    """The build's memory snapshot is what the engine starts from, and dense search runs on
    the WebAssembly SIMD kernel with numpy's answers."""
    page = open_page(context, serve(built_dist).url, page_log)
    status = assert_engine_works(page, "http")
    assert "snapshot-restored" in status["marks"], "the engine did not start from the memory snapshot"
    assert status["versions"]["dense_kernel"] == "wasm-simd"
    assert_dynlibs_compiled_ahead(status, page_log)
    probe = page.evaluate("(s) => window.quire.run(s)", DENSE_PROBE)
    assert probe["backend"] == "wasm-simd" and probe["hits"] == probe["expect"]
    assert probe["max_diff"] < 1e-3
    assert "WebAssembly SIMD kernel" in page.get_by_test_id("engine-facts").inner_text()
    assert_clean(page_log)


def test_a_damaged_snapshot_falls_back_to_an_ordinary_start(context, built_dist, tmp_path, page_log):
    dist = copy_dist(built_dist, tmp_path / "dist")
    victim = dist / "assets/pack/pyodide-snapshot.bin.js"
    body = bytearray(victim.read_bytes())
    i = len(body) // 2 & ~1
    body[i] ^= 0x01  # one payload character changes: the checksum no longer matches
    victim.write_bytes(bytes(body))
    page = open_page(context, (dist / "index.html").as_uri(), page_log)
    status = assert_engine_works(page, "file")
    assert "snapshot-restored" not in status["marks"]
    assert any("memory snapshot failed" in line and "ordinary way" in line for line in page_log.lines)
    assert_dynlibs_compiled_ahead(status, page_log)  # the damaged file does not hold them back
    assert_clean(page_log)


def test_a_bundle_built_without_node_boots_the_ordinary_way(context, tmp_path, page_log):
    """What a machine without Node.js builds: no snapshot, no .pyc files; Python starts as usual."""
    import build

    dist = tmp_path / "dist"
    assert build.main(["--dist", str(dist), *LEAN_BUILD, "--no-precompile"]) == 0
    bundle = json.loads((dist / "assets/bundle.js").read_text().removeprefix("self.QUIRE_BUNDLE = ").rstrip().rstrip(";"))
    assert bundle["snapshot"] is None
    page = open_page(context, (dist / "index.html").as_uri(), page_log)
    status = assert_engine_works(page, "file")
    assert "snapshot-restored" not in status["marks"] and status["versions"]["dense_kernel"] == "wasm-simd"
    assert not any("memory snapshot failed" in line for line in page_log.lines)
    assert_clean(page_log)


def test_run_reports_python_errors(context, built_dist, serve, page_log):
    page = open_page(context, serve(built_dist).url, page_log)
    wait_ready(page)
    message = page.evaluate("(s) => window.quire.run(s).then(() => 'no error', e => e.message)", "1/0")
    assert "ZeroDivisionError" in message
    assert page.evaluate("(s) => window.quire.run(s)", "{'a': [1, 2], 'b': None}") == {"a": [1, 2], "b": None}


def test_a_normal_page_has_no_run_hook(context, built_dist, serve, page_log):
    """quire.run runs any Python in the engine: a hook for tests, only in a page opened with
    ?test-hooks (as every other test here opens it).  A normal page has no such method, and its
    engine refuses the call even when it is made through the call pipeline itself."""
    page = page_log.attach(context.new_page())
    page.goto(serve(built_dist).url)
    wait_ready(page)
    assert page.evaluate("'run' in window.quire") is False
    refused = page.evaluate("window.quire._call('run', ['1 + 1']).then(v => 'ran: ' + v, e => e.kind + ': ' + e.message)")
    assert refused.startswith("LibraryError: unknown method 'run'"), refused
    assert page.evaluate("window.quire.search('anything')") == []  # the engine answers the rest as before
    # One call pipeline: no api*.js file wraps or replaces quire._call (boot-calls.js).
    assert page.evaluate("window.quire._call === QuireBoot.calls.call") is True
    assert_clean(page_log)


@pytest.mark.service_worker
def test_works_offline_after_the_first_visit(context, built_dist, serve, page_log):
    server = serve(built_dist)
    page = open_page(context, server.url, page_log)
    wait_ready(page)
    cached = page.evaluate("""async () => {
        await navigator.serviceWorker.ready;
        if (!navigator.serviceWorker.controller)
          await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
        const keys = await caches.keys();
        const cache = await caches.open(keys[0]);
        return {keys, count: (await cache.keys()).length};
    }""")
    manifest = json.loads((built_dist / "manifest.json").read_text())
    assert len(cached["keys"]) == 1 and cached["keys"][0].endswith(manifest["build"])
    assert cached["count"] == len(manifest["files"])  # every file but sw.js, plus "./"
    server.stop()
    context.set_offline(True)
    page.reload()
    assert_engine_works(page, "http")
    # The study tools load only when asked, so offline they come from the cache too.
    assert page.evaluate("async () => await quire.studyToolsReady()").startswith("1.6.1")
    assert_clean(page_log)


@pytest.mark.service_worker
def test_a_browser_without_room_for_the_offline_copy_says_so_and_a_reload_with_room_keeps_it(context, built_dist, serve,
                                                                                              page_log):
    """A browser whose room for the site is smaller than the bundle (210 MB): the service worker's
    copy fails, the half copy goes, and the page says why and what to do, in a banner and in the
    status list; with room again, a reload keeps the copy.  (Before: nothing was said, and the
    page just needed its server every time.)"""
    server = serve(built_dist)
    page = context.new_page()
    page_log.attach(page)
    cdp = context.new_cdp_session(page)
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": server.url.rstrip("/"), "quotaSize": 30 * 1024 * 1024})
    page.goto(server.url)
    wait_ready(page)
    banner = page.get_by_test_id("offline-banner")
    banner.wait_for(state="visible")
    text = page.get_by_test_id("offline-banner-text").inner_text()
    size = sum(a["size"] for a in page.evaluate("Object.values(QUIRE_BUNDLE.assets)"))
    assert text.startswith("Quire could not keep its offline copy: this browser has less room for this site than the "
                           "copy needs (") and "free space on the disk and reload" in text, text
    assert f"({size / 1e6:.1f} MB)" in text, (text, size)
    assert page.evaluate("quire.status().serviceWorker") == "no-room"
    assert page.evaluate("caches.keys()") == []  # the half copy is not left behind
    assert page.evaluate("navigator.serviceWorker.controller") is None
    page.get_by_test_id("offline-banner-close").click()
    assert banner.is_hidden()
    # Room again: a reload keeps the copy, and the banner does not come back.
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": server.url.rstrip("/")})
    page.reload()
    wait_ready(page)
    page.evaluate("""async () => { await navigator.serviceWorker.ready;
        if (!navigator.serviceWorker.controller)
          await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true})); }""")
    assert len(page.evaluate("caches.keys()")) == 1 and banner.is_hidden()
    assert [e for e in page_log.errors if "offline copy" not in e] == [], page_log.errors


@pytest.mark.service_worker
def test_a_new_build_is_offered_and_old_caches_removed(context, built_dist, tmp_path, serve, page_log):
    dist = copy_dist(built_dist, tmp_path / "dist")
    server = serve(dist)
    page = open_page(context, server.url, page_log)
    wait_ready(page)
    page.evaluate("navigator.serviceWorker.ready")
    old = page.evaluate("caches.keys()")
    # A new build: a different build id means a new service worker script.
    sw = (dist / "sw.js").read_text()
    build_id = re.search(r"var BUILD = '(\w+)'", sw).group(1)
    (dist / "sw.js").write_text(sw.replace(build_id, "feedfacefeedface"))
    page.reload()
    wait_ready(page)
    banner = page.get_by_test_id("update-banner")
    banner.wait_for(state="visible")
    assert "newer version" in banner.inner_text()
    with page.expect_navigation():
        page.get_by_test_id("update-reload").click()
    wait_ready(page)
    wait_until(page, "caches.keys().then(k => k.length === 1)")
    keys = page.evaluate("caches.keys()")
    assert keys != old and keys[0].endswith("feedfacefeedface")
    assert page.get_by_test_id("update-banner").is_hidden()
    assert_clean(page_log)


def test_indexeddb_survives_a_browser_restart(playwright_instance, built_dist, serve, tmp_path):
    """Playwright's default context is ephemeral: this one has a real profile on disk."""
    server = serve(built_dist)
    profile = tmp_path / "profile"
    value = {"note": "Käsekuchen", "n": 42}
    for round_ in ("write", "read"):
        ctx = playwright_instance.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = ctx.new_page()
        page.goto(server.url)
        wait_ready(page)
        if round_ == "write":
            page.evaluate("(v) => window.quire.kv.set('probe', v)", value)
        else:
            assert page.evaluate("window.quire.kv.get('probe')") == value
            names = page.evaluate("indexedDB.databases().then(d => d.map(x => x.name))")
            assert names and all(n.startswith("quire.") for n in names)
        ctx.close()


def test_csp_blocks_requests_outside_the_bundle(context, built_dist, serve, page_log):
    page = open_page(context, serve(built_dist).url, page_log)
    wait_ready(page)
    outcome = page.evaluate("""async () => {
        const tries = {};
        for (const url of ['http://example.com/x', 'https://example.com/x', 'http://127.0.0.1:9/x', 'http://localhost:11434/api/version']) {
          try { await fetch(url); tries[url] = 'fetched'; } catch (e) { tries[url] = e.message; }
        }
        return tries;
    }""")
    # Refused by CSP (no request leaves) vs allowed-but-nobody-listening (the LLM port).
    assert outcome["http://example.com/x"] == "Failed to fetch"
    assert outcome["https://example.com/x"] == "Failed to fetch"
    assert outcome["http://127.0.0.1:9/x"] == "Failed to fetch"
    violations = [line for line in page_log.errors if "Content Security Policy" in line]
    assert any("Connecting to 'http://example.com/x'" in v for v in violations)
    assert any("Connecting to 'https://example.com/x'" in v for v in violations)
    assert any("Connecting to 'http://127.0.0.1:9/x'" in v for v in violations)
    assert not any("Connecting to 'http://localhost:11434" in v for v in violations)


# ---------------------------------------------------------------- failures

def error_shown(page):
    box = page.get_by_test_id("boot-error")
    box.wait_for(state="visible")
    rejected = page.evaluate("window.quire.ready.then(() => null, e => e.message)")
    return box.inner_text(), rejected


def test_a_missing_asset_says_the_copy_is_incomplete(context, built_dist, tmp_path, page_log):
    dist = copy_dist(built_dist, tmp_path / "dist")
    victim = next((dist / "assets/pack/images").glob("numpy-*.js"))
    victim.unlink()
    page = open_page(context, (dist / "index.html").as_uri(), page_log)
    text, rejected = error_shown(page)
    assert "Part of Quire is missing" in text and victim.name in text and "copy the whole dist/ folder" in text.lower()
    assert rejected and "missing" in rejected


def test_the_page_refuses_to_run_without_its_privacy_lock(context, built_dist, tmp_path, page_log):
    dist = copy_dist(built_dist, tmp_path / "dist")
    (dist / "assets/csp.js").unlink()
    page = open_page(context, (dist / "index.html").as_uri(), page_log)
    text, rejected = error_shown(page)
    assert "Part of Quire is missing" in text and "assets/csp.js" in text


def test_a_damaged_asset_is_caught_by_its_checksum(context, built_dist, tmp_path, page_log):
    dist = copy_dist(built_dist, tmp_path / "dist")
    victim = next((dist / "assets/pack").rglob("pypdf-*.js"))
    body = bytearray(victim.read_bytes())
    i = len(body) // 2
    body[i] = ord("A") if body[i] != ord("A") else ord("B")
    victim.write_bytes(bytes(body))
    page = open_page(context, (dist / "index.html").as_uri(), page_log)
    text, rejected = error_shown(page)
    assert "Part of Quire is damaged" in text and "pypdf" in text and "checksum" in text


def test_no_webassembly_is_explained(context, built_dist, page_log):
    # What a browser with WebAssembly switched off (by policy or a hardened mode) looks like.
    context.add_init_script("delete globalThis.WebAssembly;")
    page = open_page(context, (built_dist / "index.html").as_uri(), page_log)
    text, rejected = error_shown(page)
    assert "cannot run Quire’s engine" in text and "WebAssembly" in text
    assert "WebAssembly" in rejected


def test_refused_storage_is_explained(context, built_dist, page_log):
    # What a browser does in a locked-down profile: indexedDB.open throws.
    context.add_init_script("""
        IDBFactory.prototype.open = function () {
          throw new DOMException('The user denied permission to access the database.', 'SecurityError');
        };""")
    page = open_page(context, (built_dist / "index.html").as_uri(), page_log)
    text, rejected = error_shown(page)
    assert "refused local storage" in text and "SecurityError" in text and "private" in text
