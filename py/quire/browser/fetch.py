"""fetch as the LLM transport (``quire.llm.transport.AsyncTransport``), and the page's
network log of every request the engine makes."""

from __future__ import annotations

import json

import js
from pyodide.ffi import JsException

from quire.browser.idb import js_value
from quire.browser.page import notify
from quire.llm.events import LLMError


class FetchResponse:
    def __init__(self, resp):
        self.resp, self.status, self._reader = resp, int(resp.status), None

    async def text(self) -> str:
        return str(await self.resp.text())

    def header(self, name: str) -> str | None:
        """A response header the server exposes to this page (CORS), or None."""
        value = self.resp.headers.get(name)
        return None if value is None else str(value)

    async def json(self):
        text = await self.text()
        try:
            return json.loads(text)
        except ValueError as exc:
            raise LLMError(f"the server sent something that is not JSON: {text[:120]!r}", kind="protocol") from exc

    async def iter_lines(self):
        self._reader = self.resp.body.getReader()
        decoder = js.TextDecoder.new()
        stream = js_value({"stream": True})
        buf = ""
        while True:
            chunk = await self._reader.read()
            if chunk.done:
                break
            buf += decoder.decode(chunk.value, stream)
            *lines, buf = buf.split("\n")
            for line in lines:
                yield line
        buf += decoder.decode()
        if buf:
            yield buf

    async def close(self) -> None:
        if self._reader is not None:
            try:
                await self._reader.cancel()
            except JsException:
                pass


def _note_request(method: str, url: str) -> None:
    """Tell the page about a request the engine makes (the privacy view's network log, from the
    document event ``quire:engine-request``); the page cannot see a worker's resource timings itself."""
    notify({"kind": "request", "method": method, "url": url})


class FetchTransport:
    """``quire.llm.transport.AsyncTransport`` over the worker's ``fetch``."""

    async def request(self, method, url, body=None, stream=False, headers=None):
        _note_request(method, url)  # the address only: never the headers (an API key)
        init = {"method": method, "credentials": "omit", "referrerPolicy": "no-referrer"}
        sent = dict(headers or {})
        if body is not None:
            init["body"] = json.dumps(body)
            sent["Content-Type"] = "application/json"
        if sent:
            init["headers"] = sent
        try:
            resp = await js.fetch(url, js_value(init))
        except JsException as exc:  # "Failed to fetch": refused, CORS, offline: diagnosis tells which
            raise LLMError(f"could not reach {url}: {exc}", kind="connection") from None
        return FetchResponse(resp)


async def probe(url: str, mode: str) -> bool:
    """Does anything answer at ``url`` when asked in this fetch ``mode``?"""
    _note_request("GET", url)
    try:
        await js.fetch(url, js_value({"mode": mode, "credentials": "omit"}))
        return True
    except JsException:
        return False


