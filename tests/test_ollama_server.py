"""The fake Ollama must speak the real API: these pin its shapes and CORS."""

import http.client
import json
import math
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ollama_server import DEFAULT_ORIGINS, OllamaStub, embed_text, origin_allowed

TIMEOUT = 10  # seconds on every socket, so a broken stub fails instead of hanging


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


def call(stub, method, path, body=None, headers=None):
    """One raw request -> (status, headers, body bytes)."""
    conn = http.client.HTTPConnection(stub.host, stub.port, timeout=TIMEOUT)
    data = None if body is None else json.dumps(body).encode()
    hdrs = dict(headers or {})
    if data is not None:
        hdrs["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    conn.close()
    return out


def ndjson(raw: bytes) -> list[dict]:
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def sse(raw: bytes) -> list[str]:
    return [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]


# --- CORS ---------------------------------------------------------------------
CORS_CASES = [
    # origin, OLLAMA_ORIGINS, allowed
    ("http://localhost", None, True),
    ("http://localhost:5173", None, True),
    ("https://localhost:8443", None, True),
    ("http://127.0.0.1:8765", None, True),
    ("https://127.0.0.1", None, True),
    ("http://0.0.0.0:3000", None, True),
    ("app://quire", None, True),
    ("file://", None, True),
    ("tauri://localhost", None, True),
    ("vscode-webview://abc123", None, True),
    ("vscode-file://vscode-app", None, True),
    ("null", None, False),  # a file:// page: null does not match file://*
    ("null", "*", True),
    ("https://example.com", None, False),
    ("https://example.com", "https://example.com", True),
    ("https://example.com", "https://other.org,https://example.com", True),
    ("https://example.com", "*", True),
    ("http://localhost.evil.com", None, False),
    ("http://192.168.1.5:8765", None, False),
    ("http://[::1]:8765", None, False),
    ("chrome-extension://abcdef", None, False),
    ("chrome-extension://abcdef", "chrome-extension://*", True),
]


@pytest.mark.parametrize("origin,extra,allowed", CORS_CASES)
def test_origin_allowed_table(origin, extra, allowed):
    extras = tuple(extra.split(",")) if extra else ()
    assert origin_allowed(origin, extras) is allowed


@pytest.mark.parametrize("origin,extra,allowed", CORS_CASES)
def test_cors_preflight_and_request(origin, extra, allowed):
    with OllamaStub(origins=extra) as stub:
        status, headers, body = call(stub, "OPTIONS", "/api/chat", headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        if allowed:
            assert status == 204
            assert headers["access-control-allow-origin"] == ("*" if extra == "*" else origin)
            assert "POST" in headers["access-control-allow-methods"]
            assert "Content-Type" in headers["access-control-allow-headers"]
        else:
            assert (status, body) == (403, b"")
            assert "access-control-allow-origin" not in headers
        # The request itself (a browser skipping the preflight, or a simple GET).
        for method, path, payload in [("GET", "/api/version", None), ("POST", "/api/show", {"model": "qwen3:4b"})]:
            status, headers, body = call(stub, method, path, payload, {"Origin": origin})
            if allowed:
                assert status == 200
                assert headers["access-control-allow-origin"] in (origin, "*")
            else:
                assert (status, body) == (403, b"")


def test_no_origin_header_means_no_cors_headers(stub):
    status, headers, _ = call(stub, "GET", "/api/version")
    assert status == 200 and "access-control-allow-origin" not in headers


def test_default_origins_are_ollamas():
    assert "http://127.0.0.1:*" in DEFAULT_ORIGINS and "vscode-file://*" in DEFAULT_ORIGINS
    assert len(DEFAULT_ORIGINS) == 12 + 5


def test_requests_are_recorded(stub):
    call(stub, "POST", "/api/show", {"model": "qwen3:4b"}, {"Origin": "http://localhost:8765"})
    call(stub, "OPTIONS", "/api/chat", headers={"Origin": "null"})
    first, second = stub.requests
    assert (first.method, first.path, first.origin, first.body) == (
        "POST", "/api/show", "http://localhost:8765", {"model": "qwen3:4b"})
    assert (second.method, second.origin, second.body) == ("OPTIONS", "null", None)
    assert stub.paths("POST") == ["/api/show"]


# --- model listing ---------------------------------------------------------------
def test_version_tags_show(stub):
    stub.add_model("nomic-embed-text", ["embedding"], family="nomic-bert", context_length=2048,
                   embedding_length=768, caps_in_tags=False)
    assert json.loads(call(stub, "GET", "/api/version")[2])["version"].count(".") == 2
    models = {m["name"]: m for m in json.loads(call(stub, "GET", "/api/tags")[2])["models"]}
    assert models["qwen3:4b"]["capabilities"] == ["completion", "tools", "thinking"]
    assert {"family", "parameter_size", "quantization_level"} <= set(models["qwen3:4b"]["details"])
    assert "capabilities" not in models["nomic-embed-text:latest"]  # an older server
    show = json.loads(call(stub, "POST", "/api/show", {"model": "nomic-embed-text"})[2])
    assert show["capabilities"] == ["embedding"]
    assert show["model_info"]["nomic-bert.context_length"] == 2048
    assert show["model_info"]["nomic-bert.embedding_length"] == 768


@pytest.mark.parametrize("method,path,body,status,error", [
    ("POST", "/api/show", {"model": "nope"}, 404, 'model "nope" not found, try pulling it first'),
    ("POST", "/api/chat", {"model": "nope", "messages": []}, 404, 'model "nope" not found, try pulling it first'),
    ("POST", "/api/embed", {"model": "nope", "input": "x"}, 404, 'model "nope" not found, try pulling it first'),
    ("POST", "/api/chat", {"model": "embeddinggemma", "messages": []}, 400, '"embeddinggemma" does not support chat'),
    ("POST", "/api/embed", {"model": "qwen3:4b", "input": "x"}, 400, '"qwen3:4b" does not support embeddings'),
    ("POST", "/api/chat", {"model": "llama3.2:3b", "messages": [], "think": True}, 400,
     '"llama3.2:3b" does not support thinking'),
    ("POST", "/api/generate", {"model": "gemma3:4b", "prompt": "x", "think": "high"}, 400,
     '"gemma3:4b" does not support thinking'),
])
def test_error_shapes(stub, method, path, body, status, error):
    got_status, headers, raw = call(stub, method, path, body)
    assert got_status == status
    assert headers["content-type"].startswith("application/json")
    assert json.loads(raw) == {"error": error}


# --- chat ------------------------------------------------------------------------
def test_chat_stream_shape(stub):
    stub.enqueue_chat(["Hel", "lo"], thinking=["Let me ", "think."])
    status, headers, raw = call(stub, "POST", "/api/chat", {
        "model": "qwen3:4b", "messages": [{"role": "user", "content": "hi there"}], "think": True})
    assert status == 200 and headers["content-type"] == "application/x-ndjson"
    assert headers["transfer-encoding"] == "chunked"
    lines = ndjson(raw)
    assert [ln["done"] for ln in lines] == [False] * 4 + [True]
    assert "".join(ln["message"].get("thinking", "") for ln in lines) == "Let me think."
    assert "".join(ln["message"]["content"] for ln in lines) == "Hello"
    assert all(ln["model"] == "qwen3:4b" and ln["message"]["role"] == "assistant" for ln in lines)
    last = lines[-1]
    assert last["done_reason"] == "stop"
    for key in ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
                "eval_duration"):
        assert isinstance(last[key], int)


def test_chat_without_think_drops_thinking(stub):
    stub.enqueue_chat("answer", thinking="hidden")
    lines = ndjson(call(stub, "POST", "/api/chat", {"model": "qwen3:4b", "messages": []})[2])
    assert not any("thinking" in ln["message"] for ln in lines)


def test_chat_not_streamed(stub):
    stub.enqueue_chat(["a", "b"], thinking="t", done_reason="length")
    obj = json.loads(call(stub, "POST", "/api/chat", {"model": "qwen3:4b", "messages": [], "stream": False,
                                                      "think": True})[2])
    assert obj["message"] == {"role": "assistant", "content": "ab", "thinking": "t"}
    assert obj["done"] is True and obj["done_reason"] == "length"


def test_chat_tool_calls(stub):
    stub.enqueue_chat(tool_calls=[{"name": "calculator", "arguments": {"expression": "2+2"}}])
    lines = ndjson(call(stub, "POST", "/api/chat", {"model": "llama3.2:3b", "messages": [], "tools": []})[2])
    calls = [c for ln in lines for c in ln["message"].get("tool_calls", [])]
    assert calls == [{"function": {"name": "calculator", "arguments": {"expression": "2+2"}}}]
    assert lines[-1]["done"] is True


def test_chat_mid_stream_error_keeps_status_200(stub):
    stub.enqueue_chat(["partial "], error="an error was encountered while running the model")
    status, _, raw = call(stub, "POST", "/api/chat", {"model": "llama3.2:3b", "messages": []})
    lines = ndjson(raw)
    assert status == 200
    assert lines[0]["message"]["content"] == "partial "
    assert lines[-1] == {"error": "an error was encountered while running the model"}


def test_chat_format_returns_queued_content_and_records_schema(stub):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    stub.enqueue_chat('{"answer": "42"}')
    obj = json.loads(call(stub, "POST", "/api/chat", {"model": "llama3.2:3b", "messages": [], "stream": False,
                                                      "format": schema})[2])
    assert json.loads(obj["message"]["content"]) == {"answer": "42"}
    assert stub.bodies("/api/chat")[0]["format"] == schema


def test_chat_default_reply_when_queue_is_empty(stub):
    obj = json.loads(call(stub, "POST", "/api/chat", {"model": "llama3.2:3b", "stream": False,
                                                      "messages": [{"role": "user", "content": "ping"}]})[2])
    assert obj["message"]["content"] == "stub reply to: ping"


def test_hold_streams_first_chunk_then_waits():
    hold = threading.Event()
    with OllamaStub() as stub:
        stub.enqueue_chat(["one", "two"], hold=hold)
        conn = http.client.HTTPConnection(stub.host, stub.port, timeout=TIMEOUT)
        conn.request("POST", "/api/chat", body=json.dumps({"model": "llama3.2:3b", "messages": []}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        first = json.loads(resp.readline())  # arrives although the rest is held
        assert first["message"]["content"] == "one" and not hold.is_set()
        hold.set()
        rest = [json.loads(x) for x in resp.read().splitlines() if x.strip()]
        assert [r["message"]["content"] for r in rest] == ["two", ""]
        conn.close()


def test_generate_stream_shape(stub):
    stub.enqueue_chat(["Once", " upon"], thinking="plot")
    lines = ndjson(call(stub, "POST", "/api/generate", {"model": "qwen3:4b", "prompt": "story", "think": True})[2])
    assert "".join(ln["response"] for ln in lines) == "Once upon"
    assert "".join(ln.get("thinking", "") for ln in lines) == "plot"
    assert lines[-1]["done"] is True and "message" not in lines[0]


# --- embeddings ----------------------------------------------------------------------
def cosine(a, b):
    return sum(x * y for x, y in zip(a, b))


def test_embed_str_and_list(stub):
    one = json.loads(call(stub, "POST", "/api/embed", {"model": "embeddinggemma", "input": "a cat"})[2])
    assert len(one["embeddings"]) == 1 and len(one["embeddings"][0]) == 768
    assert {"model", "total_duration", "load_duration", "prompt_eval_count"} <= set(one)
    many = json.loads(call(stub, "POST", "/api/embed", {"model": "embeddinggemma", "input": ["a cat", "b"]})[2])
    assert many["embeddings"][0] == one["embeddings"][0]
    for vec in many["embeddings"]:
        assert math.isclose(math.sqrt(sum(v * v for v in vec)), 1.0)
    assert stub.embed_counts["embeddinggemma:latest"] == 3


def test_embeddings_are_similar_for_similar_texts():
    a = embed_text("the mitochondria is the powerhouse of the cell", 384)
    b = embed_text("mitochondria are the powerhouse of a cell", 384)
    c = embed_text("tax returns are due in april", 384)
    assert cosine(a, b) > 0.5 > cosine(a, c)
    assert embed_text("same words", 384) == embed_text("same words", 384)


def test_embed_truncate_and_dimensions(stub):
    long_text = "word " * 300  # all-minilm's stub context is 256 tokens
    ok = call(stub, "POST", "/api/embed", {"model": "all-minilm", "input": long_text})
    assert ok[0] == 200 and json.loads(ok[2])["prompt_eval_count"] == 256
    status, _, raw = call(stub, "POST", "/api/embed", {"model": "all-minilm", "input": long_text, "truncate": False})
    assert status == 400 and "exceeds the context length" in json.loads(raw)["error"]
    small = json.loads(call(stub, "POST", "/api/embed", {"model": "embeddinggemma", "input": "x", "dimensions": 256})[2])
    assert len(small["embeddings"][0]) == 256
    assert math.isclose(sum(v * v for v in small["embeddings"][0]), 1.0)


# --- pull ------------------------------------------------------------------------------
def test_pull_progress_then_success(stub):
    status, _, raw = call(stub, "POST", "/api/pull", {"model": "nomic-embed-text"})
    lines = ndjson(raw)
    assert status == 200 and lines[0] == {"status": "pulling manifest"}
    progress = [ln for ln in lines if "total" in ln]
    assert progress[-1]["completed"] == progress[-1]["total"] and progress[0]["digest"].startswith("sha256:")
    assert lines[-1] == {"status": "success"}
    assert "nomic-embed-text:latest" in stub.models


def test_pull_unknown_model_is_an_error_line(stub):
    status, _, raw = call(stub, "POST", "/api/pull", {"model": "no-such-model"})
    assert status == 200
    assert ndjson(raw) == [{"status": "pulling manifest"}, {"error": "pull model manifest: file does not exist"}]


# --- OpenAI-compatible ---------------------------------------------------------------------
def test_v1_models_and_embeddings(stub):
    models = json.loads(call(stub, "GET", "/v1/models")[2])
    assert models["object"] == "list" and {"id": "qwen3:4b", "object": "model"}.items() <= models["data"][1].items()
    emb = json.loads(call(stub, "POST", "/v1/embeddings", {"model": "all-minilm", "input": ["a", "b"]})[2])
    assert [d["index"] for d in emb["data"]] == [0, 1] and len(emb["data"][0]["embedding"]) == 384


def test_v1_chat_sse_shape(stub):
    stub.enqueue_chat(["Hi", "!"])
    status, headers, raw = call(stub, "POST", "/v1/chat/completions", {
        "model": "llama3.2:3b", "messages": [], "stream": True, "stream_options": {"include_usage": True}})
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse(raw)
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "Hi!"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["usage"]["total_tokens"] > 0


def test_v1_error_shape(stub):
    status, _, raw = call(stub, "POST", "/v1/chat/completions", {"model": "nope", "messages": []})
    assert status == 404 and json.loads(raw)["error"]["message"] == 'model "nope" not found, try pulling it first'


# --- as a script -------------------------------------------------------------------------
def test_script_mode_prints_ready_and_serves(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({
        "models": [{"name": "tiny", "capabilities": ["completion"]}],
        "chat": [{"content": ["scripted ", "reply"]}]}))
    server = Path(__file__).with_name("ollama_server.py")
    proc = subprocess.Popen([sys.executable, str(server), "--port", "0", "--origins", "*", "--script", str(script)],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()  # EOF (not a hang) if the server dies
        assert line.startswith("READY http://127.0.0.1:")
        port = int(line.rsplit(":", 1)[1])
        stub = OllamaStub(port)  # only for call()'s host/port
        status, headers, raw = call(stub, "POST", "/api/chat", {"model": "tiny", "messages": [], "stream": False},
                                    {"Origin": "null"})
        assert status == 200 and headers["access-control-allow-origin"] == "*"
        assert json.loads(raw)["message"]["content"] == "scripted reply"
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


# --- bounded generation: options.num_predict / max_tokens ------------------------
@pytest.mark.parametrize("path,body,stream", [
    ("/api/chat", {"messages": [{"role": "user", "content": "hi"}], "options": {"num_predict": 2}}, True),
    ("/api/chat", {"messages": [{"role": "user", "content": "hi"}], "options": {"num_predict": 2}, "stream": False}, False),
    ("/api/generate", {"prompt": "hi", "options": {"num_predict": 2}}, True),
])
def test_ollama_stops_at_num_predict_with_done_reason_length(stub, path, body, stream):
    stub.enqueue_chat(["a", "b", "c", "d"])
    status, _, raw = call(stub, "POST", path, {"model": "llama3.2:3b", **body})
    lines = ndjson(raw) if stream else [json.loads(raw)]
    text = "".join((l.get("message") or {}).get("content", "") + l.get("response", "") for l in lines)
    assert status == 200 and text == "ab"
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "length" and lines[-1]["eval_count"] == 2


@pytest.mark.parametrize("limit,reason,text", [(None, "stop", "abcd"), (4, "stop", "abcd"), (3, "length", "abc")])
def test_v1_stops_at_max_tokens_with_finish_reason_length(stub, limit, reason, text):
    stub.enqueue_chat(["a", "b", "c", "d"])
    body = {"model": "llama3.2:3b", "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": True}, **({"max_tokens": limit} if limit else {})}
    _, _, raw = call(stub, "POST", "/v1/chat/completions", body)
    chunks = [json.loads(d) for d in sse(raw) if d != "[DONE]"]
    got = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert got == text and finish == [reason] and chunks[-1]["usage"]["completion_tokens"] == len(text)
