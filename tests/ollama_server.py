"""A stand-in Ollama that speaks the real HTTP API, scripted per test.

Standard library only, so the browser tests can run it as a subprocess:

    python tests/ollama_server.py --port 0 [--origins '*'] [--script file.json]

prints ``READY http://127.0.0.1:<port>`` on stdout once it accepts connections.

In-process use::

    with OllamaStub() as stub:
        stub.enqueue_chat(["Hel", "lo"], thinking=["hmm"])
        ...  # talk to stub.url
        assert stub.requests[-1].path == "/api/chat"

Shapes follow Ollama's source (see /work/shared/LLM-SERVERS.md): NDJSON
streams over chunked transfer encoding, ``{"error": ...}`` bodies, a final
``{"error": ...}`` line with HTTP 200 for failures mid-stream, and CORS as
gin-contrib/cors is configured by Ollama (a disallowed Origin gets an empty
403 on the preflight and on the request itself).

A ``--script`` file is JSON: ``{"models": [<add_model kwargs>...],
"chat": [<enqueue_chat kwargs>...], "origins": "*", "keep_default_models": true}``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "0.12.3"  # what /api/version reports
HOLD_TIMEOUT = 30.0  # a held chunk is released after this long so a broken test cannot hang forever

# Ollama's envconfig.AllowedOrigins(): OLLAMA_ORIGINS entries first, then these.
DEFAULT_ORIGINS = tuple(
    f"{scheme}://{host}{port}"
    for host in ("localhost", "127.0.0.1", "0.0.0.0")
    for scheme in ("http", "https")
    for port in ("", ":*")
) + ("app://*", "file://*", "tauri://*", "vscode-webview://*", "vscode-file://*")

ALLOW_METHODS = "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS"
ALLOW_HEADERS = "Authorization,Content-Type,User-Agent,Accept,X-Requested-With,X-Stainless-Lang"
MAX_AGE = "43200"  # gin-contrib/cors DefaultConfig: 12 hours

# name -> (capabilities, family, context length, embedding dims)
DEFAULT_MODELS = {
    "llama3.2:3b": (("completion", "tools"), "llama", 131072, 3072),
    "qwen3:4b": (("completion", "tools", "thinking"), "qwen3", 40960, 2560),
    "gemma3:4b": (("completion", "vision"), "gemma3", 131072, 2560),
    "embeddinggemma:latest": (("embedding",), "gemma3", 2048, 768),
    "all-minilm:latest": (("embedding",), "bert", 256, 384),
}
# Names /api/pull can fetch (besides models already installed).
PULLABLE = ("nomic-embed-text:latest", "mxbai-embed-large:latest", "llama3.2:1b", "qwen3:0.6b")


def origin_allowed(origin: str, extra: tuple[str, ...] = ()) -> bool:
    """gin-contrib/cors matching with AllowWildcard: exact or one-``*`` pattern.

    >>> origin_allowed("http://localhost:5173"), origin_allowed("null")
    (True, False)
    >>> origin_allowed("null", ("*",))
    True
    """
    patterns = tuple(extra) + DEFAULT_ORIGINS
    if "*" in patterns:
        return True
    for pattern in patterns:
        if "*" in pattern:
            prefix, _, suffix = pattern.partition("*")
            if origin.startswith(prefix) and origin.endswith(suffix) and len(origin) >= len(pattern) - 1:
                return True
        elif origin == pattern:
            return True
    return False


def canonical(name: str) -> str:
    """Ollama names without a tag mean ``:latest``."""
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


_WORD = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


_TASK_PREFIX = re.compile(r"^(task: [^|]*\| query: |title: [^|]*\| text: |search_(query|document): )")


def embed_text(text: str, dims: int) -> list[float]:
    """Hashed bag of words (plus word bigrams), L2-normalised.

    Texts sharing words get a positive cosine; identical texts get 1.0.
    md5 rather than hash() so vectors are the same in every process.  The task
    prefixes real embedding models expect are read, not embedded, as a model would.
    """
    vec = [0.0] * dims
    words = tokens(_TASK_PREFIX.sub("", text))
    feats = words + [a + " " + b for a, b in zip(words, words[1:])]
    for feat in feats:
        digest = hashlib.md5(feat.encode("utf-8")).digest()
        index = int.from_bytes(digest[:4], "little") % dims
        vec[index] += 1.0
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:
        vec[0], norm = 1.0, 1.0
    return [v / norm for v in vec]


@dataclass
class Model:
    name: str
    capabilities: tuple[str, ...] = ("completion",)
    family: str = "llama"
    context_length: int = 4096
    embedding_length: int = 768
    caps_in_tags: bool = True  # False mimics servers older than the `capabilities` field in /api/tags


@dataclass
class ChatReply:
    content: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)
    error: str | None = None  # sent as a final {"error": ...} line after the chunks
    done_reason: str = "stop"
    delay: float = 0.0  # seconds before every chunk after the first (demos in a browser)
    hold: threading.Event | None = None  # wait for this before every chunk after the first


@dataclass
class Recorded:
    method: str
    path: str
    origin: str | None
    headers: dict
    body: object  # parsed JSON, raw text, or None


class OllamaStub:
    def __init__(self, port: int = 0, origins=None, *, host: str = "127.0.0.1", default_models: bool = True):
        if isinstance(origins, str):
            origins = [o.strip() for o in origins.split(",") if o.strip()]
        self.origins = tuple(origins or ())
        self.host, self.port = host, port
        self.models: dict[str, Model] = {}
        self.chat_queue: collections.deque[ChatReply] = collections.deque()
        self.requests: list[Recorded] = []
        self.embed_counts: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        if default_models:
            for name, (caps, family, ctx, dims) in DEFAULT_MODELS.items():
                self.add_model(name, caps, family=family, context_length=ctx, embedding_length=dims)

    # --- scripting -----------------------------------------------------
    def add_model(self, name, capabilities=("completion",), *, family="llama", context_length=4096,
                  embedding_length=768, caps_in_tags=True) -> Model:
        model = Model(canonical(name), tuple(capabilities), family, context_length, embedding_length, caps_in_tags)
        self.models[model.name] = model
        return model

    def remove_model(self, name: str) -> None:
        self.models.pop(canonical(name), None)

    def enqueue_chat(self, content="", *, thinking=(), tool_calls=(), error=None, done_reason="stop",
                     delay=0.0, hold=None) -> ChatReply:
        """Queue the next /api/chat, /api/generate or /v1/chat/completions answer.

        ``content``/``thinking`` are a string (one chunk) or a list of chunks;
        ``tool_calls`` are ``{"name", "arguments"}`` or Ollama's ``{"function": {...}}``.
        """
        as_chunks = lambda x: [x] if isinstance(x, str) else list(x)  # noqa: E731
        calls = [c if "function" in c else {"function": dict(c)} for c in tool_calls]
        reply = ChatReply(as_chunks(content) if content else [], as_chunks(thinking) if thinking else [],
                          calls, error, done_reason, delay, hold)
        with self.lock:
            self.chat_queue.append(reply)
        return reply

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]

    def bodies(self, path: str) -> list:
        return [r.body for r in self.requests if r.path == path and r.method != "OPTIONS"]

    # --- lifecycle -----------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "OllamaStub":
        handler = type("Handler", (_Handler,), {"stub": self})
        self._server = ThreadingHTTPServer((self.host, self.port), handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def next_reply(self, last_user: str) -> ChatReply:
        with self.lock:
            if self.chat_queue:
                return self.chat_queue.popleft()
        return ChatReply(content=[f"stub reply to: {last_user}"])


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


def _durations(prompt_tokens: int, eval_tokens: int) -> dict:
    return {"total_duration": 123456789, "load_duration": 1234567, "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": 2345678, "eval_count": eval_tokens, "eval_duration": 98765432}


class _HTTPError(Exception):
    def __init__(self, status: int, message: str):
        self.status, self.message = status, message


class _Handler(BaseHTTPRequestHandler):
    stub: OllamaStub
    protocol_version = "HTTP/1.1"
    server_version = "ollama-stub"

    def log_message(self, *args):  # keep test output clean
        pass

    # --- plumbing ------------------------------------------------------
    def _origin_ok(self) -> bool:
        origin = self.headers.get("Origin")
        return origin is None or origin_allowed(origin, self.stub.origins)

    def _cors_headers(self) -> None:
        origin = self.headers.get("Origin")
        if origin is None:
            return
        if "*" in self.stub.origins:
            self.send_header("Access-Control-Allow-Origin", "*")
        else:
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")

    def _record(self, body) -> None:
        rec = Recorded(self.command, self.path.split("?")[0], self.headers.get("Origin"), dict(self.headers), body)
        with self.stub.lock:
            self.stub.requests.append(rec)

    def _send_empty(self, status: int, cors: bool) -> None:
        self.send_response(status)
        if cors:
            self._cors_headers()
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _send_json(self, obj, status: int = 200) -> None:
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self._cors_headers()
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self._cors_headers()
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    # --- dispatch ------------------------------------------------------
    def do_OPTIONS(self):
        self._record(None)
        if not self._origin_ok():
            return self._send_empty(403, cors=False)
        self.send_response(204)
        self._cors_headers()
        self.send_header("Access-Control-Allow-Methods", ALLOW_METHODS)
        self.send_header("Access-Control-Allow-Headers", ALLOW_HEADERS)
        self.send_header("Access-Control-Max-Age", MAX_AGE)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self._record(None)
        self._send_empty(200 if self._origin_ok() else 403, cors=self._origin_ok())

    def do_GET(self):
        self._dispatch(None)

    def do_POST(self):
        self._dispatch(self._body())

    def do_DELETE(self):
        self._dispatch(self._body())

    def _dispatch(self, body):
        self._record(body)
        if not self._origin_ok():
            return self._send_empty(403, cors=False)
        path = self.path.split("?")[0].rstrip("/") or "/"
        route = ROUTES.get((self.command, path))
        openai = path.startswith("/v1/")
        try:
            if route is None:
                if path == "/" and self.command == "GET":
                    return self._send_text("Ollama is running")
                raise _HTTPError(404, "404 page not found")
            if body is not None and not isinstance(body, dict):
                raise _HTTPError(400, "invalid request body")
            route(self, body or {})
        except _HTTPError as err:
            if openai:
                self._send_json({"error": {"message": err.message, "type": "invalid_request_error",
                                           "param": None, "code": None}}, err.status)
            else:
                self._send_json({"error": err.message}, err.status)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client hung up (stop button); nothing more to say

    def _send_text(self, text: str) -> None:
        data = text.encode()
        self.send_response(200)
        self._cors_headers()
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    # --- helpers shared by routes -------------------------------------------
    def _model(self, body, need: str | None = None) -> Model:
        name = body.get("model") or body.get("name") or ""
        if not name:
            raise _HTTPError(400, "model is required")
        model = self.stub.models.get(canonical(name))
        if model is None:
            raise _HTTPError(404, f'model "{name}" not found, try pulling it first')
        if need == "chat" and "completion" not in model.capabilities:
            raise _HTTPError(400, f'"{name}" does not support chat')
        if need == "generate" and "completion" not in model.capabilities:
            raise _HTTPError(400, f'"{name}" does not support generate')
        if need == "embed" and "embedding" not in model.capabilities:
            raise _HTTPError(400, f'"{name}" does not support embeddings')
        return model

    def _check_think(self, body, model: Model) -> bool:
        think = body.get("think")
        if think and "thinking" not in model.capabilities:
            raise _HTTPError(400, f'"{body["model"]}" does not support thinking')
        return bool(think)

    def _wait(self, reply: ChatReply, index: int) -> None:
        if index == 0:
            return
        if reply.hold is not None:
            reply.hold.wait(HOLD_TIMEOUT)
        if reply.delay:
            time.sleep(reply.delay)

    def _embed_inputs(self, body, model: Model, key="input") -> tuple[list[list[float]], int]:
        raw = body.get(key, [])
        texts = [raw] if isinstance(raw, str) else list(raw)
        if not all(isinstance(t, str) for t in texts):
            raise _HTTPError(400, "invalid input type")
        truncate = body.get("truncate", True)
        dims = body.get("dimensions") or model.embedding_length
        if dims > model.embedding_length or dims < 1:
            raise _HTTPError(400, f"invalid dimensions {dims}")
        vectors, count = [], 0
        for text in texts:
            words = tokens(text)
            if len(words) > model.context_length:
                if not truncate:
                    raise _HTTPError(400, "the input length exceeds the context length")
                text = " ".join(words[: model.context_length])
                words = words[: model.context_length]
            count += len(words)
            vec = embed_text(text, model.embedding_length)[:dims]
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            vectors.append([v / norm for v in vec])
        with self.stub.lock:
            self.stub.embed_counts[model.name] += len(texts)
        return vectors, count


def _last_user(messages) -> str:
    for msg in reversed(messages or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return str(msg.get("content", ""))
    return ""


# --- native API routes -------------------------------------------------------
def _version(h: _Handler, body):
    h._send_json({"version": VERSION})


def _details(m: Model) -> dict:
    return {"parent_model": "", "format": "gguf", "family": m.family, "families": [m.family],
            "parameter_size": "3.2B" if "embedding" not in m.capabilities else "300M",
            "quantization_level": "Q4_K_M" if "embedding" not in m.capabilities else "F16"}


def _tags(h: _Handler, body):
    models = []
    for m in h.stub.models.values():
        entry = {"name": m.name, "model": m.name, "modified_at": "2025-06-01T10:00:00.000000000Z",
                 "size": 2019393189, "digest": hashlib.sha256(m.name.encode()).hexdigest(), "details": _details(m)}
        if m.caps_in_tags:
            entry["capabilities"] = list(m.capabilities)
        models.append(entry)
    h._send_json({"models": models})


def _show(h: _Handler, body):
    m = h._model(body)
    h._send_json({
        "modelfile": f"FROM {m.name}\n", "parameters": "", "template": "{{ .Prompt }}",
        "details": _details(m),
        "model_info": {"general.architecture": m.family, f"{m.family}.context_length": m.context_length,
                       f"{m.family}.embedding_length": m.embedding_length},
        "capabilities": list(m.capabilities), "modified_at": "2025-06-01T10:00:00.000000000Z",
    })


def _embed(h: _Handler, body):
    m = h._model(body, "embed")
    vectors, count = h._embed_inputs(body, m)
    h._send_json({"model": body["model"], "embeddings": vectors, "total_duration": 14143917,
                  "load_duration": 1019500, "prompt_eval_count": count})


def _chat(h: _Handler, body):
    m = h._model(body, "chat")
    think = h._check_think(body, m)
    reply = h.stub.next_reply(_last_user(body.get("messages")))
    head = {"model": body["model"]}
    thinking = reply.thinking if think else []
    pieces = [("thinking", t) for t in thinking] + [("content", c) for c in reply.content]
    pieces, done_reason = _bounded(pieces, (body.get("options") or {}).get("num_predict"), reply.done_reason)
    prompt_tokens = sum(len(tokens(str(x.get("content", "")))) for x in body.get("messages") or [])
    final_stats = _durations(prompt_tokens, len(pieces) + len(reply.tool_calls))
    if not body.get("stream", True):
        if reply.error:
            raise _HTTPError(500, reply.error)
        message = {"role": "assistant", "content": "".join(t for k, t in pieces if k == "content")}
        if thinking:
            message["thinking"] = "".join(t for k, t in pieces if k == "thinking")
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        return h._send_json({**head, "created_at": _now(), "message": message, "done": True,
                             "done_reason": done_reason, **final_stats})
    h._start_stream("application/x-ndjson")
    for i, (kind, text) in enumerate(pieces):
        h._wait(reply, i)
        message = {"role": "assistant", "content": text if kind == "content" else ""}
        if kind == "thinking":
            message["thinking"] = text
        h._chunk(json.dumps({**head, "created_at": _now(), "message": message, "done": False}) + "\n")
    if reply.tool_calls:
        h._wait(reply, len(pieces))
        message = {"role": "assistant", "content": "", "tool_calls": reply.tool_calls}
        h._chunk(json.dumps({**head, "created_at": _now(), "message": message, "done": False}) + "\n")
    if reply.error:
        h._chunk(json.dumps({"error": reply.error}) + "\n")
    else:
        h._chunk(json.dumps({**head, "created_at": _now(), "message": {"role": "assistant", "content": ""},
                             "done": True, "done_reason": done_reason, **final_stats}) + "\n")
    h._end_stream()


def _bounded(pieces: list, limit, reason: str) -> tuple[list, str]:
    """Ollama stops at ``options.num_predict`` tokens (thinking included) with ``done_reason``
    ``length``; here one queued chunk counts as one token."""
    if isinstance(limit, int) and 0 <= limit < len(pieces):
        return pieces[:limit], "length"
    return pieces, reason


def _generate(h: _Handler, body):
    m = h._model(body, "generate")
    think = h._check_think(body, m)
    reply = h.stub.next_reply(str(body.get("prompt", "")))
    thinking = reply.thinking if think else []
    pieces = [("thinking", t) for t in thinking] + [("response", c) for c in reply.content]
    pieces, done_reason = _bounded(pieces, (body.get("options") or {}).get("num_predict"), reply.done_reason)
    stats = _durations(len(tokens(str(body.get("prompt", "")))), len(pieces))
    head = {"model": body["model"]}
    if not body.get("stream", True):
        out = {**head, "created_at": _now(), "response": "".join(t for k, t in pieces if k == "response"),
               "done": True, "done_reason": done_reason, **stats}
        if thinking:
            out["thinking"] = "".join(t for k, t in pieces if k == "thinking")
        return h._send_json(out)
    h._start_stream("application/x-ndjson")
    for i, (kind, text) in enumerate(pieces):
        h._wait(reply, i)
        line = {**head, "created_at": _now(), "response": text if kind == "response" else "", "done": False}
        if kind == "thinking":
            line["thinking"] = text
        h._chunk(json.dumps(line) + "\n")
    if reply.error:
        h._chunk(json.dumps({"error": reply.error}) + "\n")
    else:
        h._chunk(json.dumps({**head, "created_at": _now(), "response": "", "done": True,
                             "done_reason": done_reason, **stats}) + "\n")
    h._end_stream()


def _pull(h: _Handler, body):
    name = body.get("model") or body.get("name") or ""
    known = canonical(name) in h.stub.models or canonical(name) in PULLABLE
    digest = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    if not body.get("stream", True):
        if not known:
            raise _HTTPError(500, "pull model manifest: file does not exist")
        _install(h.stub, name)
        return h._send_json({"status": "success"})
    h._start_stream("application/x-ndjson")
    h._chunk(json.dumps({"status": "pulling manifest"}) + "\n")
    if not known:
        h._chunk(json.dumps({"error": "pull model manifest: file does not exist"}) + "\n")
        return h._end_stream()
    total = 1000
    for done in (0, 250, 500, 1000):
        h._chunk(json.dumps({"status": f"pulling {digest[7:19]}", "digest": digest,
                             "total": total, "completed": done}) + "\n")
    for status in ("verifying sha256 digest", "writing manifest", "success"):
        h._chunk(json.dumps({"status": status}) + "\n")
    _install(h.stub, name)
    h._end_stream()


def _install(stub: OllamaStub, name: str) -> None:
    if canonical(name) not in stub.models:
        embedding = "embed" in name or "minilm" in name
        stub.add_model(name, ("embedding",) if embedding else ("completion",),
                       embedding_length=1024 if embedding else 2048)


# --- OpenAI-compatible routes ------------------------------------------------
def _v1_models(h: _Handler, body):
    h._send_json({"object": "list", "data": [
        {"id": m.name, "object": "model", "created": 1748772000, "owned_by": "library"}
        for m in h.stub.models.values()]})


def _v1_embeddings(h: _Handler, body):
    m = h._model(body, "embed")
    vectors, count = h._embed_inputs({**body, "truncate": True}, m)
    h._send_json({"object": "list", "model": body["model"],
                  "data": [{"object": "embedding", "embedding": v, "index": i} for i, v in enumerate(vectors)],
                  "usage": {"prompt_tokens": count, "total_tokens": count}})


def _v1_chat(h: _Handler, body):
    m = h._model(body, "chat")
    reply = h.stub.next_reply(_last_user(body.get("messages")))
    # Ollama's compat layer thinks when reasoning_effort is given; it sends `reasoning` deltas.
    think = bool(body.get("reasoning_effort")) and "thinking" in m.capabilities
    thinking = reply.thinking if think else []
    calls = [{"index": i, "id": f"call_{i:08d}", "type": "function",
              "function": {"name": c["function"]["name"], "arguments": json.dumps(c["function"].get("arguments", {}))}}
             for i, c in enumerate(reply.tool_calls)]
    pieces = [("reasoning", t) for t in thinking] + [("content", c) for c in reply.content]
    pieces, reason = _bounded(pieces, body.get("max_tokens", body.get("max_completion_tokens")), reply.done_reason)
    finish = "tool_calls" if calls else reason
    base = {"id": "chatcmpl-123", "created": int(time.time()), "model": body["model"], "system_fingerprint": "fp_ollama"}
    usage = {"prompt_tokens": 10, "completion_tokens": len(pieces), "total_tokens": 10 + len(pieces)}
    if not body.get("stream", False):
        if reply.error:
            raise _HTTPError(500, reply.error)
        message = {"role": "assistant", "content": "".join(t for k, t in pieces if k == "content")}
        if thinking:
            message["reasoning"] = "".join(t for k, t in pieces if k == "reasoning")
        if calls:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        return h._send_json({**base, "object": "chat.completion", "usage": usage,
                             "choices": [{"index": 0, "message": message, "finish_reason": finish}]})

    def event(delta, finish_reason=None):
        chunk = {**base, "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        h._chunk("data: " + json.dumps(chunk) + "\n\n")

    h._start_stream("text/event-stream")
    for i, (kind, text) in enumerate(pieces):
        h._wait(reply, i)
        event({"role": "assistant", "content": text if kind == "content" else "", **({kind: text} if kind != "content" else {})})
    if calls:
        event({"role": "assistant", "content": "", "tool_calls": calls})
    if reply.error:
        h._chunk("data: " + json.dumps({"error": {"message": reply.error, "type": "api_error"}}) + "\n\n")
    else:
        event({"role": "assistant", "content": ""}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            h._chunk("data: " + json.dumps({**base, "object": "chat.completion.chunk", "choices": [],
                                            "usage": usage}) + "\n\n")
        h._chunk("data: [DONE]\n\n")
    h._end_stream()


ROUTES = {
    ("GET", "/api/version"): _version,
    ("GET", "/api/tags"): _tags,
    ("POST", "/api/show"): _show,
    ("POST", "/api/embed"): _embed,
    ("POST", "/api/chat"): _chat,
    ("POST", "/api/generate"): _generate,
    ("POST", "/api/pull"): _pull,
    ("GET", "/v1/models"): _v1_models,
    ("POST", "/v1/embeddings"): _v1_embeddings,
    ("POST", "/v1/chat/completions"): _v1_chat,
}


def load_script(stub: OllamaStub, script: dict) -> None:
    if not script.get("keep_default_models", True):
        stub.models.clear()
    for spec in script.get("models", []):
        spec = dict(spec)
        stub.add_model(spec.pop("name"), tuple(spec.pop("capabilities", ("completion",))), **spec)
    for spec in script.get("chat", []):
        stub.enqueue_chat(**spec)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Fake Ollama server for Quire's tests.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--origins", default="", help="like OLLAMA_ORIGINS: comma-separated, '*' allows all")
    parser.add_argument("--script", help="JSON file with models and queued chat replies")
    args = parser.parse_args(argv)
    script = {}
    if args.script:
        with open(args.script, encoding="utf-8") as fh:
            script = json.load(fh)
    stub = OllamaStub(args.port, args.origins or script.get("origins"), host=args.host)
    load_script(stub, script)
    stub.start()
    print(f"READY {stub.url}", flush=True)
    try:
        stub._thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
