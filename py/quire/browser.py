"""The worker's bridge: IndexedDB as a ``quire.store`` store, and calls from the page.

This is the only module that imports ``js`` / ``pyodide``; it is imported by the
engine worker, never on CPython.  The page calls ``dispatch(method, args_json, id)``;
results go back as JSON, progress as ``{"type": "event"}`` messages.
"""

from __future__ import annotations

import json
import traceback

import js
from pyodide.ffi import JsException, to_js

from quire.app import Quire
from quire.library import LibraryError, TrainCancelled
from quire.store import BUCKETS, StoreFullError

STORE_VERSION = 1  # bump when BUCKETS changes: the browser then creates the new object stores

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


def emit(call_id: int, event: dict) -> None:
    js.postMessage(_to_js({"type": "event", "id": call_id, "event": json.dumps(event)}))


def cancel(call_id: int) -> None:
    _cancelled.add(int(call_id))


async def start() -> dict:
    global _engine
    await js.QuireStore.openLibrary(_to_js(list(BUCKETS)), STORE_VERSION)
    _engine = await Quire.open(IDBStore())
    return {"sources": len(_engine.sources())}


async def _train(call_id):
    return await _engine.train(progress=lambda e: emit(call_id, e), cancelled=lambda: call_id in _cancelled)


async def _stage(call_id, name, category=None, language=None, *, payload):
    return await _engine.stage(name, payload, category=category, language=language)


_METHODS = {
    "stage": _stage,
    "stageText": lambda cid, name, text, category=None: _engine.stage_text(name, text, category),
    "reject": lambda cid, name, size, reason: _engine.reject(name, size, reason),
    "train": _train,
    "sources": lambda cid: _engine.sources(),
    "categories": lambda cid: _engine.categories(),
    "setCategory": lambda cid, source_id, category: _engine.set_category(source_id, category),
    "remove": lambda cid, source_id: _engine.remove(source_id),
    "eraseAll": lambda cid: _engine.erase_all(),
    "chunks": lambda cid, source_id: _engine.chunks(source_id),
    "search": lambda cid, query, k=7, scope=None: _engine.search(query, k=k, scope=scope),
    "passage": lambda cid, chunk_id, query="": _engine.passage(chunk_id, query),
    "usage": lambda cid: _engine.usage(),
}


async def dispatch(method: str, args_json: str, call_id: int, payload=None) -> str:
    """Run one engine method; the answer is JSON ``{"ok": true, "value": ...}`` or an error."""
    try:
        fn = _METHODS.get(method)
        if fn is None:
            raise LibraryError(f"unknown method {method!r}; known: {', '.join(sorted(_METHODS))}")
        args = json.loads(args_json) if args_json else []
        kwargs = {"payload": bytes(payload.to_py())} if payload is not None and payload is not js.undefined else {}
        result = fn(call_id, *args, **kwargs)
        if hasattr(result, "__await__"):
            result = await result
        return json.dumps({"ok": True, "value": result})
    except (LibraryError, TrainCancelled) as exc:
        return json.dumps({"ok": False, "error": str(exc), "kind": type(exc).__name__})
    except Exception as exc:  # a bug: say so, with the traceback for the console
        return json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}", "kind": "bug",
                           "detail": traceback.format_exc()})
    finally:
        _cancelled.discard(call_id)
