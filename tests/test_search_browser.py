"""Search in real Chromium: hybrid results through the Ollama-speaking stub, the same results
after a browser restart, one-click re-embedding, and keyword-only search with no server."""

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, hold, release, wait_ready
from ollama_server import OllamaStub
from quire.model import chunk_id, parse_chunk_id

pytestmark = pytest.mark.browser

DOCS = [
    {"name": "cells.md", "text": "# Cells\nThe powerhouse of the cell: mitochondria make ATP.\n\n# Membranes\nThe membrane decides what enters the cell."},
    {"name": "rocks.md", "text": "# Rocks\nBasalt forms when lava cools quickly at the surface.\n\n# Granite\nGranite cools slowly underground."},
    {"name": "ISO.md", "text": "# Standards\nISO-9001 audits check the quality system; error 404B means the page moved."},
]
QUERIES = ["the powerhouse of the cell: mitochondria make ATP", "ISO-9001", "404B", "granite cools slowly"]


def launch(playwright_instance, profile, stub_url):
    ctx = playwright_instance.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    ctx.add_init_script(f"localStorage.setItem('quire.llm.url', '{stub_url}')")
    page = ctx.new_page()
    page.set_default_timeout(120_000)
    return ctx, page


def ranked(page):
    return [[(h["chunk_id"], h["dense_rank"] is not None) for h in page.evaluate("(q) => quire.search(q, {k: 5})", q)] for q in QUERIES]


def test_hybrid_search_is_the_same_after_a_restart(playwright_instance, built_dist, serve, tmp_path):
    server = serve(built_dist)
    with OllamaStub() as stub:
        ctx, page = launch(playwright_instance, tmp_path / "profile", stub.url)
        page.goto(server.url)
        wait_ready(page)
        page.evaluate("(url) => quire.saveSettings({url, embed_model: 'embeddinggemma'})", stub.url)
        page.evaluate("(docs) => quire.stage(docs)", DOCS)
        counts = page.evaluate("quire.train()")
        assert counts["added"] == 3 and counts["embeddings"]["embedded"] == counts["embeddings"]["total"] > 0
        first = ranked(page)
        assert first[0][0] == (first[0][0][0], True)  # meaning-based rank present for the top hit
        assert page.evaluate("quire.search('ISO-9001')")[0]["source"] == "ISO.md"
        assert page.evaluate("quire.search('404B')")[0]["source"] == "ISO.md"
        # The inspector in the page shows both retrievers' ranks.
        page.goto(server.url + "#search")
        wait_ready(page)
        page.get_by_test_id("embedding-status").get_by_text("by meaning").wait_for()
        page.get_by_test_id("search-input").fill(QUERIES[0])
        page.get_by_test_id("search-button").click()
        page.get_by_test_id("inspector-toggle").check()
        top = page.get_by_test_id("search-hit").first
        assert top.get_by_test_id("dense").inner_text().startswith("#")
        assert top.get_by_test_id("bm25").inner_text().startswith("#")
        assert "meaning" in page.get_by_test_id("search-note").inner_text()
        ctx.close()

        embeds_before = sum(stub.embed_counts.values())
        ctx, page = launch(playwright_instance, tmp_path / "profile", stub.url)
        page.goto(server.url)
        wait_ready(page)
        assert ranked(page) == first
        # Reopening recomputed nothing: only the 4 queries were embedded.
        assert sum(stub.embed_counts.values()) - embeds_before == len(QUERIES)

        # Switching the embedding model offers a one-click re-embed with progress.
        page.evaluate("quire.saveSettings({embed_model: 'all-minilm'})")
        page.goto(server.url + "#search")
        wait_ready(page)
        page.get_by_test_id("embed-button").click()
        page.get_by_test_id("embedding-status").get_by_text("by meaning (all-minilm)").wait_for()
        assert page.evaluate("quire.embeddingStatus()")["missing"] == 0
        ctx.close()


