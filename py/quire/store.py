"""Where Quire keeps what it knows: named buckets of key -> value, committed atomically.

Values are JSON-able objects or ``bytes``.  A ``commit`` applies all its puts and
deletes or none of them: Train builds everything in memory and commits once,
so a tab closed mid-Train leaves the library exactly as it was.

In the browser the store is IndexedDB (``quire.browser.idb.IDBStore``); on CPython it
is ``MemoryStore`` or ``SQLiteStore``.  All share the async interface because
IndexedDB is asynchronous.

>>> import asyncio
>>> s = MemoryStore()
>>> asyncio.run(s.commit(puts=[("sources", "a", {"name": "a.pdf"})]))
>>> asyncio.run(s.get("sources", "a"))
{'name': 'a.pdf'}
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterable

from quire.errors import QuireError
from quire.originals import Held

# Every bucket Quire writes; the browser creates one IndexedDB object store per name.
BUCKETS = (
    "sources",    # source records: name, type, size, sha256, category, status, counts
    "originals",  # the bytes of each source as it was added
    "chunks",     # per source: the list of its chunks (text, location, span, hash)
    "index",      # the serialised search index
    "vectors",    # embedding cache: "<model>|<chunk hash>" -> float32 bytes
    "ocr",        # OCR cache: "<file sha256>:<page>:<lang>" -> {text, confidence}; makes a cancelled OCR resumable;
                  # and transcripts: "transcript:<file sha256>:<piece>" -> {text, start, end, pieces, silent}
    "chats",      # chat sessions
    "study",      # quizzes, decks, workshops, mind maps
    "progress",   # events, awarded badges
    "settings",   # settings and prompt overrides
)

Put = tuple[str, str, Any]
Delete = tuple[str, str]


class StoreError(QuireError, OSError):
    """The browser's storage failed; the message says what happened and what to do."""


class StoreFullError(StoreError):
    """The browser or disk refused a write for lack of space; nothing was written.

    ``needed`` and ``free`` (bytes, or None when unknown) say how much was missing.
    """

    def __init__(self, detail: str = "", *, needed: int | None = None, free: int | None = None):
        super().__init__(detail)
        self.detail, self.needed, self.free = detail, needed, free


def mb(n: int) -> str:
    """Megabytes for a message, never below 0.1.

    >>> mb(3_500_000), mb(20_000)
    ('3.5 MB', '0.1 MB')
    """
    return f"{max(n, 100_000) / 1e6:.1f} MB"


def full_message(exc: StoreFullError, largest: Iterable[tuple[str, int]] = ()) -> str:
    """What a person reads when a write did not fit: how much to free, and what to remove.

    >>> full_message(StoreFullError(needed=5_000_000, free=1_000_000), [("atlas.pdf", 40_000_000)])[:61]
    'The disk is full: free at least 6.0 MB (this needs about 5.0 '
    """
    need = ""
    if exc.needed and exc.free is not None:
        need = (f"free at least {mb(max(exc.needed - exc.free, 0) + SPARE)} (this needs about {mb(exc.needed)}, "
                f"{mb(exc.free)} is free)")
    elif exc.needed:
        need = f"free at least {mb(exc.needed + SPARE)} (this needs about {mb(exc.needed)})"
    else:
        need = f"free at least {mb(SPARE)}"
    big = ", ".join(f"{name} ({mb(size)})" for name, size in list(largest)[:3])
    remove = f"remove sources you no longer need in Library (largest: {big})" if big else \
        "remove other sites' data or files you no longer need"
    return (f"The disk is full: {need} on this disk, or {remove}, then try again. "
            "Nothing was changed; everything saved before is still there.")


# Kept free beyond a write's own size: the browser's database needs room for its log and
# compaction, and a disk filled to the last byte makes every later write fail too.
SPARE = 2_000_000


def _check_bucket(bucket: str) -> None:
    if bucket not in BUCKETS:
        raise ValueError(f"unknown bucket {bucket!r}; known: {', '.join(BUCKETS)}")


class MemoryStore:
    """A dict of dicts; commits copy values so callers cannot mutate stored state."""

    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {b: {} for b in BUCKETS}
        self.fail_next_commit: Exception | None = None  # tests simulate a full disk with this

    async def get(self, bucket: str, key: str, default: Any = None) -> Any:
        _check_bucket(bucket)
        value = self.data[bucket].get(key, default)
        return copy.deepcopy(value)

    async def all(self, bucket: str) -> dict[str, Any]:
        _check_bucket(bucket)
        return copy.deepcopy(self.data[bucket])

    async def get_many(self, bucket: str, keys: list[str]) -> dict[str, Any]:
        """The values of those ``keys`` that exist (one read for many small files)."""
        _check_bucket(bucket)
        return {k: copy.deepcopy(self.data[bucket][k]) for k in keys if k in self.data[bucket]}

    async def keys(self, bucket: str) -> list[str]:
        _check_bucket(bucket)
        return sorted(self.data[bucket])

    async def prefixed(self, bucket: str, prefix: str) -> dict[str, Any]:
        """Every key starting with ``prefix`` and its value (one model's vectors)."""
        _check_bucket(bucket)
        return {k: v if isinstance(v, bytes) else copy.deepcopy(v)
                for k, v in self.data[bucket].items() if k.startswith(prefix)}

    async def commit(self, puts: Iterable[Put] = (), deletes: Iterable[Delete] = ()) -> None:
        puts, deletes = list(puts), list(deletes)
        for bucket, *_ in puts + deletes:
            _check_bucket(bucket)
        if self.fail_next_commit is not None:
            err, self.fail_next_commit = self.fail_next_commit, None
            raise err
        for bucket, key in deletes:
            self.data[bucket].pop(key, None)
        for bucket, key, value in puts:
            self.data[bucket][key] = value[:] if isinstance(value, Held) else copy.deepcopy(value)

    async def clear(self) -> None:
        self.data = {b: {} for b in BUCKETS}

    async def usage(self) -> dict[str, dict[str, int]]:
        return {b: {"count": len(d), "bytes": sum(_size(v) for v in d.values())} for b, d in self.data.items()}


