"""Events are checked when recorded, and recording never raises."""

import logging

import pytest

from quire.progress.events import KINDS, check_event, make_event, record, safe_record

T0 = 1_735_689_600_000  # 2025-01-01T00:00:00Z


@pytest.mark.parametrize("event, expected", [
    ({"t": T0, "kind": "chat"}, {"t": T0, "kind": "chat", "scoped": False, "sources": []}),
    ({"t": "2025-01-01T00:00:00Z", "kind": "chat", "scoped": 1, "sources": ("a",)},
     {"t": T0, "kind": "chat", "scoped": True, "sources": ["a"]}),
    ({"t": T0, "kind": "quiz_answer", "correct": False},
     {"t": T0, "kind": "quiz_answer", "correct": False, "scoped": False, "sources": []}),
    ({"t": T0, "kind": "card_review", "rating": 3},
     {"t": T0, "kind": "card_review", "rating": 3, "scoped": False, "sources": []}),
])
def test_check_event_normalises(event, expected):
    assert check_event(event) == expected


@pytest.mark.parametrize("event, message", [
    ({"t": T0, "kind": "dance"}, "unknown event kind 'dance'; choose one of: card_review, chat"),
    ({"kind": "chat"}, "event time None"),
    ({"t": "2025-01-01T00:00:00", "kind": "chat"}, "naive datetime"),
    ({"t": T0, "kind": "quiz_answer"}, "needs 'correct'"),
    ({"t": T0, "kind": "card_review", "rating": "meh"}, "unknown rating 'meh'"),
    ({"t": T0, "kind": "quiz_complete", "score": 5, "total": 4}, "0 <= score <= total"),
    ({"t": T0, "kind": "chat", "sources": [1]}, "source id strings"),
    ("chat", "an event is a dict"),
])
def test_check_event_refuses(event, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_event(event)


def test_make_event_checks_and_fills():
    e = make_event("quiz_complete", T0, sources=["a.md"], score=3, total=3)
    assert e == {"t": T0, "kind": "quiz_complete", "scoped": False, "sources": ["a.md"], "score": 3, "total": 3}


class Appender:
    def __init__(self):
        self.items = []

    def append(self, event):
        self.items.append(event)


class Broken:
    def append(self, event):
        raise OSError("IndexedDB quota exceeded")


def test_record_into_list_object_and_callable():
    log, obj, seen = [], Appender(), []
    assert record(log, {"t": T0, "kind": "chat"})
    assert record(obj, {"t": T0, "kind": "lesson_open"})
    assert record(seen.append, {"t": T0, "kind": "export"})
    assert [len(log), len(obj.items), len(seen)] == [1, 1, 1]


@pytest.mark.parametrize("store, event", [
    ([], {"t": T0, "kind": "nope"}),  # bad event
    (Broken(), {"t": T0, "kind": "chat"}),  # the store fails
    (42, {"t": T0, "kind": "chat"}),  # not a store at all
    ([], None),
])
def test_record_never_raises_and_logs(store, event, caplog):
    with caplog.at_level(logging.ERROR, logger="quire.progress"):
        assert record(store, event) is False
    assert "could not record progress" in caplog.text
    if isinstance(store, list):
        assert store == []


def test_safe_record_passes_results_and_swallows_errors(caplog):
    assert safe_record(lambda a, b=0: a + b, 1, b=2) == 3
    with caplog.at_level(logging.ERROR, logger="quire.progress"):
        assert safe_record(lambda: {}["missing"]) is None
    assert "KeyError" in caplog.text


def test_kinds_cover_the_documented_ones():
    assert {"chat", "quiz_answer", "card_review", "lesson_open"} <= KINDS
