"""Shared pieces of the study hub: constants, the progress event, the store and scope helpers."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timezone

from quire.model import Chunk
from quire.study.validate import StudyError

KINDS = ("quiz", "flashcards", "workshop", "mindmap")
BUCKET = "study"
OVERRIDES_KEY = "prompt_overrides"  # in the "settings" bucket: {template name: text}
STUDY_TEMPLATES = ("quiz", "flashcards", "workshop_outline", "workshop_lesson", "mindmap")
TEMPERATURE = 0.1  # structured output: stay close to the passages
MAX_OFFLINE_CHUNKS = 400  # the no-LLM map/outline reads structure; beyond this it only gets slower
NO_AI = "made without an AI model"

log = logging.getLogger("quire.services.study")


# ---------------------------------------------------------------- helpers
def utc_now(now=None) -> datetime:
    if isinstance(now, str) and now:
        return datetime.fromisoformat(now.replace("Z", "+00:00"))
    return now or datetime.now(timezone.utc)


def iso_time(dt: datetime) -> str:
    return dt.isoformat()


def record_action(engine, record: dict, kind: str, **extra) -> None:
    """Tell the engine's event bus (progress listens) what was done with ``record``.

    ``{"kind": "quiz_answer" | "card_review" | "lesson_open" | ..., "scoped", "sources",
    "correct" | "rating" | "item"}``; a failing listener never breaks studying.
    """
    engine.events.emit({"kind": kind, "scoped": bool(record.get("scope")), "sources": list(record.get("sources", [])),
                        **extra})


async def load_set(engine, set_id: str) -> dict:
    record = await engine.store.get(BUCKET, set_id)
    if record is None:
        raise StudyError("That study set no longer exists (it may have been deleted).")
    return record


async def save_set(engine, record: dict) -> dict:
    await engine.store.commit([(BUCKET, record["id"], record)])
    return record


async def update_set(engine, set_id: str, change) -> dict:
    """Load ``set_id`` fresh, apply ``change(record)`` and save it, one update at a time.

    For changes that follow a long wait (a workshop lesson written by a model for a minute): saving
    the copy loaded before the wait would undo what happened meanwhile (a lesson marked done,
    another lesson written, a rename)."""
    async with engine.own("study lock", asyncio.Lock):
        record = await load_set(engine, set_id)
        change(record)
        return await save_set(engine, record)


def scope_sources(engine, scope) -> tuple[list[dict], str]:
    """Trained sources in ``scope`` (None = all, {"category"}, {"sources": [ids]}) and a label."""
    trained = [s for s in engine.sources() if s["status"] == "trained"]
    if isinstance(scope, dict) and scope.get("category"):
        chosen = [s for s in trained if s.get("category") == scope["category"]]
        return chosen, scope["category"]
    if isinstance(scope, dict) and scope.get("sources"):
        wanted = set(scope["sources"])
        chosen = [s for s in trained if s["id"] in wanted]
        label = chosen[0]["name"] if len(chosen) == 1 else f"{len(chosen)} sources"
        return chosen, label
    return trained, "all your documents"


async def scope_chunks(engine, sources: list[dict]) -> list[Chunk]:
    """The sources' chunks for the generators, each carrying its source's name (what a model
    and a card show; two sources of one name become ``notes.pdf`` and ``notes.pdf (2)``)."""
    chunks, taken = [], set()
    for source in sources:
        name, k = source["name"], 2
        while name in taken:
            name, k = f"{source['name']} ({k})", k + 1
        taken.add(name)
        chunks += [Chunk.from_dict(c, source=name) for c in await engine.library.chunks_of(source["id"])]
    return chunks


async def prompt_overrides(engine) -> dict:
    return await engine.store.get("settings", OVERRIDES_KEY) or {}


def use_model(engine, opts: dict) -> bool:
    return bool(engine.llm.chat_model) and not opts.get("offline")
