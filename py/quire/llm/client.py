"""What every model-server client shares: sending over an ``AsyncTransport``,
batching embeddings, and turning a chat response into a ``ChatStream``.

``OllamaClient`` and ``OpenAICompatClient`` differ only in paths, bodies and
decoders; both inherit ``HttpClient``.

    >>> batches(["a", "b", "c"], 2)
    [['a', 'b'], ['c']]
"""

from __future__ import annotations

from contextlib import aclosing

from .parse import Reply, http_error
from .transport import AsyncTransport

EMBED_BATCH = 32  # texts per embedding call: big enough to amortise, small enough to show progress


def batches(texts: list[str], size: int) -> list[list[str]]:
    """Split into runs of at most ``size``."""
    if size < 1:
        raise ValueError("batch_size must be at least 1")
    return [texts[i: i + size] for i in range(0, len(texts), size)]


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


class HttpClient:
    """``base_url`` plus a transport; subclasses add the server's endpoints."""

    def __init__(self, base_url: str, transport: AsyncTransport | None, headers: dict | None = None):
        if transport is None:
            raise ValueError(f"{type(self).__name__} needs an AsyncTransport: FetchTransport() in the tab, "
                             "quire.llm.transport.BlockingAsyncTransport() on CPython")
        self.base_url = base_url.rstrip("/")
        self.transport = transport
        # Sent with every request (an API key); passed only when there are some, so a transport
        # written before keys existed still works for keyless servers.
        self.headers = dict(headers or {})

    async def _request(self, method: str, url: str, body=None, stream=False):
        extra = {"headers": self.headers} if self.headers else {}
        return await self.transport.request(method, url, body, stream, **extra)

    async def _send(self, method: str, path: str, body=None, stream=False):
        resp = await self._request(method, self.base_url + path, body, stream)
        if resp.status >= 400:
            text = await resp.text()
            secret = self.headers.get("Authorization", "").removeprefix("Bearer ") or self.headers.get("x-api-key", "")
            if secret:  # a server may quote the key it refused: it must not reach a message or a report
                text = text.replace(secret, "[API key]")
            header = getattr(resp, "header", None)
            raise http_error(resp.status, text, header("retry-after") if header else None)
        return resp

    async def _json(self, method: str, path: str, body=None):
        return await (await self._send(method, path, body)).json()

    async def _embed_batches(self, texts, batch_size: int, progress, embed_batch) -> list[list[float]]:
        """``embed_batch(batch)`` awaits one call's vectors; ``progress(done, total)`` after each."""
        texts = [texts] if isinstance(texts, str) else list(texts)
        out: list[list[float]] = []
        for batch in batches(texts, batch_size):
            out += await embed_batch(batch)
            if progress:
                progress(len(out), len(texts))
        return out

    def _chat(self, path: str, body: dict, decoder, whole_events) -> ChatStream:
        return ChatStream(self._chat_events(path, body, decoder, whole_events), decoder.reply)

    async def _chat_events(self, path: str, body: dict, decoder, whole_events):
        resp = await self._send("POST", path, body, body["stream"])
        # aclosing: a Stop (closing this generator) must close the response at once, not at GC time
        async with aclosing(decode_reply(resp, decoder, body["stream"], whole_events)) as events:
            async for ev in events:
                yield ev
