"""OpenAI's chat completions, replayed from exchanges recorded against the live API (openai-python's
test snapshots; sources in tests/fixtures/openai/README.md) by the local stand-in
(tests/cloud_server.py).  The engine is set to the OpenAI preset, ``https://api.openai.com/v1``;
the transport here hands each request to the stand-in instead (nothing reaches OpenAI), so the
engine treats the server as the cloud provider it names: the key as Bearer, a structured-output
request with ``"strict": false`` (docs/model-servers.md: OpenAI's strict mode refuses Quire's bounded
schemas), no ``/props``.  A keyed server on this computer keeps ``"strict": true``."""

import asyncio
import json

import pytest

from cloud_server import CloudStandIn
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service
from quire.store import MemoryStore

KEY = "sk-proj-replay-0123456789"
OPENAI = "https://api.openai.com"
# Quire's bounded schema shape: length bounds, an enum, additionalProperties false (strict mode refuses maxLength).
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40},
                                           "temperature": {"type": "number"}, "units": {"enum": ["c", "f"]}},
          "required": ["city", "temperature", "units"], "additionalProperties": False}


class ToStandIn:
    """Sends what the engine addresses to ``origin`` to the stand-in; records the URLs it was given."""

    def __init__(self, origin: str, stand_in: CloudStandIn):
        self.origin, self.stand_in, self.urls = origin, stand_in, []
        self.inner = BlockingAsyncTransport(UrllibTransport(timeout=10))

    async def request(self, method, url, body=None, stream=False, headers=None):
        self.urls.append(url)
        local = self.stand_in.url + url[len(self.origin):] if url.startswith(self.origin) else url
        return await self.inner.request(method, local, body, stream, headers=headers)


@pytest.fixture
def cloud():
    with CloudStandIn(KEY) as s:
        yield s


def engine(transport, url, confirm=None):
    async def go():
        q = await Quire.open(MemoryStore(), transport=transport)
        await q.stage_text("Weather", "# San Francisco\nThe weather in San Francisco is often foggy in summer.")
        await q.train()
        await q.llm.save({"url": url, "kind": "openai", "chat_model": "model-id-0", "api_key": KEY, "num_predict": 300},
                         confirm=confirm)
        return q
    return asyncio.run(go())


def chat(q, **kw):
    async def go():
        return await q.llm.client().chat("model-id-0", [{"role": "user", "content": "What's the weather like in SF?"}],
                                         options=q.llm.options(), **kw).collect()
    return asyncio.run(go())


def test_the_openai_preset_streams_a_recorded_answer_with_its_key(cloud):
    t = ToStandIn(OPENAI, cloud)
    q = engine(t, OPENAI + "/v1", confirm=OPENAI)
    status = asyncio.run(q.llm.status())
    assert status["status"] == "connected" and status["provider"] == "OpenAI" and status["has_key"] is True
    assert [m["name"] for m in status["models"]] == ["model-id-0", "model-id-1", "model-id-2"]
    result = asyncio.run(chat_service.METHODS["ask"](q, Context(emit=lambda e: None), "What is the weather in San Francisco?", {}))
    assert result["mode"] == "llm" and result["answer"] == (
        "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend "
        "checking a reliable weather website or a weather app.")
    sent = [r for r in cloud.requests if r["path"] == "/v1/chat/completions"][-1]
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"
    assert sent["body"]["stream"] is True and sent["body"]["stream_options"] == {"include_usage": True}
    assert sent["body"]["max_tokens"] > 0 and sent["body"]["model"] == "model-id-0"
    assert not [u for u in t.urls if u.endswith("/props")]  # a cloud provider is not asked for llama-server's /props
    assert all(u.startswith(OPENAI + "/v1/") for u in t.urls)


def test_structured_output_to_openai_is_not_strict_and_the_recorded_reply_parses(cloud):
    q = engine(ToStandIn(OPENAI, cloud), OPENAI + "/v1", confirm=OPENAI)
    cloud.script = ["openai/recorded_stream_json_schema.sse"]
    reply = chat(q, format=SCHEMA)
    assert json.loads(reply.text) == {"city": "San Francisco", "temperature": 61, "units": "f"}
    assert reply.done.reason == "stop" and reply.done.stats["completion_tokens"] == 14
    body = cloud.requests[-1]["body"]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "reply", "strict": False, "schema": SCHEMA}}


def test_gemini_structured_output_is_not_strict_either(cloud):
    gemini = "https://generativelanguage.googleapis.com"
    q = engine(ToStandIn(gemini, cloud), gemini + "/v1beta/openai", confirm=gemini)
    asyncio.run(q.llm.save({"chat_model": "models/gemini-2.0-flash"}))
    cloud.script = ["openai/recorded_stream_json_schema.sse"]
    asyncio.run(q.llm.client().chat("models/gemini-2.0-flash", [{"role": "user", "content": "x"}], format=SCHEMA).collect())
    assert cloud.requests[-1]["path"] == "/v1beta/openai/chat/completions"
    assert cloud.requests[-1]["body"]["response_format"]["json_schema"]["strict"] is False


def test_a_keyed_server_on_this_computer_keeps_strict_structured_output(cloud):
    q = engine(BlockingAsyncTransport(UrllibTransport(timeout=10)), cloud.url + "/v1")
    cloud.script = ["openai/recorded_stream_json_schema.sse"]
    chat(q, format=SCHEMA)
    assert cloud.requests[-1]["body"]["response_format"]["json_schema"]["strict"] is True


def test_a_recorded_tool_call_stream(cloud):
    q = engine(ToStandIn(OPENAI, cloud), OPENAI + "/v1", confirm=OPENAI)
    cloud.script = ["openai/recorded_stream_tool_call.sse"]
    tools = [{"type": "function", "function": {"name": "get_weather",
                                               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    reply = chat(q, tools=tools)
    [call] = reply.tool_calls
    assert (call.name, call.arguments, call.id) == ("get_weather", {"city": "New York City"}, "call_4XzlGBLtUe9dy3GVNV4jhq7h")
    assert reply.done.reason == "tool_calls" and cloud.requests[-1]["body"]["tools"] == tools


@pytest.mark.parametrize("provider, url, model, words", [
    ("openai", OPENAI + "/v1", "gpt-nope", "The model `gpt-nope` does not exist or you do not have access to it."),
    ("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "models/gemini-nope",
     "models/gemini-nope is not found for API version v1beta"),
])
def test_a_model_the_key_may_not_use_is_said_in_the_providers_words(cloud, provider, url, model, words):
    origin = url.split("/v1")[0]
    q = engine(ToStandIn(origin, cloud), url, confirm=origin)
    asyncio.run(q.llm.save({"chat_model": model}))
    events = []
    result = asyncio.run(chat_service.METHODS["ask"](q, Context(emit=events.append), "What is the weather in San Francisco?", {}))
    [conn] = [e for e in events if e["type"] == "connection"]
    assert conn["status"] == "model_missing" and words in conn["error"], conn
    assert f'does not offer the model "{model}"' in conn["message"] and result["mode"] == "extractive"
