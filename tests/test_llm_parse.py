"""Server output -> events, from tables of real and broken lines."""

import json

import pytest

from quire.llm.events import Content, Done, LLMError, Thinking, ToolCall, ToolCalls
from quire.llm.parse import (OllamaDecoder, OpenAIDecoder, SSEDecoder, error_message, http_error,
                             openai_reply_events, parse_pull_line, tool_call)

# Real /api/chat lines (qwen3 with think=true, llama3.2 with tools), and /api/generate.
OLLAMA_LINES = [
    ('{"model":"qwen3:4b","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"",'
     '"thinking":"Okay"},"done":false}', [Thinking("Okay")]),
    ('{"model":"qwen3:4b","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"Hi"},'
     '"done":false}', [Content("Hi")]),
    ('{"model":"llama3.2","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":"",'
     '"tool_calls":[{"function":{"name":"calculator","arguments":{"expression":"2+2"}}}]},"done":false}',
     [ToolCalls((ToolCall("calculator", {"expression": "2+2"}),))]),
    ('{"model":"llama3.2","created_at":"2025-06-01T10:00:00Z","message":{"role":"assistant","content":""},'
     '"done_reason":"stop","done":true,"total_duration":4883583458,"load_duration":1334875,'
     '"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}',
     [Done("stop", {"total_duration": 4883583458, "load_duration": 1334875, "prompt_eval_count": 26,
                    "prompt_eval_duration": 342546000, "eval_count": 282, "eval_duration": 4535599000})]),
    ('{"model":"m","message":{"role":"assistant","content":"cut"},"done":true,"done_reason":"length"}',
     [Content("cut"), Done("length", {})]),
    ('{"model":"m","message":{"role":"assistant","content":""},"done":true}', [Done("stop", {})]),
    ('{"model":"m","created_at":"x","response":"The","done":false}', [Content("The")]),
    ('{"model":"m","created_at":"x","response":"","thinking":"hm","done":false}', [Thinking("hm")]),
    ("", []),
    ("   \r", []),
]


@pytest.mark.parametrize("line,events", OLLAMA_LINES)
def test_ollama_lines(line, events):
    assert OllamaDecoder().feed(line) == events


@pytest.mark.parametrize("line,kind,message", [
    ('{"error":"an error was encountered while running the model: unexpected EOF"}', "stream",
     "an error was encountered while running the model: unexpected EOF"),
    ('{"model":"m","message":{"content":"Hi"', "protocol", "unreadable line"),
    ("<html>502 Bad Gateway</html>", "protocol", "unreadable line"),
    ('["not", "an", "object"]', "protocol", "unexpected line"),
])
def test_broken_ollama_lines(line, kind, message):
    with pytest.raises(LLMError) as err:
        OllamaDecoder().feed(line)
    assert err.value.kind == kind and message in err.value.message


def test_error_line_keeps_partial_content():
    d = OllamaDecoder()
    d.feed('{"message":{"role":"assistant","content":"The answer "},"done":false}')
    d.feed('{"message":{"role":"assistant","content":"is"},"done":false}')
    with pytest.raises(LLMError) as err:
        d.feed('{"error":"model runner has unexpectedly stopped"}')
    assert err.value.partial == "The answer is" == d.reply.text


def test_stream_that_ends_without_done_is_an_error():
    d = OllamaDecoder()
    d.feed('{"message":{"content":"half"},"done":false}')
    with pytest.raises(LLMError, match="before the reply finished") as err:
        d.close()
    assert err.value.partial == "half"


def test_reply_message_for_history():
    d = OllamaDecoder()
    for line, _ in OLLAMA_LINES[:4]:
        d.feed(line)
    assert d.reply.message() == {"role": "assistant", "content": "Hi", "tool_calls": [
        {"function": {"name": "calculator", "arguments": {"expression": "2+2"}}}]}
    assert d.reply.thought == "Okay" and d.reply.done.reason == "stop"


@pytest.mark.parametrize("body,message", [
    ('{"error":"model \\"x\\" not found, try pulling it first"}', 'model "x" not found, try pulling it first'),
    ('{"error":{"message":"model not loaded","type":"invalid_request_error"}}', "model not loaded"),
    ("404 page not found", "404 page not found"),
    ("", "(empty response)"),
    ('{"detail": "other"}', '{"detail": "other"}'),
])
def test_error_message(body, message):
    assert error_message(body) == message


def test_http_error_names_cors_for_empty_403():
    err = http_error(403, "")
    assert err.status == 403 and "CORS" in err.message
    assert http_error(404, '{"error":"model \\"x\\" not found, try pulling it first"}').model_missing


