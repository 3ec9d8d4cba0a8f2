"""What the progress page shows, as pure functions over plain data and an explicit ``now``.

Days are the person's local days (``tz``: minutes east of UTC or an IANA name;
see ``clock``).  A day counts for a streak if it has any study action.  A
streak that reached yesterday is still *current* today until today ends, so
opening the app in the morning does not show a broken streak.

>>> day = 86_400_000
>>> ev = [{"t": i * day, "kind": "chat"} for i in (0, 1, 2, 5, 6)]
>>> streaks(ev, now=6 * day + 1, tz=0)
{'current': 2, 'longest': 3}
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta

from quire.progress import sessions as sess
from quire.progress.clock import MINUTE_MS, Instant, Zone, day_end_ms, local_date, to_ms, week_start
from quire.progress.events import STUDY_KINDS

QUIZ_TYPES = frozenset({"multiple_choice", "true_false"})  # study item "type"s that are quiz questions
CARD_TYPES = frozenset({"basic", "cloze"})  # ... and flashcards
COVERING_KINDS = frozenset({"quiz", "flashcards"})  # set kinds whose items cover chunks


def _study(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("kind") in STUDY_KINDS]


def actions_by_day(events: list[dict], tz: Zone) -> Counter:
    """Number of study actions per local day."""
    return Counter(local_date(int(e["t"]), tz) for e in _study(events))


def streaks(events: list[dict], now: Instant, tz: Zone) -> dict:
    """``{"current", "longest"}`` runs of consecutive days with study, up to today."""
    today = local_date(to_ms(now), tz)
    days = sorted(d for d in actions_by_day(events, tz) if d <= today)
    longest = run = 0
    prev = None
    for d in days:
        run = run + 1 if prev is not None and d - prev == timedelta(days=1) else 1
        longest, prev = max(longest, run), d
    active = set(days)
    current = 0
    d = today if today in active else today - timedelta(days=1)
    while d in active:
        current, d = current + 1, d - timedelta(days=1)
    return {"current": current, "longest": longest}


def period(events: list[dict], first: date, last: date, tz: Zone) -> dict:
    """Totals for the local days ``first..last`` (inclusive)."""
    inside = [e for e in events if first <= local_date(int(e["t"]), tz) <= last]
    study = _study(inside)
    minutes = sum(ms for d, ms in sess.ms_by_day(events, tz).items() if first <= d <= last) / MINUTE_MS
    answers = [e for e in inside if e.get("kind") == "quiz_answer"]
    return {
        "from": first.isoformat(),
        "to": last.isoformat(),
        "actions": len(study),
        "minutes": round(minutes, 1),
        "sessions": sum(1 for s in sess.infer(events) if first <= local_date(s["start"], tz) <= last),
        "questions": sum(1 for e in inside if e.get("kind") == "chat"),
        "quiz_answers": len(answers),
        "quiz_correct": sum(1 for e in answers if e.get("correct") is True),
        "cards_reviewed": sum(1 for e in inside if e.get("kind") == "card_review"),
        "days_active": len({local_date(int(e["t"]), tz) for e in study}),
    }


def today(events: list[dict], now: Instant, tz: Zone) -> dict:
    d = local_date(to_ms(now), tz)
    return period(events, d, d, tz)


def this_week(events: list[dict], now: Instant, tz: Zone, first_weekday: int = 0) -> dict:
    """From the start of this week (Monday unless ``first_weekday`` says otherwise) to today."""
    d = local_date(to_ms(now), tz)
    return period(events, week_start(d, first_weekday), d, tz)


def heatmap(events: list[dict], now: Instant, tz: Zone, days: int = 90) -> list[dict]:
    """``days`` entries ``{"date", "count", "minutes"}``, oldest first, ending today (empty days included)."""
    end = local_date(to_ms(now), tz)
    counts = actions_by_day(events, tz)
    ms = sess.ms_by_day(events, tz)
    out = []
    for i in range(days - 1, -1, -1):
        d = end - timedelta(days=i)
        out.append({"date": d.isoformat(), "count": counts.get(d, 0), "minutes": round(ms.get(d, 0) / MINUTE_MS, 1)})
    return out


def time_per_day(events: list[dict], now: Instant, tz: Zone, days: int = 30) -> list[dict]:
    """``{"date", "minutes"}`` for the last ``days`` days, oldest first."""
    return [{"date": h["date"], "minutes": h["minutes"]} for h in heatmap(events, now, tz, days)]


def quiz_accuracy(events: list[dict], tz: Zone) -> list[dict]:
    """Per day with quiz answers: ``{"date", "answered", "correct", "accuracy"}`` (accuracy 0..1)."""
    answered: Counter = Counter()
    correct: Counter = Counter()
    for e in events:
        if e.get("kind") == "quiz_answer":
            d = local_date(int(e["t"]), tz)
            answered[d] += 1
            correct[d] += e.get("correct") is True
    return [{"date": d.isoformat(), "answered": answered[d], "correct": correct[d],
             "accuracy": round(correct[d] / answered[d], 4)} for d in sorted(answered)]


def cards(states: dict[str, dict], events: list[dict], now: Instant, tz: Zone) -> dict:
    """Cards due and reviewed.  ``states`` maps item id -> schedule with a ``"due"`` time
    (an ISO string as ``fsrs`` writes it, an aware datetime or epoch ms).
    """
    now_ms = to_ms(now)
    d = local_date(now_ms, tz)
    end = day_end_ms(d, tz)
    dues = [to_ms(s["due"]) for s in states.values()]
    return {
        "total": len(dues),
        "due_now": sum(1 for t in dues if t <= now_ms),
        "due_today": sum(1 for t in dues if t < end),
        "reviewed_today": sum(1 for e in events if e.get("kind") == "card_review" and local_date(int(e["t"]), tz) == d),
        "reviewed_total": sum(1 for e in events if e.get("kind") == "card_review"),
    }


def covering(item: dict) -> bool:
    """Whether a study item quizzes or drills its chunks (a quiz question or a flashcard)."""
    return item.get("type") in QUIZ_TYPES | CARD_TYPES or item.get("kind") in COVERING_KINDS


def coverage(source_chunks: dict[str, list[str]], items: list[dict]) -> dict[str, dict]:
    """Per source: ``{"chunks", "covered", "fraction"}``, the share of its chunks some quiz
    question or flashcard came from.  Chunk ids no longer in a source are ignored.

    >>> coverage({"a.md": ["a.md:0", "a.md:90"]}, [{"type": "basic", "chunk_ids": ["a.md:90", "b.md:0"]}])
    {'a.md': {'chunks': 2, 'covered': 1, 'fraction': 0.5}}
    """
    used = {c for item in items if covering(item) for c in item.get("chunk_ids", ())}
    out = {}
    for source, chunk_ids in source_chunks.items():
        ids = set(chunk_ids)
        hit = len(ids & used)
        out[source] = {"chunks": len(ids), "covered": hit, "fraction": round(hit / len(ids), 4) if ids else 0.0}
    return out


def set_items(sets: list[dict]) -> list[dict]:
    """All items of stored study sets (``{"kind", "items"}`` as ``study.generate`` returns them),
    each tagged with its set's ``kind``."""
    return [{"kind": s.get("kind"), **item} for s in sets for item in s.get("items", ())]


def source_chunks(sources: list[dict]) -> dict[str, list[str]]:
    """``{source id: chunk ids}`` from stored source records."""
    return {s["id"]: list(s.get("chunk_ids", ())) for s in sources}


def dashboard(data: dict, now: Instant, tz: Zone = None, *, heatmap_days: int = 90, first_weekday: int = 0) -> dict:
    """Everything the progress page shows, from the stored data (see ``metrics`` for its keys)."""
    tz = data.get("tz") if tz is None else tz
    events = data.get("events", [])
    return {
        "today": today(events, now, tz),
        "week": this_week(events, now, tz, first_weekday),
        "streak": streaks(events, now, tz),
        "heatmap": heatmap(events, now, tz, heatmap_days),
        "time_per_day": time_per_day(events, now, tz),
        "quiz_accuracy": quiz_accuracy(events, tz),
        "cards": cards(data.get("cards", {}), events, now, tz),
        "coverage": coverage(source_chunks(data.get("sources", [])), set_items(data.get("sets", []))),
    }