class SQLiteStore:
    """A single SQLite file: the CPython store that survives a restart."""

    def __init__(self, path: str | Path) -> None:
        import sqlite3  # not on the browser's boot path: Pyodide ships sqlite3 as a separate package

        self._sqlite3 = sqlite3
        self.path = Path(path)
        self.db = sqlite3.connect(self.path)
        self.db.execute("CREATE TABLE IF NOT EXISTS kv (bucket TEXT, key TEXT, is_json INT, value BLOB,"
                        " PRIMARY KEY (bucket, key))")
        self.db.commit()

    @staticmethod
    def _decode(is_json: int, value: bytes) -> Any:
        return json.loads(value) if is_json else bytes(value)

    async def get(self, bucket: str, key: str, default: Any = None) -> Any:
        _check_bucket(bucket)
        row = self.db.execute("SELECT is_json, value FROM kv WHERE bucket=? AND key=?", (bucket, key)).fetchone()
        return self._decode(*row) if row else default

    async def all(self, bucket: str) -> dict[str, Any]:
        _check_bucket(bucket)
        rows = self.db.execute("SELECT key, is_json, value FROM kv WHERE bucket=? ORDER BY key", (bucket,))
        return {k: self._decode(j, v) for k, j, v in rows}

    async def get_many(self, bucket: str, keys: list[str]) -> dict[str, Any]:
        """The values of those ``keys`` that exist (one read for many small files)."""
        _check_bucket(bucket)
        out = {}
        for start in range(0, len(keys), 500):  # SQLite binds at most 999 values per statement
            part = keys[start:start + 500]
            rows = self.db.execute(f"SELECT key, is_json, value FROM kv WHERE bucket=? AND key IN ({','.join('?' * len(part))})",
                                   (bucket, *part))
            out.update({k: self._decode(j, v) for k, j, v in rows})
        return out

    async def keys(self, bucket: str) -> list[str]:
        _check_bucket(bucket)
        return [k for (k,) in self.db.execute("SELECT key FROM kv WHERE bucket=? ORDER BY key", (bucket,))]

    async def prefixed(self, bucket: str, prefix: str) -> dict[str, Any]:
        _check_bucket(bucket)
        rows = self.db.execute("SELECT key, is_json, value FROM kv WHERE bucket=? AND key >= ? AND key < ?",
                               (bucket, prefix, prefix + "\U0010ffff"))
        return {k: self._decode(j, v) for k, j, v in rows if k.startswith(prefix)}

    async def commit(self, puts: Iterable[Put] = (), deletes: Iterable[Delete] = ()) -> None:
        puts = [(b, k, v[:] if isinstance(v, Held) else v) for b, k, v in puts]
        deletes = list(deletes)
        for bucket, *_ in puts + deletes:
            _check_bucket(bucket)
        try:
            with self.db:  # one transaction: all or nothing
                self.db.executemany("DELETE FROM kv WHERE bucket=? AND key=?", deletes)
                self.db.executemany(
                    "INSERT OR REPLACE INTO kv VALUES (?, ?, ?, ?)",
                    [(b, k, 0, bytes(v)) if isinstance(v, (bytes, bytearray, memoryview))
                     else (b, k, 1, json.dumps(v).encode()) for b, k, v in puts])
        except self._sqlite3.OperationalError as exc:
            if "full" in str(exc):
                raise StoreFullError(str(exc), needed=sum(_size(v) for _, _, v in puts)) from exc
            raise

    async def clear(self) -> None:
        with self.db:
            self.db.execute("DELETE FROM kv")

    async def usage(self) -> dict[str, dict[str, int]]:
        out = {b: {"count": 0, "bytes": 0} for b in BUCKETS}
        for bucket, count, size in self.db.execute("SELECT bucket, COUNT(*), SUM(LENGTH(value)) FROM kv GROUP BY bucket"):
            out[bucket] = {"count": count, "bytes": size or 0}
        return out


def _size(value: Any) -> int:
    if isinstance(value, (bytes, bytearray, memoryview, Held)):
        return len(value)
    return len(json.dumps(value))
