"""The progress log: one small JSON-able dict per thing the person did.

An event is ``{"t": epoch ms, "kind": str, "scoped": bool, "sources": [ids]}``
plus a few optional fields by kind:

- ``quiz_answer``: ``"correct": bool``
- ``card_review``: ``"rating": "again" | "hard" | "good" | "easy"`` (or 1-4)
- ``quiz_complete``: ``"score": int, "total": int``
- ``lesson_complete`` / ``lesson_open``: ``"item": "<workshop id>/<module>.<lesson>"``
- ``study_generated`` / ``export`` / ``mindmap_open``: ``"item": <study set id>``
- ``source_added``: ``"item": <file name>``
- any kind may carry ``"item"`` (the study item involved)

The services emit these on their engine's bus (``quire.bus``, ``engine.events``).
Recording progress must never break studying: ``record`` logs and swallows
every failure, and ``safe_record`` gives any other recorder the same shield.

>>> log = []
>>> record(log, {"t": 1_700_000_000_000, "kind": "quiz_answer", "correct": True})
True
>>> log[0]["scoped"], log[0]["sources"]
(False, [])
>>> record(log, {"t": "yesterday", "kind": "chat"})   # logged, not raised
False
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from quire.errors import InvalidInput
from quire.progress.clock import to_ms

log = logging.getLogger("quire.progress")

# Actions that are studying: they extend a session and make a day count for a streak.
STUDY_KINDS = frozenset({
    "chat", "quiz_answer", "quiz_complete", "card_review", "lesson_open", "lesson_complete", "mindmap_open",
})
# Things worth counting that are not studying in themselves.
OTHER_KINDS = frozenset({"source_added", "study_generated", "export", "vault_export", "vault_import"})
KINDS = STUDY_KINDS | OTHER_KINDS

RATINGS = ("again", "hard", "good", "easy")


def make_event(kind: str, t, *, scoped: bool = False, sources=(), **extra: Any) -> dict:
    """A checked event dict; ``t`` may be epoch ms, an aware datetime or an ISO string.

    >>> make_event("chat", "2025-01-01T00:00:00Z", scoped=True, sources=["a.pdf"])
    {'t': 1735689600000, 'kind': 'chat', 'scoped': True, 'sources': ['a.pdf']}
    """
    event = {"t": to_ms(t), "kind": kind, "scoped": bool(scoped), "sources": list(sources), **extra}
    return check_event(event)


def check_event(event: dict) -> dict:
    """The event, normalised (defaults filled, ``t`` as int ms), or ``ValueError`` saying what is wrong."""
    if not isinstance(event, dict):
        raise InvalidInput(f"an event is a dict, not {type(event).__name__}")
    kind = event.get("kind")
    if kind not in KINDS:
        raise InvalidInput(f"unknown event kind {kind!r}; choose one of: {', '.join(sorted(KINDS))}")
    try:
        t = to_ms(event.get("t"))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"event time {event.get('t')!r} is not epoch ms or an ISO-8601 instant ({exc})") from None
    out = {**event, "t": t, "scoped": bool(event.get("scoped", False)), "sources": list(event.get("sources") or [])}
    if not all(isinstance(s, str) for s in out["sources"]):
        raise InvalidInput("event sources must be a list of source id strings")
    if kind == "quiz_answer" and not isinstance(out.get("correct"), bool):
        raise InvalidInput("a quiz_answer event needs 'correct': true or false")
    if kind == "card_review" and "rating" in out:
        r = out["rating"]
        if not (r in RATINGS or (isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= 4)):
            raise InvalidInput(f"unknown rating {r!r}; choose one of: {', '.join(RATINGS)} (or 1-4)")
    if kind == "quiz_complete":
        score, total = out.get("score"), out.get("total")
        if not (isinstance(score, int) and isinstance(total, int) and 0 <= score <= total):
            raise InvalidInput("a quiz_complete event needs integer 'score' and 'total' with 0 <= score <= total")
    return out


def safe_record(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, or ``None`` if it raised: the failure is logged, never passed on.

    >>> safe_record(lambda: 1 / 0) is None
    True
    """
    try:
        return fn(*args, **kwargs)
    except Exception:
        log.exception("could not record progress via %s", getattr(fn, "__name__", fn))
        return None


def _append(store, event: dict) -> bool:
    event = check_event(event)
    if hasattr(store, "append"):
        store.append(event)
    elif callable(store):
        store(event)
    else:
        raise TypeError(f"cannot record into a {type(store).__name__}; give a list, an object with append(), or a callable")
    return True


def record(store, event: dict) -> bool:
    """Append a checked ``event`` to ``store`` (a list, anything with ``append``, or a callable).

    Returns ``True`` if recorded, ``False`` if not; it never raises.
    """
    return safe_record(_append, store, event) is True
