"""Bounded answers and what the server reports, through quire.services.chat on CPython:
the Answer length setting, cut answers, llama-server's /props (tools, context size) and its
500 "tools param requires --jinja flag"."""

import asyncio
import json

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.chat.extractive import FAILED_LABEL, LABEL
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service

BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."


class _Resp:
    def __init__(self, status: int, body):
        self.status, self._text = status, body if isinstance(body, str) else json.dumps(body)

    async def json(self):
        return json.loads(self._text)

    async def text(self):
        return self._text

    async def iter_lines(self):
        for line in self._text.splitlines():
            yield line

    async def close(self):
        pass


class LlamaServerLike:
    """The stand-in's /v1 behind what llama-server adds: ``/props`` with the template's
    capabilities and n_ctx, and (started with --no-jinja) HTTP 500 for any request with tools.
    Shapes as measured on llama-server 0.6.0-dev (/work/shared/LLM-SERVERS.md)."""

    def __init__(self, supports_tools: bool | None, n_ctx: int | None = 4096, jinja: bool = True):
        self.inner = BlockingAsyncTransport(UrllibTransport(timeout=10))
        self.props = {"chat_template": "…", "chat_template_caps": {} if supports_tools is None else
                      {"supports_tools": supports_tools, "supports_system_role": True},
                      "default_generation_settings": {"n_ctx": n_ctx} if n_ctx else {}}
        self.jinja = jinja
        self.refused = 0

    async def request(self, method, url, body=None, stream=False):
        if url.endswith("/props"):
            return _Resp(200, self.props)
        if not self.jinja and isinstance(body, dict) and body.get("tools"):
            self.refused += 1
            return _Resp(500, {"error": {"code": 500, "message": "tools param requires --jinja flag",
                                         "type": "server_error"}})
        return await self.inner.request(method, url, body, stream)


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


async def engine(url, transport=None, **settings):
    q = await Quire.open(__import__("quire.store", fromlist=["MemoryStore"]).MemoryStore(),
                         transport=transport or BlockingAsyncTransport(UrllibTransport(timeout=10)))
    await q.stage_text("Biology", BIO, "Science")
    await q.train()
    await q.llm.save({"url": url, "chat_model": "llama3.2:3b", **settings})
    return q


def ask(q, question="What makes ATP?"):
    events = []
    result = asyncio.run(chat_service.METHODS["ask"](q, Context(emit=events.append), question, {}))
    return result, events


def notices(events, code):
    return [e for e in events if e["type"] == "notice" and e["code"] == code]


@pytest.mark.parametrize("kind,path,field", [("ollama", "/api/chat", ("options", "num_predict")),
                                             ("openai", "/v1/chat/completions", ("max_tokens",))])
@pytest.mark.parametrize("setting,sent", [(None, 1024), (300, 300)])
def test_every_answer_is_bounded_by_the_answer_length_setting(stub, kind, path, field, setting, sent):
    extra = {"kind": kind, **({"num_predict": setting} if setting else {})}
    q = asyncio.run(engine(stub.url, **extra))
    ask(q)
    body = stub.bodies(path)[-1]
    for key in field:
        body = body[key]
    assert body == sent


@pytest.mark.parametrize("kind", ["ollama", "openai"])
def test_a_cut_answer_says_it_was_cut_and_what_to_do(stub, kind):
    stub.enqueue_chat([f"w{i} " for i in range(20)])
    q = asyncio.run(engine(stub.url, kind=kind, num_predict=16))
    result, events = ask(q)
    assert result["answer"] == "".join(f"w{i} " for i in range(16)) and result["mode"] == "llm"
    [cut] = notices(events, "cut")
    assert cut["message"] == "The answer was cut at 16 tokens; raise Answer length in Settings." and cut["tokens"] == 16
    session = asyncio.run(chat_service.METHODS["chatSession"](q, Context(), result["session"]))
    assert session["messages"][-1]["cut"] == 16 and notices(session["messages"][-1]["events"], "cut")


def test_an_answer_within_its_length_has_no_cut_notice(stub):
    stub.enqueue_chat(["Mitochondria ", "[1]."])
    _, events = ask(asyncio.run(engine(stub.url)))
    assert not notices(events, "cut")


def test_a_setting_outside_the_range_is_refused_with_the_range(stub):
    q = asyncio.run(engine(stub.url))
    with pytest.raises(ValueError, match="between 16 and 32768"):
        asyncio.run(q.llm.save({"num_predict": 5}))


@pytest.mark.parametrize("supports,offered,notice", [(False, False, True), (True, True, False), (None, True, False)])
def test_props_decide_whether_tools_are_offered(stub, supports, offered, notice):
    server = LlamaServerLike(supports_tools=supports)
    q = asyncio.run(engine(stub.url, server, kind="openai"))
    result, events = ask(q)
    first = stub.bodies("/v1/chat/completions")[0]
    assert ("tools" in first) is offered
    assert bool(notices(events, "no_tools")) is notice and result["mode"] == "llm"
    if notice:
        assert "cannot call tools" in notices(events, "no_tools")[0]["message"]


def test_context_size_from_props_keeps_the_answer_inside_it(stub):
    server = LlamaServerLike(supports_tools=False, n_ctx=512)
    q = asyncio.run(engine(stub.url, server, kind="openai", num_predict=4096))
    ask(q)
    sent = stub.bodies("/v1/chat/completions")[0]["max_tokens"]
    assert 64 <= sent < 512


def test_without_jinja_the_question_is_asked_again_without_tools_and_says_so(stub):
    server = LlamaServerLike(supports_tools=None, jinja=False)
    stub.enqueue_chat(["Mitochondria make ATP [1]."])
    q = asyncio.run(engine(stub.url, server, kind="openai"))
    result, events = ask(q)
    assert server.refused == 1 and result["mode"] == "llm" and result["answer"] == "Mitochondria make ATP [1]."
    assert "tools" not in stub.bodies("/v1/chat/completions")[-1]
    assert "--jinja" in notices(events, "no_tools")[0]["message"]
    assert not [e for e in events if e["type"] in ("connection", "extractive", "error")]


def test_a_failing_model_server_is_not_called_no_model_connected(stub):
    stub.enqueue_chat("", error="model runner has unexpectedly stopped")
    result, events = ask(asyncio.run(engine(stub.url)))
    ex = next(e for e in events if e["type"] == "extractive")
    assert ex["label"] == FAILED_LABEL and "no model connected" not in ex["label"] and LABEL != FAILED_LABEL
    assert "unexpectedly stopped" in next(e for e in events if e["type"] == "error")["message"]
