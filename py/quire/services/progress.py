"""Progress, achievements and the privacy inventory, as engine methods (the vault: ``services.vault``).

Nobody starts a session: chat messages, quiz answers, card reviews, lesson
opens, mind maps and exports arrive as events (through ``record`` or the
engine's event bus, ``engine.events``, which this service joins when the engine
opens) and are stored one key each in the ``progress``
bucket (``ev:<ms>:<random>``, so two machines' logs merge without clashes).
After each recorded action the badge evaluator runs; newly earned badges are
stored as ``badge:<code>`` and announced on the engine's bus (``BADGES_EARNED``, which
the tab passes to the page for a small toast); ``recordProgress`` returns them too.

Recording never breaks what it records: every failure (bad event, full disk)
is logged and answered with ``{"recorded": False, "error": ...}``.

>>> import asyncio
>>> from quire.app import Quire
>>> from quire.services import Context
>>> from quire.store import MemoryStore
>>> async def demo():
...     q = await Quire.open(MemoryStore())
...     r = await METHODS["recordProgress"](q, Context(), {"kind": "chat", "t": 0})
...     d = await METHODS["progress"](q, Context(), 0, 60_000)
...     return r["recorded"], [b["code"] for b in r["awarded"]], d["today"]["questions"]
>>> asyncio.run(demo())
(True, ['first_question'], 1)
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from pathlib import Path
from typing import Any

from quire import privacy
from quire.bus import BADGES_EARNED, LIBRARY_SAVED
from quire.progress import badges as badge_defs
from quire.progress import dashboard, sessions
from quire.progress.events import check_event
from quire.services.study.common import KINDS as STUDY_KINDS
from quire.store import StoreFullError

# After a library save the badges are checked once edits have paused this long, and the check
# yields to other calls every YIELD_EVERY sources (it reads every trained source's passage ids).
RECHECK_QUIET_S = 0.5
YIELD_EVERY = 50

log = logging.getLogger("quire.progress")

BADGES_FILE: Path = badge_defs.DEFINITIONS  # tests point this at a copy with a 26th badge
EVENT_PREFIX, BADGE_PREFIX, TZ_KEY = "ev:", "badge:", "tz"
KEEP = ("t", "kind", "scoped", "sources", "correct", "rating", "score", "total", "item")  # event fields kept
SYNONYMS = {"chat_message": "chat", "message": "chat", "question": "chat", "answer": "quiz_answer",
            "review": "card_review", "lesson": "lesson_open"}
RECENT_SESSIONS = 12  # sessions the dashboard lists, newest first


def now_ms() -> int:
    return int(time.time() * 1000)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, (bytes, bytearray, memoryview)) else len(json.dumps(value))


def _mb(n: int) -> str:
    return privacy.human_size(n)


# ---------------------------------------------------------------- study data
def study_data(values: dict[str, Any]) -> tuple[list[dict], dict[str, dict]]:
    """``(sets, card schedules)`` from the ``study`` bucket (records as ``services.study`` keeps them).

    Every set counts (mind maps and workshops have no ``items``).  Schedules are keyed
    ``<set id>:<card id>``: a card id is a hash of the card's text, so two decks made
    from the same passages share ids, and keying by card id alone dropped cards that
    the Study view counts (Progress showed 12 due where the decks said 17).

    >>> study_data({"d1": {"id": "d1", "kind": "flashcards", "items": [], "schedules": {"a": {"due": "x"}}},
    ...             "m1": {"id": "m1", "kind": "mindmap", "map": {}}})[1]
    {'d1:a': {'due': 'x'}}
    """
    sets = [v for v in values.values() if isinstance(v, dict) and v.get("kind") in STUDY_KINDS]
    cards = {f"{s.get('id')}:{card}": state for s in sets if s["kind"] == "flashcards"
             for card, state in (s.get("schedules") or {}).items()}
    return sets, cards


def ladders(defs: list[dict]) -> dict[str, tuple[str, int]]:
    """badge code -> (code of its ladder's first badge, step from 0).

    >>> ladders([{"code": "a", "next": "b"}, {"code": "b"}, {"code": "c"}])
    {'a': ('a', 0), 'b': ('a', 1), 'c': ('c', 0)}
    """
    by_code = {d["code"]: d for d in defs}
    has_prev = {d.get("next") for d in defs}
    out = {}
    for d in defs:
        if d["code"] in has_prev:
            continue
        code, step = d["code"], 0
        while code in by_code and code not in out:
            out[code] = (d["code"], step)
            code, step = by_code[code].get("next"), step + 1
    for d in defs:  # a cycle nobody starts: each badge its own ladder
        out.setdefault(d["code"], (d["code"], 0))
    return out


def normalise(event: dict, t: int, tz_default=None) -> dict:
    """An action payload from another service, cut down to a checked event.

    >>> normalise({"kind": "chat_message", "text": "long...", "sources": [{"id": "a"}], "scoped": 1}, 5)
    {'t': 5, 'kind': 'chat', 'scoped': True, 'sources': ['a']}
    """
    e = {"t": event.get("t", t), **{k: event[k] for k in KEEP if k in event and k != "t"}}
    e["kind"] = SYNONYMS.get(e.get("kind"), e.get("kind"))
    e["sources"] = [s.get("id") or s.get("source_id") or s.get("name") if isinstance(s, dict) else str(s)
                    for s in (event.get("sources") or [])]
    e["sources"] = [s for s in e["sources"] if isinstance(s, str)]
    return check_event(e)


# ------------------------------------------------------------------- service
class ProgressService:
    """Per engine: the event log, badges and privacy rows."""

    def __init__(self, engine):
        self.engine = engine
        self._defs_cache: tuple[tuple, list[dict]] | None = None
        self._checking = asyncio.Lock()  # two checks at once would award the same badge twice
        self._queued: list[dict] = []  # actions from the bus not yet written
        self._recheck = False  # the library was saved: check the badges on what is stored
        self._saved_at = 0.0  # time.monotonic() of the latest save
        self._writing = False  # a writer task is draining ``_queued``

    @property
    def store(self):
        return self.engine.store

    # -- badges ---------------------------------------------------------
    def definitions(self) -> list[dict]:
        path = Path(BADGES_FILE)
        stamp = (str(path), path.stat().st_mtime_ns)
        if self._defs_cache is None or self._defs_cache[0] != stamp:
            self._defs_cache = (stamp, badge_defs.load_definitions(path))
        return self._defs_cache[1]

    async def data(self, tz=None) -> dict:
        """What the metrics read: events, trained sources with chunk ids, study sets, card schedules."""
        stored = await self.store.all("progress")
        events = [v for k, v in stored.items() if k.startswith(EVENT_PREFIX)]
        awards = {k[len(BADGE_PREFIX):]: v for k, v in stored.items() if k.startswith(BADGE_PREFIX)}
        library = self.engine.library
        sources = []
        for n, s in enumerate(library.sources()):
            if s["status"] == "trained":
                chunks = await library.chunks_of(s["id"])
                sources.append({**s, "chunk_ids": [c["chunk_id"] for c in chunks]})
            if n % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)  # a person's call waits for a piece, not for thousands of sources
        sets, cards = study_data(await self.store.all("study"))
        return {"events": events, "sources": sources, "sets": sets, "cards": cards, "awards": awards,
                "tz": stored.get(TZ_KEY, 0) if tz is None else tz}

    async def check(self, now=None, data=None) -> list[dict]:
        """Evaluate every badge; store, announce (``BADGES_EARNED`` on the bus) and return the
        newly earned ones (with name and icon)."""
        async with self._checking:
            data = data or await self.data()
            defs = self.definitions()
            new = badge_defs.evaluate(defs, data, data["awards"], now if now is not None else now_ms())
            if new:
                await self.store.commit([("progress", BADGE_PREFIX + b["code"], b) for b in new])
        by_code = {d["code"]: d for d in defs}
        earned = [{**by_code[b["code"]], **b} for b in new]
        if earned:
            self.engine.events.emit({"kind": BADGES_EARNED, "badges": earned})
        return earned

    # -- events ---------------------------------------------------------
    async def record(self, event: dict, tz=None, *, evaluate: bool = True) -> dict:
        """Store one action and (unless ``evaluate`` is false) evaluate badges; never raises."""
        result = await self._write([event], tz)
        if not result["recorded"]:
            return result
        awarded = await self._safe_check(result["events"][0]["t"]) if evaluate else []
        return {"recorded": True, "awarded": awarded, "event": result["events"][0]}

    async def _write(self, events: list[dict], tz=None) -> dict:
        """Store actions in one commit; ``{"recorded", "events"}`` or the error, never raises.
        In a burst, an action that does not check out is logged and left out, not the rest."""
        es = []
        for event in events:
            try:
                es.append(normalise(event, now_ms()))
            except Exception as exc:  # an action that does not check out (or a bug): logged whole
                log.warning("progress not recorded: %s", exc, exc_info=True)
                if len(events) == 1:
                    return {"recorded": False, "awarded": [], "error": str(exc)}
        try:
            puts = [("progress", f"{EVENT_PREFIX}{e['t']:013d}:{secrets.token_hex(4)}", e) for e in es]
            if tz is not None:
                puts.append(("progress", TZ_KEY, tz))
            await self.store.commit(puts)
        except StoreFullError:
            log.warning("progress not recorded: storage is full")
            return {"recorded": False, "awarded": [], "error": "Storage is full, so this action was not added to "
                    "your progress (the action itself worked). Free space in Privacy or Library."}
        except Exception as exc:
            log.warning("progress not recorded: %s", exc, exc_info=True)
            return {"recorded": False, "awarded": [], "error": str(exc)}
        return {"recorded": True, "events": es}

    async def _safe_check(self, t: int) -> list[dict]:
        try:
            return await self.check(now=max(t, now_ms()))
        except Exception as exc:  # a badge problem must not look like a failed action either
            log.warning("badges not evaluated: %s", exc, exc_info=True)
            return []

    def on_action(self, event: dict):
        """The engine bus's subscriber: queue the action (or, after ``LIBRARY_SAVED``, a badge
        check); the first of a burst returns the writer (the bus runs it as a task).

        A burst of actions (5,000 sources added by one Train, a thousand reviews in a script)
        is written in a commit per round and its badges evaluated once, not once per action:
        one commit each had kept the next call waiting for a minute after a big Train."""
        kind = event.get("kind")
        if kind == BADGES_EARNED:
            return None  # this service's own news
        if kind == LIBRARY_SAVED:
            self._recheck = True
            self._saved_at = time.monotonic()
        else:
            self._queued.append(event)
        if self._writing:
            return None
        self._writing = True
        return self._drain_queue()

    async def _drain_queue(self) -> None:
        try:
            # actions (or a save) arriving during the badge check start another round
            while self._queued or self._recheck:
                # Only library saves: check once the edits have paused (a rename every second
                # would otherwise be followed by a check of every source each time).
                while not self._queued and time.monotonic() - self._saved_at < RECHECK_QUIET_S:
                    await asyncio.sleep(RECHECK_QUIET_S - (time.monotonic() - self._saved_at))
                self._recheck = False
                t = 0
                while self._queued:
                    batch, self._queued = self._queued, []
                    written = await self._write(batch)
                    t = max([t] + [e["t"] for e in written.get("events", [])])
                await self._safe_check(t)
        finally:
            self._writing = False

    async def flush(self) -> None:
        """Wait for actions still being recorded, so what is read next includes them."""
        await self.engine.events.drain()

    # -- dashboard ------------------------------------------------------
    async def progress(self, tz=None, now=None) -> dict:
        await self.flush()
        now = now if now is not None else now_ms()
        if tz is not None and tz != await self.store.get("progress", TZ_KEY):
            try:
                await self.store.commit([("progress", TZ_KEY, tz)])
            except StoreFullError:
                pass  # only a remembered preference
        data = await self.data(tz)
        tz = data["tz"]
        board = dashboard.dashboard(data, now, tz)
        names = {s["id"]: s["name"] for s in data["sources"]}
        board["coverage"] = sorted(({"source_id": sid, "name": names.get(sid, sid), **c}
                                    for sid, c in board["coverage"].items()), key=lambda c: c["name"].lower())
        board["sessions"] = sessions.infer(data["events"])[-RECENT_SESSIONS:][::-1]
        board["total_minutes"] = round(sum(s["duration_ms"] for s in sessions.infer(data["events"])) / 60_000, 1)
        board["events"] = len(data["events"])
        defs = self.definitions()
        rungs = ladders(defs)
        items = badge_defs.progress(defs, data, data["awards"], now)
        for b in items:
            b["ladder"], b["step"] = rungs[b["code"]]
            b["awarded"] = (data["awards"].get(b["code"]) or {}).get("awarded")
        locked = [b for b in items if not b["earned"]]
        board["badges"] = {"all": items, "earned": [b for b in items if b["earned"]],
                           "next": sorted(locked, key=lambda b: -b["fraction"])[:3], "total": len(items)}
        board["tz"], board["now"] = tz, now
        return board

    # -- privacy --------------------------------------------------------
    async def privacy(self) -> dict:
        usage = await self.store.usage()
        settings = await self.store.all("settings")
        overrides = {k: v for k, v in settings.items() if k.startswith("prompt")}
        over_bytes = sum(_size(v) for v in overrides.values())

        def u(*names):
            return {"count": sum(usage.get(n, {}).get("count", 0) for n in names),
                    "bytes": sum(usage.get(n, {}).get("bytes", 0) for n in names)}
        s = u("settings")
        stats = {"originals": u("originals", "sources"), "chunks": u("chunks", "index", "ocr"), "vectors": u("vectors"),
                 "chats": u("chats"), "study_items": u("study"), "progress": u("progress"),
                 "settings": {"count": max(0, s["count"] - len(overrides)), "bytes": max(0, s["bytes"] - over_bytes)},
                 "prompt_overrides": {"count": sum(len(v) if isinstance(v, dict) else 1 for v in overrides.values()),
                                      "bytes": over_bytes}}
        rows = privacy.inventory(stats)
        return {"rows": rows, "total": privacy.total(rows), "buckets": usage, "database": "quire.library",
                "largest_sources": await self.largest_sources()}

    async def largest_sources(self, n: int = 5) -> list[dict]:
        """The sources that take most space: what to delete when storage is full."""
        out = []
        for s in self.engine.library.sources():
            chunks = await self.engine.library.chunks_of(s["id"]) if s["status"] == "trained" else []
            size = int(s.get("size") or 0) + sum(len(c.get("text", "")) for c in chunks)
            out.append({"id": s["id"], "name": s["name"], "status": s["status"], "bytes": size, "size": _mb(size)})
        return sorted(out, key=lambda r: -r["bytes"])[:n]

    async def full_message(self, what: str, needed: int | None = None) -> str:
        big = await self.largest_sources(3)
        hint = ", ".join(f"{s['name']} ({s['size']})" for s in big)
        need = f" It needs about {_mb(needed)}." if needed else ""
        return (f"The browser refused to save {what}: storage is full.{need} Nothing was changed. "
                + (f"Free space by removing sources you no longer need in Library (largest: {hint}), " if hint else
                   "Free space in this browser (other sites' data), ")
                + "or export a vault first and erase what you do not need, then try again.")


# ------------------------------------------------------------ engine wiring
def service(engine) -> ProgressService:
    """The engine's progress service; made (and subscribed to ``engine.events``) when the engine opens."""
    def make() -> ProgressService:
        svc = ProgressService(engine)
        engine.events.subscribe(svc.on_action)
        return svc

    return engine.own("progress", make)


async def _progress(engine, ctx, tz=None, now=None):
    return await service(engine).progress(tz, now)


async def _record(engine, ctx, event, tz=None):
    return await service(engine).record(event, tz)


async def _privacy(engine, ctx):
    return await service(engine).privacy()


METHODS = {
    "progress": _progress,
    "recordProgress": _record,
    "privacy": _privacy,
}
