"""The worker's bridge: IndexedDB as a ``quire.store`` store, fetch as the LLM transport,
and the dispatcher for calls from the page.

This is the only module that imports ``js`` / ``pyodide``; the engine worker imports it,
CPython never does.  The page calls ``dispatch(method, args_json, id, payload)``; the
answer goes back as JSON, progress as ``{"type": "event"}`` messages.
"""

from __future__ import annotations

import importlib
import json
import traceback

import js
from pyodide.ffi import JsException, to_js

from quire.app import Quire
from quire.library import LibraryError, TrainCancelled
from quire.llm.events import LLMError
from quire.services import Context
from quire.store import BUCKETS, StoreFullError

STORE_VERSION = 2  # bump when BUCKETS changes: the browser then creates the new object stores
# quire.services.<name> modules.  The first group is on the boot path (the library and search
# must answer as soon as the engine is up); the rest load right after, off the critical path.
SERVICES = ["library", "llm", "embeddings"]
LATER_SERVICES = ["chat", "study", "progress", "vault"]

_engine: Quire | None = None
_cancelled: set[int] = set()


def _to_js(value):
    return to_js(value, dict_converter=js.Object.fromEntries)


def _from_js(value, default=None):
    if value is None or value is js.undefined:
        return default
    if isinstance(value, str):
        return json.loads(value)
    return bytes(value.to_py())


class IDBStore:
    """``quire.store`` over the worker's IndexedDB database ``quire.library``."""

    async def get(self, bucket, key, default=None):
        return _from_js(await js.QuireStore.library.get(bucket, key), default)

    async def all(self, bucket):
        pairs = await js.QuireStore.library.all(bucket)
        return {str(k): _from_js(v) for k, v in pairs}

    async def keys(self, bucket):
        return [str(k) for k in await js.QuireStore.library.keys(bucket)]

    async def commit(self, puts=(), deletes=()):
        js_puts = [[b, k, to_js(bytes(v)) if isinstance(v, (bytes, bytearray, memoryview)) else json.dumps(v)]
                   for b, k, v in puts]
        try:
            await js.QuireStore.library.commit(_to_js(js_puts), _to_js([list(d) for d in deletes]))
        except JsException as exc:
            if "QuotaExceeded" in str(exc):
                raise StoreFullError(str(exc)) from exc
            raise

    async def clear(self):
        await js.QuireStore.library.clear()

    async def usage(self):
        return (await js.QuireStore.library.usage()).to_py()


class FetchResponse:
    def __init__(self, resp):
        self.resp, self.status, self._reader = resp, int(resp.status), None

    async def text(self) -> str:
        return str(await self.resp.text())

    async def json(self):
        text = await self.text()
        try:
            return json.loads(text)
        except ValueError as exc:
            raise LLMError(f"the server sent something that is not JSON: {text[:120]!r}", kind="protocol") from exc

    async def iter_lines(self):
        self._reader = self.resp.body.getReader()
        decoder = js.TextDecoder.new()
        stream = _to_js({"stream": True})
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
    """Tell the page about a request the engine makes (the privacy view's network log);
    the page cannot see a worker's resource timings itself."""
    js.postMessage(_to_js({"type": "net", "method": method, "url": url}))


class FetchTransport:
    """``quire.llm.transport.AsyncTransport`` over the worker's ``fetch``."""

    async def request(self, method, url, body=None, stream=False):
        _note_request(method, url)
        init = {"method": method, "credentials": "omit", "referrerPolicy": "no-referrer"}
        if body is not None:
            init |= {"body": json.dumps(body), "headers": {"Content-Type": "application/json"}}
        try:
            resp = await js.fetch(url, _to_js(init))
        except JsException as exc:  # "Failed to fetch": refused, CORS, offline: diagnosis tells which
            raise LLMError(f"could not reach {url}: {exc}", kind="connection") from None
        return FetchResponse(resp)


async def probe(url: str, mode: str) -> bool:
    """Does anything answer at ``url`` when asked in this fetch ``mode``?"""
    _note_request("GET", url)
    try:
        await js.fetch(url, _to_js({"mode": mode, "credentials": "omit"}))
        return True
    except JsException:
        return False


def _platform() -> str | None:
    agent = str(js.navigator.userAgent).lower()
    for key, name in (("mac os", "mac"), ("windows", "windows"), ("linux", "linux")):
        if key in agent:
            return name
    return None


def emit(call_id: int, event: dict) -> None:
    js.postMessage(_to_js({"type": "event", "id": call_id, "event": json.dumps(event)}))


def cancel(call_id: int) -> None:
    _cancelled.add(int(call_id))


async def recognise(key: str, data: bytes, page, kind: str, lang: str) -> dict:
    """``quire.ocr.Recognise`` through the page, where Tesseract and the canvas live."""
    from quire.ocr import OCRUnavailable

    args = {"key": key, "data": None, "page": page, "kind": kind, "lang": lang}
    for attempt in range(2):
        try:
            reply = (await js.quirePageCall("ocr", _to_js(args))).to_py()
        except JsException as exc:
            if "not included" in str(exc):
                raise OCRUnavailable(str(exc).split(": ", 1)[-1]) from None
            raise
        if not reply.get("needData"):
            return reply
        args["data"] = to_js(data)  # the page did not have this file yet
    raise RuntimeError("the page lost the file it was reading")


async def start() -> dict:
    global _engine
    await js.QuireStore.openLibrary(_to_js(list(BUCKETS)), STORE_VERSION)
    _engine = await Quire.open(IDBStore(), transport=FetchTransport(), probe=probe,
                               origin=str(js.self.origin), platform=_platform())
    _engine.library.recognise = recognise
    return {"sources": len(_engine.sources())}


_METHODS: dict = {}
_loaded: set[str] = set()


def load_services(names=None) -> int:
    """Import service modules and merge their METHODS; returns how many methods are known."""
    for name in names if names is not None else SERVICES + LATER_SERVICES:
        if name not in _loaded:
            _METHODS.update(importlib.import_module(f"quire.services.{name}").METHODS)
            _loaded.add(name)
    return len(_METHODS)


load_services(SERVICES)
_EXPECTED = (LibraryError, TrainCancelled, LLMError, ValueError)


async def dispatch(method: str, args_json: str, call_id: int, payload=None) -> str:
    """Run one engine method; the answer is JSON ``{"ok": true, "value": ...}`` or an error."""
    try:
        fn = _METHODS.get(method)
        if fn is None and len(_loaded) < len(SERVICES) + len(LATER_SERVICES):
            load_services()
            fn = _METHODS.get(method)
        if fn is None:
            raise LibraryError(f"unknown method {method!r}; known: {', '.join(sorted(_METHODS))}")
        args = json.loads(args_json) if args_json else []
        data = bytes(payload.to_py()) if payload is not None and payload is not js.undefined else None
        ctx = Context(emit=lambda e: emit(call_id, e), cancelled=lambda: call_id in _cancelled, payload=data)
        result = fn(_engine, ctx, *args)
        if hasattr(result, "__await__"):
            result = await result
        return json.dumps({"ok": True, "value": result})
    except _EXPECTED as exc:
        return json.dumps({"ok": False, "error": str(exc), "kind": type(exc).__name__})
    except Exception as exc:  # a bug: say so, with the traceback for the console
        return json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}", "kind": "bug",
                           "detail": traceback.format_exc()})
    finally:
        _cancelled.discard(call_id)
