"""Dense search through a model server: embedding cache per (chunk hash, model), hybrid hits,
model switches, cancel, and keyword-only search when no server answers."""

import asyncio

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.training import TrainCancelled
from quire.llm.transport import BlockingAsyncTransport
from quire.store import MemoryStore

DOCS = {
    "cells.md": "# Cells\nMitochondria are the powerhouse of the cell and make ATP.\n\n# Membranes\nThe membrane controls what enters.",
    "rocks.md": "# Rocks\nBasalt forms when lava cools quickly at the surface.",
}


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


async def open_with(stub, model="embeddinggemma"):
    q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport())
    await q.llm.save({"url": stub.url, "embed_model": model})
    return q


def embedded(stub, model="embeddinggemma"):
    """Texts the stub embedded with ``model`` (any tag)."""
    return sum(n for name, n in stub.embed_counts.items() if name.split(":")[0] == model)


def run(coro):
    return asyncio.run(coro)


def test_train_embeds_each_passage_once_and_search_turns_hybrid(stub):
    async def go():
        q = await open_with(stub)
        for name, text in DOCS.items():
            await q.stage(name, text.encode())
        counts = await q.train()
        total = q.library.index.n_chunks
        assert counts["embeddings"]["embedded"] == total == embedded(stub)
        hits = await q.search("the powerhouse of the cell: mitochondria make ATP")
        assert hits[0]["source"] == "cells.md" and hits[0]["dense_rank"] is not None
        queries = [b["input"] for b in stub.bodies("/api/embed") if isinstance(b["input"], list) and len(b["input"]) == 1]
        assert any(i[0].startswith("task: search result | query: ") for i in queries)
        docs = [t for b in stub.bodies("/api/embed") for t in b["input"] if t.startswith("title: none | text: ")]
        assert len(docs) == total  # documents carry the model's document prefix
        # Re-Train with one file changed: only its new passage is embedded.
        before = embedded(stub)
        await q.stage("rocks.md", b"# Rocks\nBasalt forms when lava cools quickly at the surface.\n\n# Granite\nGranite cools slowly underground.")
        again = await q.train()
        assert again["changed"] == 1
        assert embedded(stub) - before == again["embeddings"]["embedded"] - 0
        assert again["embeddings"]["cached"] >= 0 and again["embeddings"]["embedded"] <= 2
        assert q.embedder.status()["missing"] == 0
    run(go())


def test_unchanged_passages_in_a_changed_file_come_from_the_cache(stub):
    async def go():
        q = await open_with(stub)
        text = "# A\nAlpha paragraph about tides.\n\n# B\nBeta paragraph about waves."
        await q.stage("sea.md", text.encode())
        await q.train()
        first = embedded(stub)
        await q.stage("sea.md", (text + "\n\n# C\nGamma paragraph about currents.").encode())
        counts = await q.train()
        assert counts["embeddings"]["cached"] == first  # A and B were embedded before
        assert counts["embeddings"]["embedded"] == 1 == embedded(stub) - first
    run(go())


def test_switching_model_re_embeds_and_cancel_keeps_what_was_done(stub):
    async def go():
        q = await open_with(stub)
        for i in range(40):
            await q.stage(f"n{i}.md", f"# Note {i}\nFact {i} about glaciers number {i}.".encode())
        await q.train()
        await q.llm.save({"embed_model": "all-minilm"})
        status = q.embedder.status()
        assert status["missing"] == status["total"] == 40 and not status["active"]
        seen = []
        with pytest.raises(TrainCancelled, match="32 of 40"):
            await q.embedder.embed_missing(seen.append, cancelled=lambda: len(seen) > 1)
        assert q.embedder.status()["missing"] == 8 and q.library.index.dense_model == "all-minilm"
        result = await q.embedder.embed_missing()
        assert result["done"] == 8 and q.embedder.status()["missing"] == 0
        reopened = await Quire.open(q.store, transport=BlockingAsyncTransport())
        assert reopened.library.index.dense_model == "all-minilm" and reopened.embedder.status()["missing"] == 0
    run(go())


def test_without_a_server_train_succeeds_and_search_is_keyword_only():
    async def go():
        q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport())
        await q.llm.save({"url": "http://127.0.0.1:9", "embed_model": "embeddinggemma"})
        await q.stage("rocks.md", DOCS["rocks.md"].encode())
        counts = await q.train()
        assert counts["added"] == 1 and "could not reach" in counts["embeddings"]["skipped"]
        hits = await q.search("basalt")
        assert hits[0]["source"] == "rocks.md" and hits[0]["dense_rank"] is None
    run(go())
