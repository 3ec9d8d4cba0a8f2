"""Sessions from pauses: a pause of strictly more than 15:00 starts a new one."""

import pytest

from quire.progress.clock import to_ms
from quire.progress.sessions import CREDIT_MS, GAP_MS, infer, minutes_by_day, ms_by_day

S, M = 1000, 60_000
T0 = to_ms("2025-03-10T10:00:00Z")


def chats(*offsets_ms, kind="chat"):
    return [{"t": T0 + o, "kind": kind} for o in offsets_ms]


@pytest.mark.parametrize("gap, sessions", [
    (14 * M + 59 * S, 1),
    (15 * M, 1),  # exactly 15:00 is not *more than* 15 minutes
    (15 * M + 1 * S, 2),
    (15 * M + 1, 2),
])
def test_gap_boundary(gap, sessions):
    assert len(infer(chats(0, gap))) == sessions


def test_worked_example_durations():
    """10:00, 10:14:59 and 10:30:00 -> 15:59 and 1:00 (see the module docstring)."""
    got = infer(chats(0, 14 * M + 59 * S, 30 * M))
    assert [(s["actions"], s["duration_ms"]) for s in got] == [(2, 14 * M + 59 * S + CREDIT_MS), (1, CREDIT_MS)]
    assert got[0]["minutes"] == pytest.approx(15 + 59 / 60)


def test_any_study_action_extends_and_other_kinds_do_not():
    events = chats(0) + chats(10 * M, kind="card_review") + chats(20 * M, kind="source_added") \
        + chats(24 * M, kind="quiz_answer")
    for e in events:
        if e["kind"] == "quiz_answer":
            e["correct"] = True
    got = infer(events)
    # chat, card review and quiz answer make one session; the source_added is not counted as an action
    assert [(s["start"] - T0, s["end"] - T0, s["actions"]) for s in got] == [(0, 24 * M, 3)]
    # an export in the middle of a 32-minute pause does not bridge it
    assert len(infer(chats(0) + chats(16 * M, kind="export") + chats(32 * M))) == 2


def test_unordered_input_is_sorted():
    assert infer(chats(30 * M, 0, 5 * M))[0]["start"] == T0


def test_empty():
    assert infer([]) == [] and ms_by_day([], 0) == {}


@pytest.mark.parametrize("tz, expected", [
    # 23:50-00:05 UTC with a minute of credit: 10 min before midnight, 6 after
    (0, {"2025-03-10": 10.0, "2025-03-11": 6.0}),
    # the same instants in UTC+1 are 00:50-01:06 on the 11th
    (60, {"2025-03-11": 16.0}),
    ("America/New_York", {"2025-03-10": 16.0}),
])
def test_minutes_split_at_local_midnight(tz, expected):
    start = to_ms("2025-03-10T23:50:00Z")
    events = [{"t": start + o, "kind": "chat"} for o in (0, 5 * M, 15 * M)]
    got = {d.isoformat(): round(m, 3) for d, m in minutes_by_day(events, tz).items()}
    assert got == expected
    assert sum(got.values()) == infer(events)[0]["duration_ms"] / M


def test_gap_constant_is_fifteen_minutes():
    assert GAP_MS == 15 * M
