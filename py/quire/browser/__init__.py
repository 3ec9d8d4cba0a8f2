"""The worker's bridge: the dispatcher for calls from the page, the engine's start, and what
the tab does when the browser deleted its library.  ``idb`` is IndexedDB as a ``quire.store``
store, ``fetch`` the LLM transport, ``eviction`` the watch after a failed write, ``page`` what
the engine says to the page besides answers (a call's progress, engine news, OCR requests),
``embedder`` the vectors the page makes with the tab's own embedding model.

This package is the only part of Quire that imports ``js`` / ``pyodide``; the engine worker
imports it, CPython never does.  The page's call (site/assets/boot-calls.js, then
engine/worker.js) arrives as ``dispatch(method, args_json, id, payload)``, which runs
``METHODS.get(method)(engine, ctx, *args)`` (``quire.services.Methods``: the services' tables,
which ``Quire.call`` uses on CPython too, plus the tab's own methods); the
answer goes back as JSON, the call's progress as ``{"type": "event"}`` messages (``page.emit``),
and news from the engine's bus the page shows (badges earned) as ``{"type": "engine-event"}``
(``page.notify``).
"""

from __future__ import annotations

import asyncio
import json

import js
from pyodide.ffi import JsException, to_js

from quire import errors
from quire.app import Quire
from quire.bus import LIBRARY_SAVED
from quire.errors import LibraryError
from quire.services import BOOT_SERVICES, Context, Methods
from quire.library import Library
from quire.store import BUCKETS, StoreError, StoreFullError, full_message
from quire.browser import eviction, page
from quire.browser.fetch import FetchTransport, probe
from quire.browser.idb import IDBStore, PageBytes, js_value, store_error
from quire.browser.secrets import KVSecrets

STORE_VERSION = 3  # bump when BUCKETS change: the browser then creates the new object stores (3: store-library.js's _sizes)
# quire.services.<name> modules.  The first group is on the boot path (the library and search
# must answer as soon as the engine is up); the rest load right after, off the critical path.

_engine: Quire | None = None
_cancelled: set[int] = set()

# Methods that change the library, and how a call waits for the one-writer lock (the
# worker holds a Web Lock around them, across tabs too; see engine/worker-writer.js):
#   "wait"   - queue behind a running write;
#   "cancel" - cancel this tab's running Train (or embedding) first, then run;
#   "shared" - read many things consistently (no write may land in between).
# Chat, study and progress writes touch only their own records and are not queued.
WRITES = {name: "wait" for name in (
    "stage", "stageMany", "stageText", "reject", "train", "setCategory", "remove", "setForceOcr", "setOcrLanguage",
    "setLanguage", "setKeepOriginals", "embed", "embedAdd", "studyImport", "repairIndex", "mergeIndex")}
WRITES |= {"eraseAll": "cancel", "importVault": "cancel", "reloadLibrary": "shared"}


def _platform() -> str | None:
    agent = str(js.navigator.userAgent).lower()
    for key, name in (("mac os", "mac"), ("windows", "windows"), ("linux", "linux")):
        if key in agent:
            return name
    return None


def cancel(call_id: int) -> None:
    _cancelled.add(int(call_id))


async def start() -> dict:
    global _engine
    try:
        await js.QuireStore.openLibrary(js_value(list(BUCKETS)), STORE_VERSION)
    except JsException as exc:
        raise store_error(exc) from None
    store = IDBStore()
    await eviction.note_usage()
    store.generation = await store.stored_generation()
    await store.load_mirror()
    _engine = await Quire.open(store, transport=FetchTransport(), probe=probe, repair="memory",
                               origin=str(js.self.origin), platform=_platform(), warm=False, defer_vectors=True,
                               secrets=KVSecrets())
    _engine.library.recognise = page.recognise
    _engine.library.transcribe = page.transcribe
    _engine.events.subscribe(page.from_bus)  # badges earned reach the page as they happen
    lib = _engine.library
    return {"sources": len(_engine.sources()), "repaired": lib.repaired, "save": lib.needs_save, "merge": lib.merge_due}


async def background() -> None:
    """What the tab reads once it is quiet after ready (engine/worker-lazy.js waits for that):
    the cached vectors (100k: 2-3 s), then every passage (100k: about 8 s).  Searches read
    what they hit meanwhile, a call that needs the vectors starts their read itself, and the
    tab's copy of the passages is what it saves again if the browser deletes its data."""
    if _engine is not None:
        await _warm(_engine.library)


async def _warm(library) -> None:
    try:
        await library.vectors_ready()
        await library.load_chunks()
    except Exception as exc:  # a full disk or a closed connection: searches read what they need
        js.console.warn(f"Quire: reading every passage into memory stopped: {exc}\n{errors.traceback_of(exc)}")


