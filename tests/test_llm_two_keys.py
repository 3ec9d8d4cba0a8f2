"""A chat server and a separate embedding server, each wanting its own API key (issue 29's
``embed_api_key``): two local stand-ins (tests/cloud_server.py) that refuse any request without their
own ``Authorization: Bearer``, as ``llama-server --api-key`` does.  Every request carries the key of
the server it goes to and never the other one; neither key is in ``llmStatus()``, ``llmKeys``, a
message or an exported vault."""

import asyncio
import base64
import io
import json
import zipfile

import pytest

from cloud_server import CloudStandIn
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service
from quire.services import embeddings as embed_service
from quire.services import llm as llm_service
from quire.store import MemoryStore

CHAT_KEY = "sk-chat-only-0123456789"
EMBED_KEY = "sk-embed-only-9876543210"


@pytest.fixture
def servers():
    with CloudStandIn(CHAT_KEY) as chat, CloudStandIn(EMBED_KEY) as embed:
        yield chat, embed


def two_servers(chat, embed, embed_key=EMBED_KEY):
    async def go():
        q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
        await q.stage_text("Weather", "# San Francisco\nThe weather in San Francisco is often foggy in summer.")
        await q.train()
        await q.llm.save({"url": chat.url, "kind": "openai", "chat_model": "model-id-0", "api_key": CHAT_KEY,
                          "embed_url": embed.url, "embed_kind": "openai", "embed_model": "model-id-1",
                          "embed_api_key": embed_key})
        return q
    return asyncio.run(go())


def members(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return data + b"".join(z.read(n) for n in z.namelist())


def test_each_server_gets_its_own_key_and_neither_key_is_ever_shown(servers):
    chat, embed = servers
    q = two_servers(chat, embed)

    async def main():
        status = await q.llm.status()
        keys = llm_service.METHODS["llmKeys"](q, None)
        embedded = await embed_service.METHODS["embed"](q, Context(emit=lambda e: None))
        answer = await chat_service.METHODS["ask"](q, Context(emit=lambda e: None), "What is the weather in San Francisco?", {})
        vault = base64.b64decode((await q.export_vault())["base64"])
        return status, keys, embedded, answer, vault

    status, keys, embedded, answer, vault = asyncio.run(main())
    assert status["status"] == "connected" and status["embed"]["status"] == "connected", status
    assert status["same_server"] is False and status["has_key"] is True and status["embed"]["has_key"] is True
    assert keys == {"chat": True, "embeddings": True}
    assert answer["mode"] == "llm" and answer["answer"].startswith("I'm unable to provide real-time weather updates.")

    # The passages and the question were embedded on the embedding server, the answer written on the chat server.
    assert [r for r in embed.requests if r["path"] == "/v1/embeddings"], embedded
    assert [r for r in chat.requests if r["path"] == "/v1/chat/completions"]
    assert not [r for r in chat.requests if r["path"] == "/v1/embeddings"]
    assert not [r for r in embed.requests if r["path"] == "/v1/chat/completions"]
    assert {r["headers"].get("authorization") for r in chat.requests} == {f"Bearer {CHAT_KEY}"}
    assert {r["headers"].get("authorization") for r in embed.requests} == {f"Bearer {EMBED_KEY}"}

    for key in (CHAT_KEY, EMBED_KEY):
        assert key not in json.dumps([status, keys, answer], default=str)
        assert key.encode() not in members(vault)


def test_a_wrong_embedding_key_is_refused_there_while_chat_stays_connected(servers):
    chat, embed = servers
    q = two_servers(chat, embed, embed_key="sk-embed-wrong-000000")
    status = asyncio.run(q.llm.status())
    assert status["status"] == "connected" and status["embed"]["status"] == "key_refused", status
    assert embed.url in status["embed"]["message"] and "sk-embed-wrong" not in json.dumps(status, default=str)
    assert {r["headers"].get("authorization") for r in chat.requests} == {f"Bearer {CHAT_KEY}"}
