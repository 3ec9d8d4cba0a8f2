"""Ollama's native API (/api/*): pure request/response pieces and the client.

    >>> chat_body("m", [{"role": "user", "content": "hi"}], think=True)["think"]
    True
"""

from __future__ import annotations

from .client import EMBED_BATCH, ChatStream, HttpClient
from .events import LLMError, ModelInfo, PullProgress
from .parse import OllamaDecoder, ollama_events, parse_pull_line
from .transport import AsyncTransport

DEFAULT_URL = "http://127.0.0.1:11434"


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


class OllamaClient(HttpClient):
    def __init__(self, base_url: str = DEFAULT_URL, transport: AsyncTransport | None = None):
        super().__init__(base_url, transport)

    async def version(self) -> str:
        return (await self._json("GET", "/api/version"))["version"]

    async def show(self, model: str) -> dict:
        return await self._json("POST", "/api/show", {"model": model})

    async def tags(self) -> list[ModelInfo]:
        """Installed models; asks /api/show for servers whose tags lack capabilities."""
        models = [model_from_tag(e) for e in (await self._json("GET", "/api/tags")).get("models", [])]
        for info in models:
            if not info.capabilities:
                add_show(info, await self.show(info.name))
        return models

    async def embed(self, model: str, texts, *, batch_size: int = EMBED_BATCH, truncate=True, dimensions=None,
                    keep_alive=None, progress=None) -> list[list[float]]:
        """One vector per text, in order; ``progress(done, total)`` after each batch."""
        async def one(batch):
            body = embed_body(model, batch, truncate=truncate, dimensions=dimensions, keep_alive=keep_alive)
            return embeddings_of(await self._json("POST", "/api/embed", body), len(batch))

        return await self._embed_batches(texts, batch_size, progress, one)

    def chat(self, model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
             options=None, keep_alive=None) -> ChatStream:
        body = chat_body(model, messages, stream=stream, format=format, tools=tools, think=think,
                         options=options, keep_alive=keep_alive)
        return self._chat("/api/chat", body, OllamaDecoder(), ollama_events)

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
