"""OpenAI-compatible servers (llama.cpp ``llama-server``, LM Studio, Ollama's /v1):
the same client surface as ``OllamaClient``, translated at the edges.

Quire keeps its history in Ollama's shape; ``openai_messages`` converts it:

    >>> openai_messages([{"role": "tool", "content": "4", "tool_name": "calculator"}])
    [{'role': 'tool', 'content': '4', 'tool_call_id': 'call_0'}]
"""

from __future__ import annotations

import json

from .client import EMBED_BATCH, ChatStream, HttpClient
from .events import LLMError, ModelInfo
from .parse import OpenAIDecoder, openai_reply_events
from .settings import provider
from .transport import AsyncTransport

OPTION_NAMES = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop",
                "num_predict": "max_tokens"}  # Ollama option -> OpenAI field; the rest (num_ctx...) is server-side


def api_root(base_url: str) -> str:
    """The /v1 root, whether or not the user typed it; Gemini's OpenAI-compatible root ends in /openai.

    >>> api_root("http://127.0.0.1:8080"), api_root("http://localhost:1234/v1/")
    ('http://127.0.0.1:8080/v1', 'http://localhost:1234/v1')
    >>> api_root("https://generativelanguage.googleapis.com/v1beta/openai")
    'https://generativelanguage.googleapis.com/v1beta/openai'
    """
    base = base_url.rstrip("/")
    return base if base.endswith(("/v1", "/openai")) else base + "/v1"


def _image_part(b64: str) -> dict:
    mime = "image/png" if b64.startswith("iVBOR") else "image/jpeg"
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{b64}"}}


def openai_messages(messages: list[dict]) -> list[dict]:
    """Ollama-shaped history -> OpenAI: tool-call arguments become JSON strings with ids,
    tool results answer the id of the call they follow, images become content parts."""
    out, pending = [], []  # ids of the last assistant turn's calls, in order
    counter = 0
    for msg in messages:
        role, new = msg.get("role"), {"role": msg.get("role"), "content": msg.get("content", "")}
        if msg.get("images"):
            new["content"] = [{"type": "text", "text": msg.get("content", "")}] + [_image_part(i) for i in msg["images"]]
        if role == "assistant" and msg.get("tool_calls"):
            calls = []
            for call in msg["tool_calls"]:
                fn = call.get("function", {})
                call_id = call.get("id") or f"call_{counter}"
                counter += 1
                args = fn.get("arguments", {})
                calls.append({"id": call_id, "type": "function", "function": {
                    "name": fn.get("name", ""), "arguments": args if isinstance(args, str) else json.dumps(args)}})
            new["tool_calls"] = calls
            pending = [c["id"] for c in calls]
        if role == "tool":
            new["tool_call_id"] = msg.get("tool_call_id") or (pending.pop(0) if pending else f"call_{counter}")
        out.append(new)
    return out


def response_format(format, strict: bool = True) -> dict | None:
    """``strict`` False for a cloud provider: OpenAI's strict mode refuses (400) schemas with length
    bounds or optional fields, which Quire's bounded schemas have; the schema still guides the model,
    ``max_tokens`` bounds the reply and Quire validates every item itself."""
    if format is None:
        return None
    if format == "json":
        return {"type": "json_object"}
    if isinstance(format, dict):
        return {"type": "json_schema", "json_schema": {"name": "reply", "strict": strict, "schema": format}}
    raise ValueError(f"format must be 'json' or a JSON schema dict, not {format!r}")


def chat_body(model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
              options=None, strict: bool = True) -> dict:
    body: dict = {"model": model, "messages": openai_messages(messages), "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    fmt = response_format(format, strict)
    if fmt:
        body["response_format"] = fmt
    if tools:
        body["tools"] = tools
    if think:
        body["reasoning_effort"] = think if isinstance(think, str) else "medium"
    for key, value in (options or {}).items():
        if key in OPTION_NAMES:
            body[OPTION_NAMES[key]] = value
    return body


def embeddings_of(obj, expected: int) -> list[list[float]]:
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, list) or len(data) != expected:
        raise LLMError(f"expected {expected} embeddings", kind="protocol")
    return [d["embedding"] for d in sorted(data, key=lambda d: d.get("index", 0))]


