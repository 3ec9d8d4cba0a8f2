"""The worker's bridge: IndexedDB as a ``quire.store`` store, fetch as the LLM transport,
and the dispatcher for calls from the page.

This is the only module that imports ``js`` / ``pyodide``; the engine worker imports it,
CPython never does.  The page calls ``dispatch(method, args_json, id, payload)``; the
answer goes back as JSON, progress as ``{"type": "event"}`` messages.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import secrets

import js
from pyodide.ffi import JsException, to_js

from quire import errors
from quire.app import Quire
from quire.library import LibraryError
from quire.llm.events import LLMError
from quire.services import Context
from quire.library import Library
from quire.retrieval import segments
from quire.store import BUCKETS, SPARE, StoreError, StoreFullError, full_message

STORE_VERSION = 3  # bump when BUCKETS change: the browser then creates the new object stores (3: store.js's _sizes)
# quire.services.<name> modules.  The first group is on the boot path (the library and search
# must answer as soon as the engine is up); the rest load right after, off the critical path.
SERVICES = ["library", "llm", "embeddings"]
LATER_SERVICES = ["chat", "study", "progress", "vault"]

_engine: Quire | None = None
_cancelled: set[int] = set()

# Methods that change the library, and how a call waits for the one-writer lock (the
# worker holds a Web Lock around them, across tabs too; see engine/worker.js):
#   "wait"   - queue behind a running write;
#   "cancel" - cancel this tab's running Train (or embedding) first, then run;
#   "shared" - read many things consistently (no write may land in between).
# Chat, study and progress writes touch only their own records and are not queued.
WRITES = {name: "wait" for name in (
    "stage", "stageText", "reject", "train", "setCategory", "remove", "setForceOcr", "setOcrLanguage",
    "setLanguage", "setKeepOriginals", "embed", "studyImport", "repairIndex", "mergeIndex")}
WRITES |= {"eraseAll": "cancel", "importVault": "cancel", "reloadLibrary": "shared"}
# Writes larger than this check the browser's storage estimate first.
CHECK_ABOVE = 1_000_000
MIRRORED = ("chats", "study", "progress", "settings")  # small JSON buckets kept in memory too (IDBStore.mirror)
GENERATION_KEY = "library_generation"  # in "settings": changes with every library write


def _to_js(value):
    return to_js(value, dict_converter=js.Object.fromEntries)


def _from_js(value, default=None):
    if value is None or value is js.undefined:
        return default
    if isinstance(value, str):
        return json.loads(value)
    return bytes(value.to_py())


def _store_error(exc: JsException, needed: int | None = None, free: int | None = None) -> StoreError:
    """store.js names its errors QuireStoreFull / QuireStoreError (str(exc) is "name: message")."""
    text = str(exc)
    if text.startswith("QuireStoreFull"):
        return StoreFullError(text, needed=needed, free=free)
    if text.startswith("QuireStoreError"):
        return StoreError(text.split(": ", 1)[1] + ". Reload the page and try again; if it keeps happening, "
                          "export a vault (Progress) to keep a copy of your library.")
    return StoreError(f"The browser's storage failed ({text}). Reload the page and try again.")


class IDBStore:
    """``quire.store`` over the worker's IndexedDB database ``quire.library``.

    ``stamping`` is set while a library write runs: its commits then also store a new
    generation, which other tabs compare with theirs to know they must reload."""

    def __init__(self):
        self.generation: str | None = None
        self.stamping = False
        # A copy of the small JSON buckets (bucket -> key -> JSON text), kept in step with
        # every commit: if the browser recreates the database, _restore writes them back.
        self.mirror: dict[str, dict[str, str]] = {b: {} for b in MIRRORED}

    async def load_mirror(self) -> None:
        for bucket in MIRRORED:
            pairs = await self._read(js.QuireStore.library.all(bucket))
            self.mirror[bucket] = {str(k): v for k, v in pairs if isinstance(v, str)}

    def _mirror(self, js_puts, deletes) -> None:
        for bucket, key in deletes:
            self.mirror.get(bucket, {}).pop(key, None)
        for bucket, key, value in js_puts:
            if bucket in self.mirror and isinstance(value, str):
                self.mirror[bucket][key] = value

    def mirrored(self) -> list:
        return [(b, k, json.loads(v)) for b, values in self.mirror.items() for k, v in values.items()
                if (b, k) != ("settings", GENERATION_KEY)]

    async def _read(self, promise):
        try:
            return await promise
        except JsException as exc:
            raise _store_error(exc) from None

    async def get(self, bucket, key, default=None):
        return _from_js(await self._read(js.QuireStore.library.get(bucket, key)), default)

    async def all(self, bucket):
        pairs = await self._read(js.QuireStore.library.all(bucket))
        return {str(k): _from_js(v) for k, v in pairs}

    async def keys(self, bucket):
        return [str(k) for k in await self._read(js.QuireStore.library.keys(bucket))]

    async def prefixed(self, bucket, prefix):
        """Keys from ``prefix`` on and their byte values, in one crossing: store.js packs them
        into one buffer (a model's 100k vectors as 100k JS values took seconds to convert)."""
        keys, lengths, packed = await self._read(js.QuireStore.library.prefixed(bucket, prefix))
        keys, lengths = [str(k) for k in keys], lengths.to_py()
        data = memoryview(packed.to_py())
        out, at = {}, 0
        for key, n in zip(keys, lengths):
            out[key] = data[at:at + n]
            at += n
        return out

    async def _check_room(self, needed: int) -> None:
        """Refuse a large write that will not fit, before IndexedDB sees it: a write that fails
        on a full disk makes Chromium evict the origin's data and tears its log (store.js).
        The origin file system is asked (store.js room()); navigator.storage.estimate()
        cannot tell, as Chromium reports a fixed quota (1 GiB on a full 200 MB disk)."""
        if needed > CHECK_ABOVE and await js.QuireStore.room(needed + SPARE) is False:
            raise StoreFullError("checked before writing", needed=needed)

    async def commit(self, puts=(), deletes=()):
        puts, deletes = list(puts), list(deletes)
        if not puts and not deletes:
            return
        token = None
        if self.stamping:
            token = secrets.token_hex(8)
            puts.append(("settings", GENERATION_KEY, token))
        js_puts = [[b, k, to_js(bytes(v)) if isinstance(v, (bytes, bytearray, memoryview)) else json.dumps(v)]
                   for b, k, v in puts]
        needed = sum(len(v) if isinstance(v, str) else v.length for _, _, v in js_puts)
        await self._check_room(needed)
        try:
            await js.QuireStore.library.commit(_to_js(js_puts), _to_js([list(d) for d in deletes]))
        except JsException as exc:
            error = _store_error(exc, needed)
            if isinstance(error, StoreFullError):
                watch_eviction()
            raise error from None
        self._mirror(js_puts, deletes)
        if needed > CHECK_ABOVE:
            await note_usage()  # an eviction shows as a drop from here
        if token:
            self.generation = token

    async def stored_generation(self) -> str | None:
        return await self.get("settings", GENERATION_KEY)

    async def clear(self):
        try:
            await js.QuireStore.library.clear()
        except JsException as exc:
            raise _store_error(exc) from None
        self.mirror = {b: {} for b in MIRRORED}
        await self.commit([("settings", GENERATION_KEY, secrets.token_hex(8))])

    async def usage(self):
        """Count and bytes per bucket, from the counters every commit keeps (store.js)."""
        return (await self._read(js.QuireStore.library.usage())).to_py()


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
    try:
        await js.QuireStore.openLibrary(_to_js(list(BUCKETS)), STORE_VERSION)
    except JsException as exc:
        raise _store_error(exc) from None
    store = IDBStore()
    await note_usage()
    store.generation = await store.stored_generation()
    await store.load_mirror()
    _engine = await Quire.open(store, transport=FetchTransport(), probe=probe, repair="memory",
                               origin=str(js.self.origin), platform=_platform())
    _engine.library.recognise = recognise
    lib = _engine.library
    return {"sources": len(_engine.sources()), "repaired": lib.repaired, "save": lib.needs_save, "merge": lib.merge_due}


async def _restore(engine) -> bool:
    """The browser recreated the database empty (seen after a write failed on a full disk):
    save what this tab still holds: trained sources, their passages and the index, chats,
    study items, progress and settings.  Originals, vectors and the OCR cache are gone."""
    if not js.QuireStore.library.recreated(False):
        return False
    lib = engine.library
    trained = [s for s in lib.sources() if s["status"] == "trained"]
    await lib.load_chunks()
    puts = [("sources", s["id"], s) for s in trained] + [("chunks", s["id"], await lib.chunks_of(s["id"]))
                                                           for s in trained]
    mirror = engine.store.mirrored()
    puts = mirror + puts
    lib.index.stored = None  # the store holds none of it now
    index = segments.snapshot(lib.index)
    puts += index.puts + [("settings", "library", lib._library_settings())]
    store, stamping = engine.store, engine.store.stamping
    store.stamping = True
    try:
        await store.commit(puts)
    finally:
        store.stamping = stamping
    segments.apply(index, lib.index)
    lib._sources = {s["id"]: s for s in trained}
    js.QuireStore.library.recreated(True)
    js.console.warn(f"Quire: the browser had deleted its stored data; {len(trained)} trained sources and "
                    f"{len(mirror)} chats, study items and settings were saved again")
    return True


async def _reload(engine) -> dict:
    """Load the library again if another tab changed it (its generation differs)."""
    if js.QuireStore.library.recreated(False):
        return {"reloaded": False, "restored": await _restore(engine), "repaired": []}
    stored = await engine.store.stored_generation()
    if stored == engine.store.generation:
        return {"reloaded": False, "repaired": engine.library.repaired}
    old = engine.library
    options = {k: getattr(old, k) for k in ("chunk_size", "overlap", "max_bytes", "recognise")}
    library = await Library.open(engine.store, repair="memory", **options)
    await library.load_chunks()
    engine.library, engine.store.generation = library, stored
    return {"reloaded": True, "repaired": library.repaired}


async def _repair(engine) -> dict:
    """Save an index that opening had to repair (run as a write: no other tab writes meanwhile)."""
    await _reload(engine)
    repaired, engine.library.repaired = engine.library.repaired, []
    if repaired or engine.library.needs_save:  # needs_save: also an old single-blob index to migrate
        await engine.library.save_index()
    return {"repaired": repaired}


async def _merge(engine) -> dict:
    """Rewrite the index as one segment when dead rows or segments piled up (run idle, as a write)."""
    await _reload(engine)
    if not engine.library.merge_due:
        return {"merged": False}
    return {"merged": True, **await engine.library.merge_index()}


def _full_message(exc: StoreFullError) -> str:
    return full_message(exc, _engine.library.largest() if _engine else [])


_METHODS: dict = {
    "reloadLibrary": lambda engine, ctx: _reload(engine),
    "repairIndex": lambda engine, ctx: _repair(engine),
    "mergeIndex": lambda engine, ctx: _merge(engine),
}
_loaded: set[str] = set()


def load_services(names=None) -> int:
    """Import service modules and merge their METHODS; returns how many methods are known."""
    for name in names if names is not None else SERVICES + LATER_SERVICES:
        if name not in _loaded:
            _METHODS.update(importlib.import_module(f"quire.services.{name}").METHODS)
            _loaded.add(name)
    return len(_METHODS)


load_services(SERVICES)


# After a write failed on a full disk, Chromium may evict the origin's data (seen from at once
# to a few seconds later).  The tab then holds the only copy, and the eviction freed room: it
# saves again at once, so a browser closed soon after the error loses nothing.  The watch reads
# only the browser's usage figure (opening the database on a full disk writes too), every
# half second for half a minute, then slowly while a person makes room.
WATCH = (0.5,) * 60 + (15.0,) * 40
EVICTED_BELOW = 0.5  # IndexedDB usage under this share of the most seen: deleted behind our back
_idb_seen = 0
_watch: asyncio.Future | None = None
_restored = 0


async def _idb_usage() -> int | None:
    e = (await js.QuireStore.estimate()).to_py()
    return None if e.get("indexedDB") is None else int(e["indexedDB"])


async def note_usage() -> None:
    """Remember the most IndexedDB was seen to hold (an eviction shows as a drop)."""
    global _idb_seen
    _idb_seen = max(_idb_seen, await _idb_usage() or 0)


def watch_eviction() -> None:
    global _watch
    if _watch is None or _watch.done():
        _watch = asyncio.ensure_future(_watch_eviction())


async def _watch_eviction() -> None:
    global _restored
    await note_usage()
    for delay in WATCH:
        await asyncio.sleep(delay)
        usage = await _idb_usage()
        if usage is None or not _engine or usage >= EVICTED_BELOW * _idb_seen:
            continue
        try:  # reopening finds the database recreated empty (store.js notices)
            await js.QuireStore.library.get("settings", GENERATION_KEY)
        except JsException:
            continue
        if js.QuireStore.library.recreated(False):
            try:
                if await _restore(_engine):
                    _restored += 1
                    return
            except (StoreError, LibraryError):
                pass  # no room yet: look again later


async def _storage_watch(engine, ctx) -> dict:
    """Whether a watch runs, and how often it saved the library again (tests, diagnostics)."""
    return {"watching": bool(_watch and not _watch.done()), "restored": _restored}


_METHODS["storageWatch"] = _storage_watch


async def _maybe_restore() -> None:
    if _engine and js.QuireStore.library.recreated(False):
        try:
            await _restore(_engine)
        except (StoreError, LibraryError):
            pass  # still no room: the next call tries again


def writes_json() -> str:
    return json.dumps(WRITES)


async def dispatch(method: str, args_json: str, call_id: int, payload=None) -> str:
    """Run one engine method; the answer is JSON ``{"ok": true, "value": ...}`` or an error.

    A library write (``WRITES``; the worker holds the lock) first catches up with what other
    tabs saved, and its reply says ``"changed": true`` when it saved something."""
    store = _engine.store if _engine else None
    before = store.generation if store else None
    writing = method in WRITES and WRITES[method] != "shared"
    try:
        await _maybe_restore()
        if writing and store:
            await _reload(_engine)
            before, store.stamping = store.generation, True
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
        return json.dumps({"ok": True, "value": result, "changed": bool(store and store.generation != before),
                           "merge": bool(writing and _engine and _engine.library.merge_due)})
    except StoreFullError as exc:
        return json.dumps({"ok": False, "error": _full_message(exc), "kind": "StoreFullError", "detail": exc.detail})
    except Exception as exc:  # expected (QuireError) by its class; anything else is a bug, with its traceback
        return json.dumps(errors.reply(exc))
    finally:
        _cancelled.discard(call_id)
        if writing and store:
            store.stamping = False
        await _maybe_restore()  # the database may have been recreated during this call
