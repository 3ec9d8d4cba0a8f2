"""quire.services.llm: a model server on another computer is contacted only once confirmed.

A stored address could have been written by anyone who can write the browser's storage
(on file:// every local page), so the engine refuses, before sending anything, every
request to a non-loopback server that the page has not confirmed in this tab.  The
"remote" server here is the Ollama stub on 127.0.0.1 reached by the name ``evil.test``
(``Mapped`` plays the part of Chromium's ``--host-resolver-rules``).
"""

import asyncio

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service
from quire.services import llm as llm_service
from quire.store import MemoryStore

BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."


class Mapped:
    """Sends evil.test to the stub on 127.0.0.1, and notes every address asked for."""

    def __init__(self):
        self.inner = BlockingAsyncTransport(UrllibTransport(timeout=10))
        self.urls = []

    async def request(self, method, url, body=None, stream=False):
        self.urls.append(url)
        return await self.inner.request(method, url.replace("//evil.test:", "//127.0.0.1:"), body, stream)


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


async def planted(stub, **settings):
    """An engine whose stored settings name evil.test, as a crafted vault or another page would leave them."""
    store = MemoryStore()
    remote = f"http://evil.test:{stub.port}"
    await store.commit([("settings", llm_service.SETTINGS_KEY, {"url": remote, "chat_model": "qwen3:4b", **settings})])
    transport = Mapped()
    q = await Quire.open(store, transport=transport)
    await q.stage_text("Biology", BIO)
    await q.train()
    return q, transport, remote


async def ask(q, question):
    events = []
    result = await chat_service.METHODS["ask"](q, Context(emit=events.append), question, {})
    return result, events


def test_a_stored_remote_server_gets_nothing_until_confirmed(stub):
    stub.enqueue_chat(["Mitochondria make ATP [1]."])

    async def go():
        q, transport, remote = await planted(stub, embed_model="embeddinggemma")
        status = await q.call("llmStatus")
        before, events = await ask(q, "What makes ATP?")
        embed_error = None
        try:
            await q.call("embed")
        except Exception as exc:  # noqa: BLE001 - the message is what is checked
            embed_error = str(exc)
        sent_before = list(transport.urls) + [r.path for r in stub.requests]
        assert q.llm.confirm([remote]) == [remote]
        after, _ = await ask(q, "What makes ATP?")
        return status, before, events, embed_error, sent_before, after, remote

    status, before, events, embed_error, sent_before, after, remote = asyncio.run(go())
    assert sent_before == []
    assert status["status"] == "unconfirmed" and remote in status["message"] and "Use this server" in status["fix"]
    assert not status["chat_ready"] and status["models"] == []
    assert before["mode"] == "extractive"
    connection = [e for e in events if e["type"] == "connection"]
    assert connection and connection[0]["status"] == "unconfirmed" and remote in connection[0]["message"]
    assert "did not contact " + remote in embed_error
    assert after["mode"] == "llm" and "ATP" in after["answer"]
    assert "/api/chat" in stub.paths("POST")


@pytest.mark.parametrize("url, confirm, error", [
    ("http://evil.test:11434", None, "would be sent to http://evil.test:11434, which is not this computer"),
    ("http://evil.test:11434", "http://evil.test:9999", "would be sent to http://evil.test:11434"),
    ("http://user@127.0.0.1@evil.test", "http://127.0.0.1", "must not contain a user name or password"),
    ("http://127.0.0.256", None, "is not a server address a browser can use"),
    ("ftp://127.0.0.1", None, "must start with http:// or https://"),
])
def test_saving_a_remote_server_needs_its_origin_confirmed(url, confirm, error):
    async def go():
        q = await Quire.open(MemoryStore(), transport=Mapped())
        with pytest.raises(ValueError, match=error):
            await q.llm.save({"url": url}, confirm)
        return await q.store.get("settings", llm_service.SETTINGS_KEY)

    assert asyncio.run(go()) is None  # nothing stored


@pytest.mark.parametrize("url, confirm", [
    ("http://127.0.0.1:11434", None),
    ("http://[::1]:8080", None),
    ("http://0x7f.1:8080", None),              # the browser reads it as 127.0.0.1
    ("http://evil.test:11434/", "http://evil.test:11434"),
    ("http://EVIL.test:80", "http://evil.test"),
])
def test_saving_loopback_or_confirmed(url, confirm):
    async def go():
        q = await Quire.open(MemoryStore(), transport=Mapped())
        await q.call("saveLlmSettings", {"url": url, "chat_model": "m"}, confirm)
        # Once confirmed in this tab, other changes need no second confirmation.
        await q.llm.save({"chat_model": "n"})
        return await q.store.get("settings", llm_service.SETTINGS_KEY)

    assert asyncio.run(go())["chat_model"] == "n"


@pytest.mark.parametrize("origins, error", [
    (["http://evil.test:11434/api"], "not a server origin"),
    (["http://EVIL.test"], "not a server origin"),     # only the browser's own spelling of an origin
    (["evil.test"], "not a server origin"),
    ([42], "not a server origin"),
])
def test_confirm_takes_only_exact_origins(origins, error):
    svc = llm_service.LLMService(MemoryStore(), Mapped())
    with pytest.raises(ValueError, match=error):
        svc.confirm(origins)
    assert svc.confirmed == set()


def test_confirming_a_loopback_origin_changes_nothing():
    svc = llm_service.LLMService(MemoryStore(), Mapped())
    assert svc.confirm(["http://127.0.0.1:8080", "http://evil.test"]) == ["http://evil.test"]
