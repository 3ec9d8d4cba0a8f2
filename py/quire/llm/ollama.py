"""Ollama's native API (/api/*): pure request/response pieces and one async client.

    >>> chat_body("m", [{"role": "user", "content": "hi"}], think=True)["think"]
    True
"""

from __future__ import annotations

from contextlib import aclosing

from .events import LLMError, ModelInfo, PullProgress
from .parse import OllamaDecoder, Reply, http_error, ollama_events, parse_pull_line
from .transport import AsyncTransport

DEFAULT_URL = "http://127.0.0.1:11434"
EMBED_BATCH = 32  # texts per /api/embed call: big enough to amortise, small enough to show progress


# --- request bodies ------------------------------------------------------------------
def chat_body(model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
              options=None, keep_alive=None) -> dict:
    body: dict = {"model": model, "messages": messages, "stream": stream}
    if format is not None:
        body["format"] = format  # "json" or a JSON schema dict
    if tools:
        body["tools"] = tools
    if think is not None:
        body["think"] = think  # bool, or "low" | "medium" | "high"
    if options:
        body["options"] = options
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    return body


def embed_body(model: str, texts: list[str], *, truncate=True, dimensions=None, keep_alive=None) -> dict:
    body: dict = {"model": model, "input": texts, "truncate": truncate}
    if dimensions:
        body["dimensions"] = dimensions
    if keep_alive is not None:
        body["keep_alive"] = keep_alive
    return body


def batches(texts: list[str], size: int) -> list[list[str]]:
    """Split into runs of at most ``size``.

    >>> batches(["a", "b", "c"], 2)
    [['a', 'b'], ['c']]
    """
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    return [texts[i: i + size] for i in range(0, len(texts), size)]


def model_from_tag(entry: dict) -> ModelInfo:
    details = entry.get("details") or {}
    return ModelInfo(name=entry.get("name") or entry.get("model", ""), capabilities=list(entry.get("capabilities") or []),
                     family=details.get("family", ""), parameter_size=details.get("parameter_size", ""),
                     quantization=details.get("quantization_level", ""), size=entry.get("size", 0))


def add_show(info: ModelInfo, show: dict) -> ModelInfo:
    """Fill capabilities and lengths from /api/show (``model_info["<arch>.context_length"]``)."""
    info.capabilities = list(show.get("capabilities") or info.capabilities)
    model_info = show.get("model_info") or {}
    arch = model_info.get("general.architecture", "")
    info.context_length = model_info.get(f"{arch}.context_length", info.context_length)
    info.embedding_length = model_info.get(f"{arch}.embedding_length", info.embedding_length)
    return info


def embeddings_of(obj, expected: int) -> list[list[float]]:
    vectors = obj.get("embeddings") if isinstance(obj, dict) else None
    if not isinstance(vectors, list) or len(vectors) != expected:
        raise LLMError(f"expected {expected} embeddings, got {len(vectors) if isinstance(vectors, list) else 'none'}",
                       kind="protocol")
    return vectors


def _check_pull_end(last: PullProgress | None) -> None:
    if last is None or last.status != "success":
        raise LLMError("pull ended without success", kind="stream")


async def decode_reply(resp, decoder, streaming: bool, whole_events):
    """Events of one chat reply: line by line when streaming, else from the one JSON body.
    ``whole_events`` turns that body into events (Ollama and OpenAI shapes differ)."""
    try:
        if streaming:
            async for line in resp.iter_lines():
                for ev in decoder.feed(line):
                    yield ev
            for ev in decoder.close():
                yield ev
        else:
            for ev in decoder.reply.add(whole_events(await resp.json())):
                yield ev
    finally:
        await resp.close()


class ChatStream:
    """Iterate (``async for``) for events; ``reply`` keeps what arrived (also after an error);
    ``await close()`` is the stop button: it drops the connection."""

    def __init__(self, events, reply: Reply):
        self._events, self.reply = events, reply

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self._events.__anext__()

    async def close(self) -> None:
        await self._events.aclose()

    async def collect(self) -> Reply:
        async for _ in self:
            pass
        return self.reply


class OllamaClient:
    def __init__(self, base_url: str = DEFAULT_URL, transport: AsyncTransport | None = None):
        if transport is None:
            raise ValueError("OllamaClient needs an AsyncTransport: FetchTransport() in the tab, "
                             "quire.llm.transport.BlockingAsyncTransport() on CPython")
        self.base_url = base_url.rstrip("/")
        self.transport = transport

    async def _send(self, method: str, path: str, body=None, stream=False):
        resp = await self.transport.request(method, self.base_url + path, body, stream)
        if resp.status >= 400:
            raise http_error(resp.status, await resp.text())
        return resp

    async def version(self) -> str:
        return (await (await self._send("GET", "/api/version")).json())["version"]

    async def show(self, model: str) -> dict:
        return await (await self._send("POST", "/api/show", {"model": model})).json()

    async def tags(self) -> list[ModelInfo]:
        obj = await (await self._send("GET", "/api/tags")).json()
        models = [model_from_tag(e) for e in obj.get("models", [])]
        for info in models:
            if not info.capabilities:
                add_show(info, await self.show(info.name))
        return models

    async def embed(self, model: str, texts, *, batch_size: int = EMBED_BATCH, truncate=True, dimensions=None,
                    keep_alive=None, progress=None) -> list[list[float]]:
        texts = [texts] if isinstance(texts, str) else list(texts)
        out: list[list[float]] = []
        for batch in batches(texts, batch_size):
            body = embed_body(model, batch, truncate=truncate, dimensions=dimensions, keep_alive=keep_alive)
            out += embeddings_of(await (await self._send("POST", "/api/embed", body)).json(), len(batch))
            if progress:
                progress(len(out), len(texts))
        return out

    def chat(self, model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
             options=None, keep_alive=None) -> ChatStream:
        body = chat_body(model, messages, stream=stream, format=format, tools=tools, think=think,
                         options=options, keep_alive=keep_alive)
        decoder = OllamaDecoder()
        return ChatStream(self._chat_events(body, decoder), decoder.reply)

    async def _chat_events(self, body: dict, decoder: OllamaDecoder):
        resp = await self._send("POST", "/api/chat", body, body["stream"])
        # aclosing: a Stop (closing this generator) must close the response at once, not at GC time
        async with aclosing(decode_reply(resp, decoder, body["stream"], ollama_events)) as events:
            async for ev in events:
                yield ev

    async def pull(self, model: str):
        resp = await self._send("POST", "/api/pull", {"model": model, "stream": True}, True)
        last = None
        try:
            async for line in resp.iter_lines():
                progress = parse_pull_line(line)
                if progress:
                    last = progress
                    yield progress
        finally:
            await resp.close()
        _check_pull_end(last)