def test_without_a_model_server_or_the_tab_embedder_search_is_keyword_only_and_says_so(context, built_dist, serve, page_log):
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url + "#search")
    wait_ready(page)
    # As a bundle built with --no-embedder tells the engine (boot.js); with the embedder the tab
    # embeds by itself after Train (tests/test_embed_in_tab_browser.py), unless the person chose
    # keywords only, as this suite's pages do (tests/conftest.py).
    page.evaluate("quire._call('tabEmbedder', [false, false])")
    page.evaluate("(docs) => quire.stage(docs).then(() => quire.train())", DOCS)
    hits = page.evaluate("quire.search('basalt lava')")
    assert hits[0]["source"] == "rocks.md" and all(h["dense_rank"] is None for h in hits)
    assert "Keyword search only" in page.get_by_test_id("embedding-status").inner_text()
    # The number on a hit is how much of the query it matches, the same scale for every query.
    page.get_by_test_id("search-input").fill("basalt lava")
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("inspector-toggle").check()
    top = page.get_by_test_id("search-hit").first
    top.wait_for()
    assert top.get_by_test_id("hit-relevance").inner_text() == "matches 100% of the query"
    assert top.get_by_test_id("dense").inner_text() == "off: no embeddings for this library"
    # Few of the words found anywhere: the page says so instead of presenting the closest hit as a match.
    page.get_by_test_id("search-input").fill("Which volcano eruption made the magma that cools?")
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("search-note").get_by_text("No passage matches these words well").wait_for()


def test_only_the_newest_search_is_shown_when_an_older_answer_comes_later(context, built_dist, serve, page_log):
    # A search waits for the embedding server, and that wait varies: the answer to "basalt" could
    # arrive after the answer to "mitochondria" and replace it under the newer words in the box.
    page = page_log.attach(context.new_page())
    page.set_default_timeout(120_000)
    page.goto(serve(built_dist).url + "#search")
    wait_ready(page)
    page.evaluate("(docs) => quire.stage(docs).then(() => quire.train())", DOCS)
    hold(page, "search", asked_now=True)
    for words in ("basalt lava", "mitochondria ATP"):
        page.get_by_test_id("search-input").fill(words)
        page.get_by_test_id("search-button").click()
    release(page, "search", 1)
    release(page, "search", 0)
    sources = page.eval_on_selector_all('[data-testid="search-hit"]', "hs => hs.map(h => h.textContent)")
    assert sources and "mitochondria" in sources[0] and not any("Basalt" in s for s in sources[:1])
    assert page.get_by_test_id("search-results").get_attribute("aria-busy") is None
    # a search still out when everything is erased does not refill the emptied view
    page.get_by_test_id("search-input").fill("granite")
    page.get_by_test_id("search-button").click()
    page.wait_for_function("() => window.held.search.length === 3")
    page.evaluate("quire.eraseAll()")
    release(page, "search", 2)
    assert page.get_by_test_id("search-hit").count() == 0 and page.get_by_test_id("search-input").input_value() == ""
    assert not page_log.errors, page_log.errors


# Chunk ids the page may meet, and some it should never meet, read by both parsers.
CHUNK_IDS = [chunk_id("3f9a0c1d2e3f4a5b", 12), chunk_id("3f9a0c1d2e3f4a5b-again", 0), chunk_id("a:b", 7), "notes",
             "s1:", "s1:x", "s1:-1", ":4", "a:b:c", ""]


def test_the_page_reads_chunk_ids_as_the_engine_does(context, built_dist, serve, page_log):
    page = page_log.attach(context.new_page())
    page.goto(serve(built_dist).url)
    wait_ready(page)
    got = page.evaluate("ids => ids.map(id => QuirePassage.parseId(id))", CHUNK_IDS)
    assert [(p["source_id"], p["n"]) for p in got] == [parse_chunk_id(c) for c in CHUNK_IDS]
    assert not page_log.errors, page_log.errors