@pytest.mark.parametrize("raw,call", [
    ({"function": {"name": "f", "arguments": {"a": 1}}}, ToolCall("f", {"a": 1})),
    ({"id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
     ToolCall("f", {"a": 1}, "call_1")),
    ({"function": {"name": "f", "arguments": ""}}, ToolCall("f", {})),
    ({"function": {"name": "f"}}, ToolCall("f", {})),
    ({"function": {"name": "f", "arguments": '{"a": '}}, ToolCall("f", {"_unparsed": '{"a": '})),
    ({"function": {"name": "f", "arguments": "[1]"}}, ToolCall("f", {"_unparsed": [1]})),
])
def test_tool_call_table(raw, call):
    assert tool_call(raw) == call


@pytest.mark.parametrize("line,expected", [
    ('{"status":"pulling manifest"}', ("pulling manifest", None, None)),
    ('{"status":"pulling dde5aa3fc5ff","digest":"sha256:dde5","total":2019377376,"completed":241970}',
     ("pulling dde5aa3fc5ff", 2019377376, 241970)),
    ('{"status":"success"}', ("success", None, None)),
])
def test_pull_lines(line, expected):
    p = parse_pull_line(line)
    assert (p.status, p.total, p.completed) == expected


def test_pull_error_line():
    with pytest.raises(LLMError, match="file does not exist"):
        parse_pull_line('{"error":"pull model manifest: file does not exist"}')


# --- SSE ------------------------------------------------------------------------
@pytest.mark.parametrize("lines,events", [
    (["data: {\"a\":1}", ""], ['{"a":1}']),
    (["data:{\"a\":1}", ""], ['{"a":1}']),  # no space after the colon
    (["data: {\"a\":1}\r", "\r"], ['{"a":1}']),  # CRLF
    ([": keep-alive", "", "data: x", ""], ["x"]),  # comment lines are ignored
    (["event: message", "id: 7", "data: x", ""], ["x"]),
    (["data: one", "data: two", ""], ["one\ntwo"]),
    (["data: [DONE]", ""], ["[DONE]"]),
    (["", ""], []),
])
def test_sse_decoder(lines, events):
    d = SSEDecoder()
    assert [e for e in map(d.feed, lines) if e is not None] == events


def chunk(delta, finish=None, **extra):
    return "data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
                                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})


def decode_sse(lines):
    d = OpenAIDecoder()
    events = []
    for line in lines:
        events += d.feed(line)
        if line.startswith("data: "):
            events += d.feed("")
    return events + d.close(), d


OPENAI_STREAMS = [
    ("content", [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}), chunk({"content": "lo"}),
                 chunk({}, "stop"), "data: [DONE]"],
     [Content("Hel"), Content("lo"), Done("stop", {})]),
    ("llama.cpp reasoning_content", [chunk({"reasoning_content": "think"}), chunk({"content": "ok"}),
                                     chunk({}, "stop"), "data: [DONE]"],
     [Thinking("think"), Content("ok"), Done("stop", {})]),
    ("ollama reasoning", [chunk({"reasoning": "think"}), chunk({}, "stop"), "data: [DONE]"],
     [Thinking("think"), Done("stop", {})]),
    ("openai tool-call fragments", [
        chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                                    "function": {"name": "calculator", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"expr"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": "ession\": \"1+1\"}"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "current_time", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"), "data: [DONE]"],
     [ToolCalls((ToolCall("calculator", {"expression": "1+1"}, "call_a"), ToolCall("current_time", {}, "call_b"))),
      Done("tool_calls", {})]),
    ("usage chunk", [chunk({"content": "x"}), chunk({}, "length"),
                     "data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1,
                                                                     "total_tokens": 4}}), "data: [DONE]"],
     [Content("x"), Done("length", {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4})]),
    ("no [DONE] (some llama-server builds)", [chunk({"content": "x"}), chunk({}, "stop")],
     [Content("x"), Done("stop", {})]),
]


@pytest.mark.parametrize("name,lines,events", OPENAI_STREAMS, ids=[s[0] for s in OPENAI_STREAMS])
def test_openai_streams(name, lines, events):
    assert decode_sse(lines)[0] == events


def test_openai_stream_error_event_keeps_partial():
    with pytest.raises(LLMError) as err:
        decode_sse([chunk({"content": "par"}), 'data: {"error":{"message":"context overflow","type":"api_error"}}'])
    assert (err.value.kind, err.value.message, err.value.partial) == ("stream", "context overflow", "par")


def test_openai_stream_cut_short():
    with pytest.raises(LLMError, match="before the reply finished"):
        decode_sse([chunk({"content": "par"})])


def test_openai_non_streamed_reply():
    obj = {"id": "chatcmpl-1", "object": "chat.completion", "usage": {"total_tokens": 9}, "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "Let me check.",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "list_documents", "arguments": "{}"}}]}}]}
    assert openai_reply_events(obj) == [Content("Let me check."),
                                        ToolCalls((ToolCall("list_documents", {}, "call_1"),)),
                                        Done("tool_calls", {"total_tokens": 9})]


def test_events_as_dict_for_the_js_bridge():
    assert Thinking("a").as_dict() == {"kind": "thinking", "text": "a"}
    assert Done("stop", {"eval_count": 1}).as_dict() == {"kind": "done", "reason": "stop",
                                                        "stats": {"eval_count": 1}}
    assert list(ToolCalls((ToolCall("f", {"x": 1}),)).as_dict()["calls"]) == [{"name": "f", "arguments": {"x": 1},
                                                                          "id": None}]
