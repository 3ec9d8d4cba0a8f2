"""IndexedDB as a ``quire.store`` store, through ``QuireStore`` (site/assets/store-*.js).

Small JSON buckets are mirrored in memory (a database the browser deleted can be written back
from them), every commit is one transaction, and a large write asks for room first.
"""

from __future__ import annotations

import json
import logging
import secrets

import js
from pyodide.ffi import JsException, to_js

from quire.browser import eviction
from quire.originals import Held
from quire.store import SPARE, StoreError, StoreFullError

# Writes larger than this ask for room first (store-seal.js room()).
CHECK_ABOVE = 1_000_000
PREFIXED_PAGE = 8192  # values per read of prefixed(): 8k vectors of 384 dimensions are 12 MB
MIRRORED = ("chats", "study", "progress", "settings")  # small JSON buckets kept in memory too (IDBStore.mirror)
_log = logging.getLogger(__name__)
GENERATION_KEY = "library_generation"  # in "settings": changes with every library write


def js_value(value):
    """A Python value as a plain JS one: dicts become Objects (not Maps), for postMessage and JS calls."""
    return to_js(value, dict_converter=js.Object.fromEntries)


class PageBytes(Held):
    """A file the page sent (a Uint8Array, moved into this worker), held in JavaScript: staging
    hashes it a few MB at a time and stores it as views of it, so it is never copied whole into
    this heap, which WebAssembly can only grow (a 300 MB lecture video would stay 300 MB, twice)."""

    def __init__(self, array, start: int = 0, stop: int | None = None):
        self.array, self.start = array, start
        self.stop = array.length if stop is None else stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, where: slice) -> bytes:
        a, b, _ = where.indices(len(self))
        return self.array.subarray(self.start + a, self.start + max(a, b)).to_bytes()

    def part(self, start: int, stop: int) -> "PageBytes":
        return PageBytes(self.array, self.start + start, self.start + min(stop, len(self)))

    def view(self):
        """The stretch as a view of the page's array (store-library.js stores only its bytes)."""
        return self.array.subarray(self.start, self.stop)


def _from_js(value, default=None):
    if value is None or value is js.undefined:
        return default
    if isinstance(value, str):
        return json.loads(value)
    return bytes(value.to_py())


def store_error(exc: JsException, needed: int | None = None, free: int | None = None) -> StoreError:
    """A failure of ``QuireStore`` as the engine's ``StoreError`` / ``StoreFullError``.

    store-db.js names its errors QuireStoreFull / QuireStoreError (str(exc) is "name: message")."""
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
            raise store_error(exc) from None

    def _mirrored(self, bucket) -> dict | None:
        """What a small JSON bucket holds, from memory, when the disk is too full to read it: after
        a write tore Chromium's log, opening the database needs room, and chats, study sets,
        progress and settings are still shown (the mirror is what this tab stored or read last)."""
        if bucket not in self.mirror:
            return None
        _log.debug("the disk is full: %s read from memory", bucket)
        return {k: json.loads(v) for k, v in self.mirror[bucket].items()}

    async def get(self, bucket, key, default=None):
        try:
            return _from_js(await self._read(js.QuireStore.library.get(bucket, key)), default)
        except StoreFullError:
            held = self._mirrored(bucket)
            if held is None:
                raise
            return held.get(str(key), default)

    async def get_many(self, bucket, keys):
        """The values of those ``keys`` that exist, read in one transaction."""
        keys = list(keys)
        try:
            values = await self._read(js.QuireStore.library.getMany(bucket, js_value(keys)))
        except StoreFullError:
            held = self._mirrored(bucket)
            if held is None:
                raise
            return {k: held[str(k)] for k in keys if str(k) in held}
        return {k: v for k, v in zip(keys, (_from_js(v) for v in values)) if v is not None}

    async def all(self, bucket):
        try:
            pairs = await self._read(js.QuireStore.library.all(bucket))
        except StoreFullError:
            held = self._mirrored(bucket)
            if held is None:
                raise
            return held
        return {str(k): _from_js(v) for k, v in pairs}

    async def keys(self, bucket):
        try:
            return [str(k) for k in await self._read(js.QuireStore.library.keys(bucket))]
        except StoreFullError:
            held = self._mirrored(bucket)
            if held is None:
                raise
            return list(held)

    async def prefixed(self, bucket, prefix, page: int = PREFIXED_PAGE):
        """Keys from ``prefix`` on and their byte values.  store-library.js packs each page of them
        into one buffer (a model's 100k vectors as 100k JS values took seconds to convert);
        pages of ``page`` values keep the thread free for a search between them."""
        out, after = {}, None
        while True:
            keys, lengths, packed, last = await self._read(
                js.QuireStore.library.prefixed(bucket, prefix, after, page))
            keys, lengths = [str(k) for k in keys], lengths.to_py()
            data = memoryview(packed.to_py())
            at = 0
            for key, n in zip(keys, lengths):
                out[key] = data[at:at + n]
                at += n
            if last is None or not page:
                return out
            after = str(last)

    async def _check_room(self, needed: int) -> None:
        """Refuse a large write that will not fit, before IndexedDB sees it: a write that fails
        on a full disk makes Chromium evict the origin's data and tears its log (store-seal.js).
        The origin file system is asked (store-seal.js room()); navigator.storage.estimate()
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
        # One JSON text and one buffer cross into JS, not a list of 15,000 values: to_js of a
        # Train of 5,000 notes took about 1.2 s of its save (store-library.js commitPacked).
        entries, blobs, views = [], [], []
        for b, k, v in puts:
            if isinstance(v, PageBytes):  # the page's bytes, passed on as they are
                views.append(v.view())
                entries.append([b, k, -len(views)])
            elif isinstance(v, Held):
                blobs.append(bytes(v[:]))
                entries.append([b, k, None])
            elif isinstance(v, (bytes, bytearray, memoryview)):
                blobs.append(bytes(v))
                entries.append([b, k, None])
            else:
                entries.append([b, k, json.dumps(v)])
        needed = sum(len(e[2]) for e in entries if isinstance(e[2], str)) + sum(map(len, blobs)) + sum(v.length for v in views)
        await self._check_room(needed)
        # As UTF-8 bytes: a str crosses into JS at about 10 MB/s (a 5,000-note Train's 14 MB:
        # 1.1-1.5 s), bytes at once, and the page decodes them (0.2 s).
        packed = json.dumps({"puts": entries, "deletes": [list(d) for d in deletes], "lengths": [len(x) for x in blobs]})
        try:
            await js.QuireStore.library.commitPacked(to_js(packed.encode()), to_js(b"".join(blobs)), js.Array.of(*views))
        except JsException as exc:
            error = store_error(exc, needed)
            if isinstance(error, StoreFullError):
                eviction.failed_write()
            raise error from None
        self._mirror(entries, deletes)
        if needed > CHECK_ABOVE:
            await eviction.note_usage()  # an eviction shows as a drop from here
        if token:
            self.generation = token

    async def stored_generation(self) -> str | None:
        return await self.get("settings", GENERATION_KEY)

    async def clear(self):
        try:
            await js.QuireStore.library.clear()
        except JsException as exc:
            raise store_error(exc) from None
        self.mirror = {b: {} for b in MIRRORED}
        await self.commit([("settings", GENERATION_KEY, secrets.token_hex(8))])

    async def usage(self):
        """Count and bytes per bucket, from the counters every commit keeps (store-library.js)."""
        return (await self._read(js.QuireStore.library.usage())).to_py()


