"""Flashcard decks: the review queue, rating a card, resolving cards whose source changed."""

from __future__ import annotations

from datetime import datetime

from quire.errors import InvalidInput
from quire.study import fsrs_sched
from quire.study.validate import StudyError

from .common import record_action, iso_time, load_set, utc_now, update_set
from .sets import current_hashes, stale_flags, set_view


def _card_view(item: dict, state: dict, now: datetime, flags: dict) -> dict:
    return {**item, "due": state["due"], "state": state, "intervals": fsrs_sched.next_intervals(state, now),
            "flagged": flags.get(item["id"], [])}


async def _review(engine, ctx, deck_id, now=None, limit=100):
    """The due queue (most overdue first; cards whose source changed come first), with button labels."""
    record = await load_set(engine, deck_id)
    if record["kind"] != "flashcards":
        raise StudyError("Only flashcard decks can be reviewed.")
    now = utc_now(now)
    flags = await stale_flags(engine, record)
    by_id = {i["id"]: i for i in record["items"]}
    due = fsrs_sched.due_queue(record["schedules"], now)
    queue = [i for i in flags if i in by_id] + [i for i in due if i not in flags]
    cards = [_card_view(by_id[i], record["schedules"][i], now, flags) for i in queue[:limit]]
    dues = sorted((fsrs_sched.due_at(s), k) for k, s in record["schedules"].items())
    upcoming = [d for d in dues if d[0] > now]
    return {"deck_id": deck_id, "title": record["title"], "now": iso_time(now), "cards": cards, "due": len(due),
            "total": len(record["items"]), "flagged": len(flags),
            "next_due": upcoming[0][0].isoformat() if upcoming else None,
            "schedule": {k: s["due"] for k, s in record["schedules"].items()}}


async def _rate(engine, ctx, deck_id, card_id, rating, now=None):
    now = utc_now(now)
    reviewed = {}

    def review(record):
        if card_id not in record.get("schedules", {}):
            raise StudyError("That card is not in this deck any more.")
        state, _ = fsrs_sched.review(record["schedules"][card_id], rating, now)
        record["schedules"][card_id] = reviewed["state"] = state
        record.setdefault("reviews", []).append({"card": card_id, "rating": str(rating).lower(), "at": iso_time(now)})
    record = await update_set(engine, deck_id, review)
    state = reviewed["state"]
    item = next(i for i in record["items"] if i["id"] == card_id)
    rating_name = fsrs_sched.RATINGS[int(fsrs_sched.rating_of(rating)) - 1]
    record_action(engine, record, "card_review", rating=rating_name, item=card_id)
    lapse = rating_name == "again"
    return {"card_id": card_id, "due": state["due"], "interval": fsrs_sched.format_interval(fsrs_sched.due_at(state) - now),
            "lapse": lapse, "chunk_ids": item.get("chunk_ids", []) if lapse else [],
            "next": await _review(engine, ctx, deck_id, iso_time(now))}


async def _resolve_card(engine, ctx, deck_id, card_id, action="keep"):
    """A flagged card: "keep" accepts the source as it is now; "delete" drops the card."""
    if action not in ("keep", "delete"):
        raise InvalidInput(f"unknown action {action!r}; choose keep or delete")
    # The passages' hashes first (a read per source): the deck is then changed as it is stored
    # now, so a card rated meanwhile keeps its new schedule.
    current = await current_hashes(engine, await load_set(engine, deck_id)) if action == "keep" else {}

    def resolve(record):
        if action == "delete":
            record["items"] = [i for i in record["items"] if i["id"] != card_id]
            record["schedules"].pop(card_id, None)
            return
        for item in record["items"]:
            if item["id"] == card_id:
                item["chunk_hashes"] = {c: current[c] for c in item.get("chunk_hashes", {}) if c in current}
    return await set_view(engine, await update_set(engine, deck_id, resolve))


METHODS = {
    "review": _review,
    "rate": _rate,
    "resolveCard": _resolve_card,
}