async def _restore(engine) -> bool:
    """The browser recreated the database empty (seen after a write failed on a full disk):
    save what this tab still holds: trained sources, their passages and the index, chats,
    study items, progress and settings.  Originals, vectors and the OCR cache are gone."""
    if not js.QuireStore.library.recreated(False):
        return False
    mirror = engine.store.mirrored()
    store, stamping = engine.store, engine.store.stamping
    store.stamping = True
    try:
        trained = await engine.library.restore(mirror)
    finally:
        store.stamping = stamping
    js.QuireStore.library.recreated(True)
    js.console.warn(f"Quire: the browser had deleted its stored data; {trained} trained sources and "
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
    options = {k: getattr(old, k) for k in ("chunk_size", "overlap", "max_bytes", "recognise", "transcribe")}
    library = await Library.open(engine.store, repair="memory", defer_vectors=True, **options)
    await engine.store.load_mirror()  # another tab's chats and sets too, for a restore or a full disk
    engine.library, engine.store.generation = library, stored
    asyncio.ensure_future(_warm(library))
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


# The services' handlers (quire.services.Methods, as Quire.call uses them on CPython) and the
# tab's own methods.  The services on the boot path load now; the rest when the tab is quiet
# (engine/worker-lazy.js calls load_next_service, a module a step) or on the first call that needs them.
METHODS = Methods({
    "reloadLibrary": lambda engine, ctx: _reload(engine),
    "repairIndex": lambda engine, ctx: _repair(engine),
    "mergeIndex": lambda engine, ctx: _merge(engine),
    "storageWatch": lambda engine, ctx: eviction.status(),
    "tabEmbedder": lambda engine, ctx, available, on=True: _tab_embedder(engine, available, on),
})


def _tab_embedder(engine, available: bool, on: bool = True) -> bool:
    """The page says at start-up whether this bundle has the in-tab embedder (embedder.js), and
    whether the person left it on (Settings: "None (keywords only)" turns it off in this browser)."""
    from quire.browser.embedder import TabEmbedder

    engine.llm.tab_available = bool(available)
    engine.llm.tab = TabEmbedder() if available and on else None
    return engine.llm.tab is not None
METHODS.load(BOOT_SERVICES)


def load_services() -> int:
    """Import the remaining service modules; how many methods are known."""
    return METHODS.load()


def load_next_service() -> bool:
    """Import the next service module; whether any remain (engine/worker-lazy.js, a step each)."""
    return METHODS.load_next()


async def _restore_now() -> bool:
    return bool(_engine) and await _restore(_engine)


eviction.restore = _restore_now


async def _maybe_restore() -> None:
    if _engine and js.QuireStore.library.recreated(False):
        try:
            await _restore(_engine)
        except (StoreError, LibraryError):
            pass  # still no room: the next call tries again


def _reply(value):
    """``value`` as JSON in UTF-8 bytes for the worker (engine/worker.js decodes them): a str
    crosses into JavaScript at about 10 MB/s in Pyodide, bytes at once."""
    return to_js(json.dumps(value).encode())


def writes_json() -> str:
    return json.dumps(WRITES)


async def dispatch(method: str, args_json: str, call_id: int, payload=None):
    """Run one engine method; the answer is JSON ``{"ok": true, "value": ...}`` or an error, as
    UTF-8 bytes (``_reply``).

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
        fn = METHODS.get(method)
        if fn is None:
            raise LibraryError(f"unknown method {method!r}; known: {', '.join(METHODS.names())}")
        args = json.loads(args_json) if args_json else []
        data = None
        if payload is not None and payload is not js.undefined:
            # One staged file stays in the page's array (a lecture video of hundreds of MB must
            # not grow this heap, which never shrinks): quire.originals.Held.
            data = PageBytes(payload) if method == "stage" else bytes(payload.to_py())
        ctx = Context(emit=lambda e: page.emit(call_id, e), cancelled=lambda: call_id in _cancelled, payload=data)
        result = fn(_engine, ctx, *args)
        if hasattr(result, "__await__"):
            result = await result
        changed = bool(store and store.generation != before)
        if changed:
            _engine.events.emit({"kind": LIBRARY_SAVED})  # progress checks badges on what is stored now
        return _reply({"ok": True, "value": result, "changed": changed,
                       "merge": bool(writing and _engine and _engine.library.merge_due)})
    except StoreFullError as exc:
        return _reply({"ok": False, "error": _full_message(exc), "kind": "StoreFullError", "detail": exc.detail})
    except Exception as exc:  # expected (QuireError) by its class; anything else is a bug, with its traceback
        reply = errors.reply(exc)
        if _engine is not None:  # an API key never reaches a message or a "Copy details" text
            reply = {k: _engine.llm.scrub(v) if isinstance(v, str) else v for k, v in reply.items()}
        return _reply(reply)
    finally:
        _cancelled.discard(call_id)
        if writing and store:
            store.stamping = False
        await _maybe_restore()  # the database may have been recreated during this call
