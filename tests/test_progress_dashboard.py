"""Dashboard numbers over plain data, with an explicit now and time zone."""

from datetime import date, datetime, timedelta, timezone

import pytest

from quire.progress import dashboard as db
from quire.progress.clock import DAY_MS, day_start_ms, local_date, to_ms, zone

M = 60_000


def at(iso, kind="chat", **extra):
    return {"t": to_ms(iso), "kind": kind, **extra}


# --- clock ---------------------------------------------------------------------

@pytest.mark.parametrize("iso, tz, expected", [
    ("2025-03-01T23:30:00Z", 0, "2025-03-01"),
    ("2025-03-01T23:30:00Z", 60, "2025-03-02"),
    ("2025-03-01T00:30:00Z", -60, "2025-02-28"),
    ("2025-03-01T23:30:00Z", "Europe/Berlin", "2025-03-02"),
    ("2025-07-01T22:30:00Z", "Europe/Berlin", "2025-07-02"),  # summer time, UTC+2
    ("2025-07-01T21:30:00Z", "Europe/Berlin", "2025-07-01"),
    ("2025-03-02T03:00:00Z", "America/New_York", "2025-03-01"),
    ("2025-03-01T12:00:00Z", "Asia/Kolkata", "2025-03-01"),
    ("2025-03-01T19:00:00Z", 330, "2025-03-02"),  # UTC+5:30 as minutes
    ("2025-03-01T23:59:59Z", None, "2025-03-01"),
    ("2025-03-01T23:59:59Z", "UTC", "2025-03-01"),
])
def test_local_date(iso, tz, expected):
    assert local_date(to_ms(iso), tz).isoformat() == expected


@pytest.mark.parametrize("tz, message", [
    ("Mars/Olympus", "unknown time zone 'Mars/Olympus'"),
    (2000, "out of range"),
])
def test_zone_refuses(tz, message):
    with pytest.raises(ValueError, match=message):
        zone(tz)


def test_day_length_follows_daylight_saving():
    d = date(2025, 3, 30)  # Berlin springs forward: a 23-hour day
    assert day_start_ms(d + timedelta(days=1), "Europe/Berlin") - day_start_ms(d, "Europe/Berlin") == DAY_MS - 3_600_000


def test_now_as_datetime_string_or_ms_agree():
    events = [at("2025-03-01T10:00:00Z")]
    dt = datetime(2025, 3, 1, 12, tzinfo=timezone.utc)
    assert db.today(events, dt, 0) == db.today(events, "2025-03-01T12:00:00Z", 0) == db.today(events, to_ms(dt), 0)


# --- streaks -------------------------------------------------------------------

def daily(days, hour="12:00"):
    return [at(f"2025-03-{d:02d}T{hour}:00Z") for d in days]


@pytest.mark.parametrize("days, now, expected", [
    ([], "2025-03-10T12:00:00Z", {"current": 0, "longest": 0}),
    ([8, 9, 10], "2025-03-10T18:00:00Z", {"current": 3, "longest": 3}),
    ([8, 9], "2025-03-10T08:00:00Z", {"current": 2, "longest": 2}),  # yesterday still counts today
    ([7, 8], "2025-03-10T08:00:00Z", {"current": 0, "longest": 2}),  # a whole day missed
    ([1, 2, 3, 4, 8, 9, 10], "2025-03-10T12:00:00Z", {"current": 3, "longest": 4}),
    ([1, 3, 5], "2025-03-05T12:00:00Z", {"current": 1, "longest": 1}),
    ([9, 10, 11], "2025-03-10T12:00:00Z", {"current": 2, "longest": 2}),  # the future is ignored
])
def test_streaks(days, now, expected):
    assert db.streaks(daily(days), now, 0) == expected


@pytest.mark.parametrize("tz, expected", [
    # study at 23:30 UTC on the 1st and 00:30 UTC on the 3rd (47 hours apart)
    (0, {"current": 1, "longest": 1}),  # the 1st and the 3rd: a gap day
    (60, {"current": 2, "longest": 2}),  # the 2nd and the 3rd in UTC+1
    ("Europe/Berlin", {"current": 2, "longest": 2}),
    (-60, {"current": 2, "longest": 2}),  # the 1st and the 2nd in UTC-1
])
def test_streak_depends_on_the_time_zone(tz, expected):
    events = [at("2025-03-01T23:30:00Z"), at("2025-03-03T00:30:00Z")]
    assert db.streaks(events, "2025-03-03T12:00:00Z", tz) == expected


def test_non_study_events_do_not_keep_a_streak():
    events = daily([8, 9]) + [at("2025-03-10T12:00:00Z", "source_added")]
    assert db.streaks(events, "2025-03-11T12:00:00Z", 0) == {"current": 0, "longest": 2}


# --- today, week, heatmap ------------------------------------------------------

EVENTS = [
    at("2025-03-09T23:55:00Z"),  # Sunday night UTC, Monday in UTC+1
    at("2025-03-10T09:00:00Z", "quiz_answer", correct=True),
    at("2025-03-10T09:05:00Z", "quiz_answer", correct=False),
    at("2025-03-10T09:10:00Z", "card_review", rating="good"),
    at("2025-03-10T15:00:00Z", "chat", scoped=True),
    at("2025-03-11T09:00:00Z", "quiz_answer", correct=True),
    at("2025-03-11T09:00:00Z", "export"),
]


