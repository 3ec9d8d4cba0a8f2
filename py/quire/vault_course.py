"""A course: a teacher's vault that a bundle carries, and what a student's import takes from it.

A teacher trains a library, makes study sets from it, exports a vault and builds a bundle that
carries it (``python3 build.py --library course.quirevault``, ``py/quire_build/library.py``).  The
vault is checked by the same reader as any vault (``quire.vault``, ``quire.vault_library``); this
module only says what a course is:

- its **about** record: title, documents, passages, study sets and the day it was made, what the
  page offers ("This copy comes with a library: Biology 101, 12 documents, 640 passages");
- what a student's import **takes** from it: the library (sources, originals, passages, the
  embedding and OCR caches, taken as they are) and the study sets, each marked as from the
  teacher and started afresh (a quiz not yet answered, cards not yet reviewed, no lesson done).
  The teacher's own chats, progress and settings stay out: a course is data, never configuration,
  and never someone else's study history;
- what a **replacing** course import may delete: the library and the sets of an earlier course,
  never the student's own chats, progress, settings or study sets.

>>> sources = {"a": {"name": "cells.md", "status": "trained", "category": "Biology 101"},
...            "b": {"name": "notes.md", "status": "staged", "category": None}}
>>> chunks = {"a": [{"text": "x"}, {"text": "y"}]}
>>> about(sources, chunks, {"q1": {"kind": "quiz"}}, "2026-12-01T10:00:00Z")
{'title': 'Biology 101', 'documents': 1, 'passages': 2, 'sets': 1, 'made': '2026-12-01'}
>>> sets = {"q1": {"id": "q1", "kind": "workshop", "created": 0, "done": ["0.0"], "outline": {}}}
>>> taken = course_stores({"sources": sources, "chats": {"c": {}}, "study": sets}, {"id": "ab12", "title": "Bio"})
>>> sorted(taken), taken["study"]["q1"]["course"], taken["study"]["q1"]["done"]
(['chunks', 'ocr', 'originals', 'sources', 'study', 'vectors'], {'id': 'ab12', 'title': 'Bio'}, [])
"""

from __future__ import annotations

import copy
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Mapping

from quire.errors import QuireError

# What a course brings into a student's library.  Chats, progress and settings are the teacher's own.
LIBRARY_BUCKETS = ("sources", "originals", "chunks", "vectors", "ocr")
COURSE_BUCKETS = LIBRARY_BUCKETS + ("study",)
SET_KINDS = ("quiz", "flashcards", "workshop", "mindmap")
MODES = ("offer", "kiosk")  # a student's import (their own things stay) or a kiosk's reset (the course exactly)
MAX_TITLE = 120  # characters of a course's title the page shows


class CourseError(QuireError):
    """A course vault Quire cannot use as one; the message says why."""


def title_of(sources: Mapping[str, Any], fallback: str = "Course") -> str:
    """The course's title when the teacher gave none: the category most of its documents share.

    >>> title_of({"a": {"category": "Bio"}, "b": {"category": "Bio"}, "c": {"category": None}})
    'Bio'
    >>> title_of({}, "course")
    'course'
    """
    names = Counter(s.get("category") for s in sources.values() if isinstance(s, Mapping) and s.get("category"))
    return clean_title(names.most_common(1)[0][0] if names else fallback)


def clean_title(text: str) -> str:
    """One line, at most ``MAX_TITLE`` characters.

    >>> clean_title("  Biology\\n101  ")
    'Biology 101'
    """
    return " ".join(str(text).split())[:MAX_TITLE] or "Course"


def about(sources: Mapping[str, Any], chunks: Mapping[str, list], study: Mapping[str, Any], created: Any,
          title: str | None = None) -> dict:
    """What the page says of a course before anyone loads it."""
    trained = [sid for sid, s in sources.items() if isinstance(s, Mapping) and s.get("status") == "trained"]
    made = created[:10] if isinstance(created, str) else None
    return {"title": clean_title(title) if title else title_of(sources), "documents": len(trained),
            "passages": sum(len(chunks.get(sid) or []) for sid in trained),
            "sets": sum(1 for r in study.values() if isinstance(r, Mapping) and r.get("kind") in SET_KINDS),
            "made": made}


def is_course_set(record: Any) -> bool:
    return isinstance(record, Mapping) and isinstance(record.get("course"), Mapping)


def fresh_set(record: Mapping, course: Mapping) -> dict:
    """A teacher's study set as a student first finds it: marked as from the course, nothing answered yet.

    The set's own creation time stands for "now", so the same vault always gives the same set (a
    kiosk's reset restores it exactly)."""
    if not isinstance(record, Mapping) or record.get("kind") not in SET_KINDS:
        raise CourseError(f"the course holds a study set Quire cannot open ({str(record.get('id') if isinstance(record, Mapping) else record)[:40]!r})")
    out = copy.deepcopy(dict(record))
    out["course"] = {"id": course["id"], "title": course["title"]}
    created = out.get("created") if isinstance(out.get("created"), (int, float)) else 0
    when = datetime.fromtimestamp(created, timezone.utc)
    kind = out["kind"]
    if kind == "quiz" and isinstance(out.get("items"), list) and out["items"]:
        from quire.study import quiz  # lazy: the study package loads after the engine starts

        out["session"] = quiz.start(out["items"], when.isoformat().replace("+00:00", "Z"))
    elif kind == "flashcards" and isinstance(out.get("items"), list):
        from quire.study import fsrs_sched

        out["schedules"] = {i["id"]: fsrs_sched.new_schedule(fsrs_sched.card_number(i["id"]), when)
                            for i in out["items"] if isinstance(i, Mapping) and isinstance(i.get("id"), str)}
    elif kind == "workshop":
        out["done"] = []
    return out


def course_stores(incoming: Mapping[str, Mapping[str, Any]], course: Mapping) -> dict:
    """The part of an unpacked vault (bucket -> {key: value}) a course brings, its sets marked."""
    out = {b: dict(incoming.get(b) or {}) for b in LIBRARY_BUCKETS}
    out["study"] = {k: fresh_set(r, course) for k, r in (incoming.get("study") or {}).items()}
    return out


def replaceable(current: Mapping[str, Mapping[str, Any]]) -> dict:
    """What a student's replacing course import may delete: the library and earlier courses' sets.

    >>> cur = {"sources": {"s": 1}, "chats": {"c": 1}, "study": {"mine": {}, "t": {"course": {"id": "x"}}}}
    >>> r = replaceable(cur)
    >>> r["sources"], r["study"], "chats" in r
    ({'s': 1}, {'t': {'course': {'id': 'x'}}}, False)
    """
    out = {b: dict(current.get(b) or {}) for b in LIBRARY_BUCKETS}
    out["study"] = {k: r for k, r in (current.get("study") or {}).items() if is_course_set(r)}
    return out
