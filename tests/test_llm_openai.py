"""OpenAICompatClient (llama-server, LM Studio, Ollama /v1) against the stand-in server."""

import json

import pytest

from aio import drain, run
from ollama_server import OllamaStub
from quire.llm import (BlockingAsyncTransport, Content, Done, LLMError, OpenAICompatClient, Thinking, ToolCall,
                       ToolCalls, UrllibTransport)
from quire.llm.openai_compat import chat_body, openai_messages, response_format

USER = [{"role": "user", "content": "Summarise chapter 1"}]


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


@pytest.fixture
def client(stub):
    return OpenAICompatClient(stub.url, BlockingAsyncTransport(UrllibTransport(timeout=10)))


def test_models_and_version(client):
    assert run(client.version()) == "openai-compatible"
    assert "qwen3:4b" in [m.name for m in run(client.tags())]


def test_embed(stub, client):
    vectors = run(client.embed("all-minilm", ["a", "b", "c"], batch_size=2))
    assert len(vectors) == 3 and len(vectors[0]) == 384
    assert [b["input"] for b in stub.bodies("/v1/embeddings")] == [["a", "b"], ["c"]]
    assert stub.embed_counts["all-minilm:latest"] == 3


def test_chat_stream(stub, client):
    stub.enqueue_chat(["Chapter 1 ", "introduces cells."])
    stream = client.chat("llama3.2:3b", USER, options={"temperature": 0.1, "num_predict": 50, "num_ctx": 4096})
    events = drain(stream)
    assert events[:2] == [Content("Chapter 1 "), Content("introduces cells.")]
    assert events[-1].reason == "stop" and events[-1].stats["total_tokens"] > 0
    body = stub.bodies("/v1/chat/completions")[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert (body["temperature"], body["max_tokens"]) == (0.1, 50) and "num_ctx" not in body


def test_chat_thinking_via_reasoning_effort(stub, client):
    stub.enqueue_chat("ok", thinking="reason")
    events = drain(client.chat("qwen3:4b", USER, think="high"))
    assert events[:2] == [Thinking("reason"), Content("ok")]
    assert stub.bodies("/v1/chat/completions")[0]["reasoning_effort"] == "high"


def test_chat_json_schema(stub, client):
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
    stub.enqueue_chat('{"summary": "cells"}')
    reply = run(client.chat("llama3.2:3b", USER, format=schema, stream=False).collect())
    assert json.loads(reply.text) == {"summary": "cells"}
    assert stub.bodies("/v1/chat/completions")[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "reply", "strict": True, "schema": schema}}


def test_chat_tool_calls_stream_and_not(stub, client):
    for stream in (True, False):
        stub.enqueue_chat(tool_calls=[{"name": "calculator", "arguments": {"expression": "1+1"}}])
        events = drain(client.chat("llama3.2:3b", USER, tools=[], stream=stream))
        calls = [e for e in events if isinstance(e, ToolCalls)]
        assert calls == [ToolCalls((ToolCall("calculator", {"expression": "1+1"}, "call_00000000"),))]
        assert events[-1] == Done("tool_calls", events[-1].stats)


def test_errors(stub, client):
    with pytest.raises(LLMError) as err:
        drain(client.chat("nope", USER))
    assert err.value.status == 404 and err.value.model_missing
    stub.enqueue_chat(["par", "tial"], error="context overflow")
    with pytest.raises(LLMError) as err:
        drain(client.chat("llama3.2:3b", USER))
    assert (err.value.kind, err.value.partial) == ("stream", "partial")
    with pytest.raises(LLMError, match="cannot download"):
        drain(client.pull("x"))


def test_base_url_with_v1_and_one_text(stub):
    client = OpenAICompatClient(stub.url + "/v1/", BlockingAsyncTransport(UrllibTransport(timeout=10)))
    stub.enqueue_chat(["a", "b"])
    assert "qwen3:4b" in [m.name for m in run(client.tags())]
    assert len(run(client.embed("all-minilm", "x"))) == 1  # a str is one text
    assert run(client.chat("llama3.2:3b", USER).collect()).text == "ab"


# --- pure translation --------------------------------------------------------------
def test_history_translation():
    history = [
        {"role": "user", "content": "look", "images": ["iVBORw0KGgo="]},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "calculator", "arguments": {"expression": "2+2"}}},
            {"function": {"name": "current_time", "arguments": {}}}]},
        {"role": "tool", "content": "4", "tool_name": "calculator"},
        {"role": "tool", "content": "noon", "tool_name": "current_time"},
    ]
    out = openai_messages(history)
    assert out[0]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert out[1]["tool_calls"][0] == {"id": "call_0", "type": "function",
                                       "function": {"name": "calculator", "arguments": '{"expression": "2+2"}'}}
    assert [m["tool_call_id"] for m in out[2:]] == ["call_0", "call_1"]


@pytest.mark.parametrize("fmt,expected", [
    (None, None),
    ("json", {"type": "json_object"}),
    ({"type": "object"}, {"type": "json_schema", "json_schema": {"name": "reply", "strict": True,
                                                                  "schema": {"type": "object"}}}),
])
def test_response_format(fmt, expected):
    assert response_format(fmt) == expected


def test_bad_format_fails_loudly():
    with pytest.raises(ValueError, match="JSON schema"):
        chat_body("m", [], format="yaml")
