"""The engine on CPython against real llama-server instances serving Gemma 3 270M:
discovery, /props, bounded answers, structured output for every study generator, embeddings
and hybrid search.  The model is tiny: the tests check what the protocol promises (valid,
bounded, complete), never the quality of what it writes."""

import asyncio

import numpy as np
import pytest

from quire.app import Quire
from quire.llm import BlockingAsyncTransport, Done, OpenAICompatClient, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service
from quire.store import MemoryStore

from .conftest import CHAT_ALIAS, CONTEXT, EMBED_ALIAS

NOTES = [
    ("Cells", "# Cells\nMitochondria make ATP, the energy currency of the cell. The mitochondrion has its own DNA. "
              "Mitosis makes two identical daughter cells. Meiosis makes four gametes with half the chromosomes."),
    ("Rocks", "# Rocks\nBasalt forms when lava cools quickly at the surface. Granite cools slowly underground and "
              "has large crystals. Sandstone is made of cemented sand grains."),
]


def client(url):
    return OpenAICompatClient(url, BlockingAsyncTransport(UrllibTransport(timeout=600)))


def test_discovery_reports_the_alias_context_and_a_template_without_tools(llama_chat):
    c = client(llama_chat.url)
    [model] = asyncio.run(c.tags())
    assert model.name == CHAT_ALIAS and model.context_length == CONTEXT
    assert asyncio.run(c.props()) == {"tools": False, "context_length": CONTEXT}


def test_max_tokens_bounds_the_answer_and_the_cut_is_reported(llama_chat):
    stream = client(llama_chat.url).chat(CHAT_ALIAS, [{"role": "user", "content": "Write a long story about rocks."}],
                                         options={"num_predict": 12, "temperature": 0.2, "seed": 1})
    reply = asyncio.run(stream.collect())
    assert reply.done == Done("length", reply.done.stats) and reply.done.stats["completion_tokens"] == 12
    assert reply.text


async def engine(url: str, **settings) -> Quire:
    q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport(UrllibTransport(timeout=600)))
    for name, text in NOTES:
        await q.stage_text(name, text, "Science")
    await q.train()
    await q.llm.save({"url": url, "kind": "openai", **settings})
    return q


@pytest.mark.parametrize("kind,count", [("quiz", 2), ("flashcards", 2), ("workshop", 2), ("mindmap", 1)])
def test_every_study_generator_gets_valid_items_from_a_bounded_schema(llama_chat, kind, count):
    """The product's own path: ``services.study`` drives ``quire.study.generate`` against the server."""
    async def go():
        q = await engine(llama_chat.url, chat_model=CHAT_ALIAS)
        return await q.generate(kind, count=count)
    made = asyncio.run(go())
    assert not made["made_without_ai"] and made["report"]["kept"] >= 1, made["report"]
    if kind in ("quiz", "flashcards"):
        assert 0 < len(made["items"]) <= count
        assert all(item["chunk_ids"] and not item["made_without_ai"] for item in made["items"])
    else:
        assert made["outline"]["title"] if kind == "workshop" else made["map"]["topic"]
    print(kind, made["report"])


def test_an_answer_says_tools_are_unavailable_and_is_cut_at_the_answer_length(llama_chat):
    async def go():
        q = await engine(llama_chat.url, chat_model=CHAT_ALIAS, num_predict=24)
        events = []
        result = await chat_service.METHODS["ask"](q, Context(emit=events.append), "What makes ATP?", {})
        return result, events
    result, events = asyncio.run(go())
    codes = [e["code"] for e in events if e["type"] == "notice"]
    assert result["mode"] == "llm" and result["answer"] and codes == ["no_tools", "cut"]
    assert [e["type"] for e in events][0] == "citations" and "content" in [e["type"] for e in events]
    assert not [e for e in events if e["type"] in ("connection", "extractive", "error")]


def test_embeddings_and_hybrid_search_on_the_embedding_instance(llama_embed):
    vectors = asyncio.run(client(llama_embed.url).embed(EMBED_ALIAS, ["basalt", "mitochondria", "granite"]))
    assert len(vectors) == 3 and len(set(len(v) for v in vectors)) == 1 and len(vectors[0]) >= 256
    assert all(np.linalg.norm(v) > 0 for v in vectors) and vectors[0] != vectors[1]

    async def go():
        q = await engine(llama_embed.url, embed_model=EMBED_ALIAS)
        done = await q.embedder.embed_missing()
        return done, await q.search("How does lava become rock?", k=3)
    done, hits = asyncio.run(go())
    assert done["embedded"] == done["total"] > 0
    # hybrid: the dense side scored every hit (a 270M base model's vectors may fall below the cut-off)
    assert hits and all(h["dense_status"] not in (None, "off", "no-vector") and h["dense_score"] is not None
                        for h in hits)
