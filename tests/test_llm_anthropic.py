"""quire.llm.anthropic against recorded exchanges of Anthropic's Messages API, replayed by a local
stand-in (tests/anthropic_server.py; the recordings and their sources: tests/fixtures/anthropic).
Nothing reaches Anthropic."""

import asyncio
import json

import pytest

from anthropic_server import AnthropicStandIn
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.llm.anthropic import AnthropicClient, anthropic_messages
from quire.llm.events import LLMError
from quire.services import Context
from quire.services import chat as chat_service
from quire.store import MemoryStore

KEY = "sk-ant-test-0123456789"
SCHEMA = {"type": "object", "properties": {"items": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
    "type": "object", "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"], "additionalProperties": False}}}, "required": ["items"],
    "additionalProperties": False}


@pytest.fixture
def server():
    with AnthropicStandIn(KEY) as s:
        yield s


def client(server, key=KEY):
    return AnthropicClient(server.url, BlockingAsyncTransport(UrllibTransport(timeout=10)), api_key=key)


def collect(stream):
    async def go():
        events = [e async for e in stream]
        return events, stream.reply
    return asyncio.run(go())


def test_streamed_text_with_the_headers_anthropic_needs(server):
    events, reply = collect(client(server).chat("claude-sonnet-4-5", [
        {"role": "system", "content": "Answer from the passages."}, {"role": "user", "content": "Hi"}],
        options={"num_predict": 64, "temperature": 0.2}))
    assert reply.text == "Hello!" and reply.done.reason == "stop"
    assert [e.kind for e in events] == ["content", "content", "done"]
    sent = server.requests[-1]
    assert sent["headers"]["x-api-key"] == KEY and sent["headers"]["anthropic-version"] == "2023-06-01"
    assert sent["headers"]["anthropic-dangerous-direct-browser-access"] == "true"
    assert sent["body"] == {"model": "claude-sonnet-4-5", "max_tokens": 64, "stream": True, "temperature": 0.2,
                            "system": "Answer from the passages.",
                            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]}


def test_streamed_tool_use_becomes_one_tool_call(server):
    server.script = ["stream_tool_use.sse"]
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                               "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}]
    _, reply = collect(client(server).chat("claude-sonnet-4-5", [{"role": "user", "content": "Weather?"}], tools=tools))
    assert reply.text == "Okay, let's check the weather for San Francisco, CA:"
    [call] = reply.tool_calls
    assert (call.name, call.arguments, call.id) == ("get_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"},
                                                    "toolu_01T1x1fJ34qAmk2tNTrN7Up6")
    assert reply.done.reason == "tool_calls"
    assert server.requests[-1]["body"]["tools"] == [{"name": "get_weather", "description": "Weather",
                                                     "input_schema": tools[0]["function"]["parameters"]}]


def test_structured_output_is_a_forced_tool_whose_input_is_the_reply(server):
    """A recorded forced-tool stream (vercel/ai's anthropic-json-tool.1.chunks.txt): an empty first
    ``input_json_delta``, a ping, the object in two pieces; its input is the reply's text."""
    server.script = ["recorded_forced_tool.sse"]
    _, reply = collect(client(server).chat("claude-haiku-4-5-20251001", [{"role": "user", "content": "Weather"}],
                                           format=SCHEMA, options={"num_predict": 200}))
    assert json.loads(reply.text) == {"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}
    assert reply.done.reason == "stop" and not reply.tool_calls
    assert reply.done.stats["output_tokens"] == 47 and reply.done.stats["input_tokens"] == 849
    body = server.requests[-1]["body"]
    assert body["tool_choice"] == {"type": "tool", "name": "reply"} and body["tools"][0]["input_schema"] == SCHEMA
    assert body["max_tokens"] == 200


def test_a_recorded_whole_forced_tool_message_is_the_reply(server):
    server.script = ["recorded_forced_tool.json"]
    _, reply = collect(client(server).chat("claude-haiku-4-5-20251001", [{"role": "user", "content": "Weather"}],
                                           format=SCHEMA, stream=False))
    assert [e["location"] for e in json.loads(reply.text)["elements"]] == ["San Francisco", "London", "Paris", "Berlin"]
    assert reply.done.reason == "stop" and not reply.tool_calls


def test_a_recorded_text_stream(server):
    """anthropic-sdk-python's basic_response.txt, recorded from the API: ping, three text deltas."""
    server.script = ["recorded_text.sse"]
    events, reply = collect(client(server).chat("claude-3-opus-latest", [{"role": "user", "content": "Hi"}]))
    assert reply.text == "Hello there!" and reply.done.reason == "stop"
    assert [e.kind for e in events] == ["content", "content", "content", "done"]


def test_a_recorded_tool_use_stream(server):
    """anthropic-sdk-python's tool_use_response.txt: text, then get_weather's input in four pieces
    (the first empty), a ``caller`` field Quire does not need."""
    server.script = ["recorded_tool_use.sse"]
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                               "parameters": {"type": "object", "properties": {"location": {"type": "string"}}}}}]
    _, reply = collect(client(server).chat("claude-sonnet-4-20250514", [{"role": "user", "content": "Paris?"}], tools=tools))
    assert reply.text == "I'll check the current weather in Paris for you."
    [call] = reply.tool_calls
    assert (call.name, call.arguments, call.id) == ("get_weather", {"location": "Paris"}, "toolu_01NRLabsLyVHZPKxbKvkfSMn")
    assert reply.done.reason == "tool_calls"


