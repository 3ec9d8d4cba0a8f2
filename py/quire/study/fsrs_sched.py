"""Spaced repetition with FSRS (PyPI ``fsrs``), kept as plain JSON-able data.

A study card's schedule is ``fsrs.Card.to_dict()``; it lives next to the item
it drills.  Everything here takes ``now`` explicitly so tests (and a browser
clock) decide the time.

Fuzzing is off by default: the interval shown on a button ("3d") is then
exactly the one the card gets when pressed.

>>> from datetime import datetime, timezone
>>> t0 = datetime(2025, 1, 1, 9, 0, tzinfo=timezone.utc)
>>> state = new_schedule(1, t0)
>>> next_intervals(state, t0)
{'again': '1m', 'hard': '6m', 'good': '10m', 'easy': '8d'}
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from quire.errors import InvalidInput

RATINGS = ("again", "hard", "good", "easy")  # fsrs.Rating 1..4


def scheduler(desired_retention: float = 0.9, fuzz: bool = False):
    """An ``fsrs.Scheduler`` with Quire's defaults."""
    import fsrs

    return fsrs.Scheduler(desired_retention=desired_retention, enable_fuzzing=fuzz)


def rating_of(rating):
    import fsrs

    if isinstance(rating, str) and rating.lower() in RATINGS:
        return fsrs.Rating(RATINGS.index(rating.lower()) + 1)
    if isinstance(rating, int) and 1 <= rating <= 4:
        return fsrs.Rating(rating)
    raise InvalidInput(f"unknown rating {rating!r}; choose one of: {', '.join(RATINGS)} (or 1-4)")


def card_number(item_id: str) -> int:
    """An fsrs card id (an int) from a hex item id, so the same item keeps its id.

    >>> card_number("499c173435892634")
    1294956048373906
    """
    return int(item_id[:13], 16)


def new_schedule(card_id: int, now: datetime) -> dict:
    """A new card, due ``now``."""
    import fsrs

    return fsrs.Card(card_id=card_id, due=now).to_dict()


def review(state: dict, rating, now: datetime, sched=None) -> tuple[dict, dict]:
    """``(new state, review log)`` after answering with ``rating`` at ``now``."""
    import fsrs

    sched = sched or scheduler()
    card, log = sched.review_card(fsrs.Card.from_dict(state), rating_of(rating), review_datetime=now)
    return card.to_dict(), log.to_dict()


def due_at(state: dict) -> datetime:
    return datetime.fromisoformat(state["due"])


def due_queue(states: dict[str, dict], now: datetime, limit: int | None = None) -> list[str]:
    """Ids of the cards due at ``now``, most overdue first (ties by id)."""
    due = sorted((due_at(s), key) for key, s in states.items() if due_at(s) <= now)
    keys = [key for _, key in due]
    return keys[:limit] if limit is not None else keys


def format_interval(delta: timedelta) -> str:
    """A button label for an interval, as Anki writes them.

    >>> [format_interval(timedelta(seconds=s)) for s in (30, 600, 7200, 3 * 86400, 45 * 86400, 400 * 86400)]
    ['<1m', '10m', '2h', '3d', '1.5mo', '1.1y']
    """
    seconds = delta.total_seconds()
    if seconds < 60:
        return "<1m"
    if seconds < 3600:
        return f"{round(seconds / 60)}m"
    if seconds < 86400:
        return f"{round(seconds / 3600)}h"
    days = seconds / 86400
    if days < 30:
        return f"{round(days)}d"
    if days < 365:
        return f"{days / 30:.1f}".rstrip("0").rstrip(".") + "mo"
    return f"{days / 365:.1f}".rstrip("0").rstrip(".") + "y"


def next_intervals(state: dict, now: datetime, sched=None) -> dict[str, str]:
    """The label for each rating button: how long until the card comes back."""
    sched = sched or scheduler()
    out = {}
    for name in RATINGS:
        after, _ = review(state, name, now, sched)
        out[name] = format_interval(due_at(after) - now)
    return out


def stale_items(items: list[dict], current_hashes: dict[str, str]) -> dict[str, list[str]]:
    """Items whose source text changed or went away since they were made.

    ``current_hashes`` maps chunk id -> hash for the index as it is now.
    Returns ``{item id: ["changed: a.pdf:120", "removed: a.pdf:900"]}``.

    >>> stale_items([{"id": "x", "chunk_hashes": {"a:0": "h1", "a:9": "h2"}}], {"a:0": "h1*"})
    {'x': ['changed: a:0', 'removed: a:9']}
    """
    out = {}
    for item in items:
        reasons = []
        for cid, made_from in item.get("chunk_hashes", {}).items():
            if cid not in current_hashes:
                reasons.append(f"removed: {cid}")
            elif current_hashes[cid] != made_from:
                reasons.append(f"changed: {cid}")
        if reasons:
            out[item["id"]] = reasons
    return out


def utc(*args) -> datetime:
    """``datetime(*args)`` in UTC, for callers and tests."""
    return datetime(*args, tzinfo=timezone.utc)
