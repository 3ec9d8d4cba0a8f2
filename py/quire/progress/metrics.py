"""Named numbers computed from stored data; badges are targets on these.

``data`` is a plain dict of what the app keeps:

- ``"events"``: the progress log (see ``events``)
- ``"sources"``: source records ``{"id", "chunk_ids": [...], ...}``
- ``"sets"``: study sets as ``study.generate`` returns them, ``{"id", "kind", "items"}``
  with kind ``"quiz" | "flashcards" | "workshop_outline" | "workshop_lesson" | "mindmap"``
- ``"cards"``: ``{item id: fsrs schedule}``
- ``"tz"``: the person's time zone (minutes east of UTC or an IANA name)

Any key may be missing.  Every metric is ``fn(data, now) -> int``; a new one is
a function here plus an entry in ``METRICS``.

>>> compute("questions_asked", {"events": [{"t": 0, "kind": "chat"}]}, now=0)
1
"""

from __future__ import annotations

from typing import Callable

from quire.errors import InvalidInput
from quire.progress import dashboard, sessions
from quire.progress.clock import Instant


def _events(data: dict, kind: str) -> list[dict]:
    return [e for e in data.get("events", ()) if e.get("kind") == kind]


def _sets(data: dict, kind: str) -> int:
    return sum(1 for s in data.get("sets", ()) if s.get("kind") == kind)


def sources_trained(data: dict, now: Instant) -> int:
    """Sources added to the library and indexed."""
    return len(data.get("sources", ()))


def questions_asked(data: dict, now: Instant) -> int:
    """Questions asked in chat."""
    return len(_events(data, "chat"))


def scoped_questions(data: dict, now: Instant) -> int:
    """Chat questions limited to chosen sources."""
    return sum(1 for e in _events(data, "chat") if e.get("scoped"))


def quiz_answers(data: dict, now: Instant) -> int:
    return len(_events(data, "quiz_answer"))


def quiz_correct(data: dict, now: Instant) -> int:
    return sum(1 for e in _events(data, "quiz_answer") if e.get("correct") is True)


def quiz_perfect_scores(data: dict, now: Instant) -> int:
    """Finished quizzes with every question right."""
    return sum(1 for e in _events(data, "quiz_complete") if e.get("total", 0) > 0 and e.get("score") == e.get("total"))


def cards_reviewed(data: dict, now: Instant) -> int:
    return len(_events(data, "card_review"))


def streak_days(data: dict, now: Instant) -> int:
    """The longest run of consecutive days with study (a badge, once reached, stays)."""
    return dashboard.streaks(data.get("events", []), now, data.get("tz"))["longest"]


def active_days(data: dict, now: Instant) -> int:
    """Days with any study action."""
    return len(dashboard.actions_by_day(data.get("events", []), data.get("tz")))


def study_minutes(data: dict, now: Instant) -> int:
    """Whole minutes studied, over all inferred sessions."""
    return int(sum(s["duration_ms"] for s in sessions.infer(data.get("events", []))) // 60_000)


def session_count(data: dict, now: Instant) -> int:
    """Study sessions (see ``sessions`` for how they are inferred)."""
    return len(sessions.infer(data.get("events", [])))


def flashcard_decks(data: dict, now: Instant) -> int:
    return _sets(data, "flashcards")


def quizzes_made(data: dict, now: Instant) -> int:
    return _sets(data, "quiz")


def workshops_completed_lessons(data: dict, now: Instant) -> int:
    """Distinct workshop lessons marked complete (by ``item``; events without one count once each)."""
    done = _events(data, "lesson_complete")
    return len({e["item"] for e in done if e.get("item")}) + sum(1 for e in done if not e.get("item"))


def mindmaps(data: dict, now: Instant) -> int:
    return _sets(data, "mindmap")


def exports(data: dict, now: Instant) -> int:
    """Exports of study material or of the whole vault."""
    return len(_events(data, "export")) + len(_events(data, "vault_export"))


def sources_covered(data: dict, now: Instant) -> int:
    """Sources with at least 80% of their chunks quizzed or carded."""
    cov = dashboard.coverage(dashboard.source_chunks(data.get("sources", [])), dashboard.set_items(data.get("sets", [])))
    return sum(1 for c in cov.values() if c["chunks"] and c["fraction"] >= 0.8)


METRICS: dict[str, Callable[[dict, Instant], int]] = {
    "sources_trained": sources_trained,
    "questions_asked": questions_asked,
    "scoped_questions": scoped_questions,
    "quiz_answers": quiz_answers,
    "quiz_correct": quiz_correct,
    "quiz_perfect_scores": quiz_perfect_scores,
    "cards_reviewed": cards_reviewed,
    "streak_days": streak_days,
    "active_days": active_days,
    "study_minutes": study_minutes,
    "sessions": session_count,
    "flashcard_decks": flashcard_decks,
    "quizzes_made": quizzes_made,
    "workshops_completed_lessons": workshops_completed_lessons,
    "mindmaps": mindmaps,
    "exports": exports,
    "sources_covered": sources_covered,
}


def metric(name: str) -> Callable[[dict, Instant], int]:
    """The metric function called ``name``; an unknown name lists the valid ones."""
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise InvalidInput(f"unknown metric {name!r}; choose one of: {', '.join(sorted(METRICS))}") from None


def compute(name: str, data: dict, now: Instant) -> int:
    return metric(name)(data, now)