def test_an_error_mid_stream_keeps_what_arrived(server):
    server.script = ["stream_error.sse"]
    with pytest.raises(LLMError) as err:
        collect(client(server).chat("claude-sonnet-4-5", [{"role": "user", "content": "Hi"}]))
    assert err.value.kind == "stream" and "Overloaded" in str(err.value) and err.value.partial == "Mito"


def test_a_whole_message(server):
    _, reply = collect(client(server).chat("claude-sonnet-4-5", [{"role": "user", "content": "Hi"}], stream=False))
    assert reply.text == "Hi! My name is Claude." and reply.done.reason == "stop"


def test_history_with_tool_calls_and_results_alternates():
    system, msgs = anthropic_messages([
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "w", "arguments": {"a": 1}}}]},
        {"role": "tool", "content": "sunny", "tool_name": "w"},
        {"role": "user", "content": "Thanks"}])
    assert system == ""
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[1]["content"] == [{"type": "tool_use", "id": "toolu_0", "name": "w", "input": {"a": 1}}]
    assert msgs[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "sunny"},
                                  {"type": "text", "text": "Thanks"}]


def engine_with(server, key):
    async def go():
        q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
        await q.stage_text("Biology", "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells.")
        await q.train()
        await q.llm.save({"url": server.url, "kind": "anthropic", "chat_model": "claude-sonnet-4-5", "api_key": key})
        return q
    return asyncio.run(go())


def test_engine_status_key_refused_limited_and_a_streamed_cited_answer(server):
    q = engine_with(server, "sk-ant-wrong")
    wrong = asyncio.run(q.llm.status())
    assert wrong["status"] == "key_refused" and "invalid x-api-key" in wrong["message"]

    asyncio.run(q.llm.save({"api_key": KEY}))
    ok = asyncio.run(q.llm.status())
    assert ok["status"] == "connected" and [m["name"] for m in ok["models"]] == ["claude-sonnet-4-5"]
    assert ok["message"] == f"Connected to Anthropic at {server.url}." and ok["has_key"] is True

    events = []
    result = asyncio.run(chat_service.METHODS["ask"](q, Context(emit=events.append), "What do mitochondria make?", {}))
    assert result["mode"] == "llm" and result["answer"] == "Hello!" and result["citations"]
    asked = [r for r in server.requests if r["path"] == "/v1/messages"][-1]["body"]
    assert "Mitochondria make ATP" in json.dumps(asked["messages"]) + asked.get("system", "")

    server.limited = True
    limited = asyncio.run(q.llm.status())
    assert limited["status"] == "rate_limited" and "Wait 30s " in limited["fix"]
    assert KEY not in json.dumps([wrong, ok, limited], default=str)


def test_a_study_generator_through_anthropic_gets_its_items_from_the_forced_tool(server):
    q = engine_with(server, KEY)
    server.script = ["message_reply_tool.json"]
    made = asyncio.run(q.generate("flashcards", count=1))
    assert not made["made_without_ai"] and made["report"]["kept"] == 1, made["report"]
    [card] = made["items"]
    assert card["front"] == "What do mitochondria make for the cell?" and card["chunk_ids"]
    body = [r for r in server.requests if r["path"] == "/v1/messages"][-1]["body"]
    assert body["tool_choice"] == {"type": "tool", "name": "reply"}
    assert body["tools"][0]["input_schema"]["properties"]["cards"]["maxItems"] == 1 and body["max_tokens"] > 0