def test_today():
    got = db.today(EVENTS, "2025-03-10T20:00:00Z", 0)
    assert got == {"from": "2025-03-10", "to": "2025-03-10", "actions": 4, "minutes": 12.0, "sessions": 2,
                   "questions": 1, "quiz_answers": 2, "quiz_correct": 1, "cards_reviewed": 1, "days_active": 1}


@pytest.mark.parametrize("tz, first_weekday, expected_from, actions", [
    (0, 0, "2025-03-10", 5),  # Monday 10th..Tuesday 11th
    (0, 6, "2025-03-09", 6),  # weeks start on Sunday: the 23:55 chat counts
    (60, 0, "2025-03-10", 6),  # in UTC+1 the 23:55 chat is Monday 00:55
])
def test_this_week(tz, first_weekday, expected_from, actions):
    got = db.this_week(EVENTS, "2025-03-11T12:00:00Z", tz, first_weekday)
    assert (got["from"], got["to"], got["actions"]) == (expected_from, "2025-03-11", actions)


def test_heatmap_has_ninety_days_ending_today():
    got = db.heatmap(EVENTS, "2025-03-11T12:00:00Z", 0)
    assert len(got) == 90 and got[-1]["date"] == "2025-03-11" and got[0]["date"] == "2024-12-12"
    by_date = {h["date"]: h for h in got}
    assert by_date["2025-03-10"] == {"date": "2025-03-10", "count": 4, "minutes": 12.0}
    assert by_date["2025-03-09"] == {"date": "2025-03-09", "count": 1, "minutes": 1.0}
    assert by_date["2025-03-11"]["count"] == 1  # the export is not a study action
    assert sum(h["count"] for h in got) == 6


def test_time_per_day():
    got = db.time_per_day(EVENTS, "2025-03-11T12:00:00Z", 0, days=3)
    assert got == [{"date": "2025-03-09", "minutes": 1.0}, {"date": "2025-03-10", "minutes": 12.0},
                   {"date": "2025-03-11", "minutes": 1.0}]


def test_quiz_accuracy_per_day():
    assert db.quiz_accuracy(EVENTS, 0) == [
        {"date": "2025-03-10", "answered": 2, "correct": 1, "accuracy": 0.5},
        {"date": "2025-03-11", "answered": 1, "correct": 1, "accuracy": 1.0},
    ]


# --- cards and coverage ---------------------------------------------------------

def test_cards_due_and_reviewed():
    states = {
        "a": {"due": "2025-03-10T08:00:00+00:00"},  # overdue
        "b": {"due": "2025-03-10T20:00:00+00:00"},  # later today (UTC)
        "c": {"due": "2025-03-10T23:30:00+00:00"},  # tomorrow in UTC+1
        "d": {"due": to_ms("2025-03-12T08:00:00Z")},
    }
    got = db.cards(states, EVENTS, "2025-03-10T12:00:00Z", 0)
    assert got == {"total": 4, "due_now": 1, "due_today": 3, "reviewed_today": 1, "reviewed_total": 1}
    assert db.cards(states, EVENTS, "2025-03-10T12:00:00Z", 60)["due_today"] == 2


def test_cards_from_fsrs_states():
    from quire.study import fsrs_sched

    t0 = datetime(2025, 3, 10, 9, tzinfo=timezone.utc)
    state, _ = fsrs_sched.review(fsrs_sched.new_schedule(1, t0), "easy", t0)
    got = db.cards({"x": state, "y": fsrs_sched.new_schedule(2, t0)}, [], t0 + timedelta(hours=1), 0)
    assert (got["due_now"], got["due_today"]) == (1, 1)


def test_coverage():
    chunks = {"a.md": ["a.md:0", "a.md:100", "a.md:200", "a.md:300"], "b.pdf": ["b.pdf:0"], "empty": []}
    items = [
        {"type": "multiple_choice", "chunk_ids": ["a.md:0", "a.md:100"]},
        {"type": "basic", "chunk_ids": ["a.md:100", "gone:0"]},
        {"kind": "flashcards", "chunk_ids": ["a.md:200"]},
        {"kind": "mindmap", "chunk_ids": ["a.md:300", "b.pdf:0"]},  # a map does not quiz its chunks
    ]
    assert db.coverage(chunks, items) == {
        "a.md": {"chunks": 4, "covered": 3, "fraction": 0.75},
        "b.pdf": {"chunks": 1, "covered": 0, "fraction": 0.0},
        "empty": {"chunks": 0, "covered": 0, "fraction": 0.0},
    }


def test_dashboard_assembles_everything():
    data = {
        "events": EVENTS, "tz": "Europe/Berlin",
        "sources": [{"id": "a.md", "chunk_ids": ["a.md:0", "a.md:1"]}],
        "sets": [{"id": "s1", "kind": "quiz", "items": [{"type": "true_false", "chunk_ids": ["a.md:1"]}]}],
        "cards": {"x": {"due": "2025-03-11T00:00:00+00:00"}},
    }
    got = db.dashboard(data, "2025-03-11T12:00:00Z")
    assert set(got) == {"today", "week", "streak", "heatmap", "time_per_day", "quiz_accuracy", "cards", "coverage"}
    assert got["streak"] == {"current": 2, "longest": 2}
    assert got["coverage"]["a.md"]["fraction"] == 0.5
    assert got["cards"]["due_now"] == 1
    assert len(got["heatmap"]) == 90 and len(got["time_per_day"]) == 30