def models_of(obj) -> list[ModelInfo]:
    """``/v1/models`` entries; llama-server adds ``meta.n_ctx`` (the context it was started with).

    >>> [(m.name, m.context_length) for m in models_of({"data": [{"id": "g", "meta": {"n_ctx": 4096}}]})]
    [('g', 4096)]
    """
    out = []
    for m in obj.get("data") or []:
        meta = m.get("meta") if isinstance(m.get("meta"), dict) else {}
        out.append(ModelInfo(name=m.get("id", ""), owned_by=str(m.get("owned_by") or ""),
                             context_length=meta.get("n_ctx") or None))
    return out


def server_caps(props: dict) -> dict:
    """What llama-server's ``/props`` says about the loaded model: ``tools`` (its chat template
    renders tools; without that the server silently ignores them) and ``context_length``.
    Missing fields stay ``None`` (unknown), never a guess.

    >>> server_caps({"chat_template_caps": {"supports_tools": False}, "default_generation_settings": {"n_ctx": 8192}})
    {'tools': False, 'context_length': 8192}
    >>> server_caps({})
    {'tools': None, 'context_length': None}
    """
    caps = props.get("chat_template_caps") if isinstance(props.get("chat_template_caps"), dict) else {}
    settings = props.get("default_generation_settings") if isinstance(props.get("default_generation_settings"), dict) else {}
    tools = caps.get("supports_tools", caps.get("supports_tool_calls"))
    n_ctx = settings.get("n_ctx") or props.get("n_ctx")
    return {"tools": None if tools is None else bool(tools), "context_length": int(n_ctx) if n_ctx else None}


_NO_PULL = "this server cannot download models; load the model in LM Studio or start llama-server with it"


class OpenAICompatClient(HttpClient):
    def __init__(self, base_url: str, transport: AsyncTransport | None = None, api_key: str = ""):
        # A key goes as ``Authorization: Bearer``, as OpenAI, Gemini's OpenAI-compatible endpoint
        # and ``llama-server --api-key`` expect it.
        super().__init__(api_root(base_url), transport, {"Authorization": f"Bearer {api_key}"} if api_key else None)
        self.provider = provider(base_url)  # "" unless a cloud preset (OpenAI, Google Gemini)

    async def version(self) -> str:
        await self._json("GET", "/models")  # reachability; these servers have no version endpoint
        return "openai-compatible"

    async def tags(self) -> list[ModelInfo]:
        """Names (and llama-server's context size); capabilities come from ``props``."""
        return models_of(await self._json("GET", "/models"))

    async def props(self) -> dict:
        """``server_caps`` of llama-server's ``/props`` (next to /v1); servers without it
        (LM Studio, Ollama's /v1) give all-unknown."""
        if self.provider:  # a cloud provider has no /props: not asked (tools offered, the context its own)
            return server_caps({})
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        resp = await self._request("GET", root + "/props", None, False)
        if resp.status >= 400:
            await resp.text()
            return server_caps({})
        try:
            body = await resp.json()
        except LLMError:
            return server_caps({})
        return server_caps(body if isinstance(body, dict) else {})

    async def embed(self, model: str, texts, *, batch_size: int = EMBED_BATCH, progress=None, input_type=None, **_):
        """``input_type`` ("query" / "passage"): for servers that add the model's prefixes themselves."""
        extra = {"input_type": input_type} if input_type else {}

        async def one(batch):
            body = {"model": model, "input": batch, **extra}
            return embeddings_of(await self._json("POST", "/embeddings", body), len(batch))

        return await self._embed_batches(texts, batch_size, progress, one)

    def chat(self, model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
             options=None, keep_alive=None) -> ChatStream:
        body = chat_body(model, messages, stream=stream, format=format, tools=tools, think=think, options=options,
                         strict=not self.provider)
        return self._chat("/chat/completions", body, OpenAIDecoder(), openai_reply_events)

    async def pull(self, model: str):
        raise LLMError(_NO_PULL, kind="http", status=501)
        yield  # pragma: no cover  (makes this an async generator like the Ollama one)
