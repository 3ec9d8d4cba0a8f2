"""After a write failed on a full disk, Chromium may evict the origin's data (seen from at
once to a few seconds later).  The tab then holds the only copy, and the eviction freed room:
it saves again at once, so a browser closed soon after the error loses nothing.  The watch
reads only the browser's usage figure (opening the database on a full disk writes too), every
half second for half a minute, then slowly while a person makes room.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

import js
from pyodide.ffi import JsException

WATCH = (0.5,) * 60 + (15.0,) * 40
EVICTED_BELOW = 0.5  # IndexedDB usage under this share of the most seen: deleted behind our back
GENERATION_KEY = "library_generation"  # a cheap read that reopens the library (as quire.browser.idb)

# What saves the library again after an eviction (set by quire.browser): True once it did.
restore: Callable[[], Awaitable[bool]] | None = None
_seen = 0
_watch: asyncio.Future | None = None
_restored = 0


async def _idb_usage() -> int | None:
    e = (await js.QuireStore.estimate()).to_py()
    return None if e.get("indexedDB") is None else int(e["indexedDB"])


async def note_usage() -> None:
    """Remember the most IndexedDB was seen to hold (an eviction shows as a drop)."""
    global _seen
    _seen = max(_seen, await _idb_usage() or 0)


def failed_write() -> None:
    """A write failed on a full disk: watch for an eviction (one watch at a time)."""
    global _watch
    if _watch is None or _watch.done():
        _watch = asyncio.ensure_future(_watch_eviction())


async def _watch_eviction() -> None:
    global _restored
    await note_usage()
    for delay in WATCH:
        await asyncio.sleep(delay)
        usage = await _idb_usage()
        if usage is None or restore is None or usage >= EVICTED_BELOW * _seen:
            continue
        try:  # reopening finds the database recreated empty (store-db.js notices)
            await js.QuireStore.library.get("settings", GENERATION_KEY)
        except JsException:
            continue
        if js.QuireStore.library.recreated(False):
            try:
                if await restore():
                    _restored += 1
                    return
            except Exception as exc:  # expected: still no room; look again later
                js.console.warn(f"Quire: saving again after the browser deleted the library failed: {exc}")


def status() -> dict:
    """Whether a watch runs, and how often it saved the library again (tests, diagnostics)."""
    return {"watching": bool(_watch and not _watch.done()), "restored": _restored}
