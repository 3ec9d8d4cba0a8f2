"""Study sessions, inferred from the pauses between study actions.

Nobody presses "start" or "stop".  Every study action (a chat question, a quiz
answer, a card review, opening a lesson...) extends the current session; after
a pause of strictly more than ``GAP_MS`` (15:00) the next action starts a new
one.  A session lasts from its first to its last action plus ``CREDIT_MS``
(one minute): the last action took some time we cannot see, and a session of
a single answer should count as a minute, not zero.

Worked example: actions at 10:00, 10:14:59 and 10:30:00.  The second pause is
15:01, so there are two sessions: 10:00-10:14:59 (14:59 + 1:00 = 15:59) and
10:30 alone (1:00).

>>> m = 60_000
>>> [s["duration_ms"] for s in infer([{"t": 0, "kind": "chat"}, {"t": 15 * m - 1000, "kind": "chat"},
...                                   {"t": 30 * m, "kind": "chat"}])]
[959000, 60000]
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from quire.progress.clock import MINUTE_MS, Zone, day_end_ms, local_date
from quire.progress.events import STUDY_KINDS

GAP_MS = 15 * MINUTE_MS  # a pause longer than this ends a session
CREDIT_MS = MINUTE_MS  # time credited to the last action of a session


def study_times(events: list[dict]) -> list[int]:
    """Sorted epoch-ms times of the study actions among ``events`` (other kinds are ignored)."""
    return sorted(int(e["t"]) for e in events if e.get("kind") in STUDY_KINDS)


def infer(events: list[dict]) -> list[dict]:
    """Sessions in time order: ``{"start", "end", "actions", "duration_ms", "minutes"}``.

    ``end`` is the time of the last action; ``duration_ms`` is ``end - start + CREDIT_MS``.
    """
    out: list[dict] = []
    for t in study_times(events):
        if out and t - out[-1]["end"] <= GAP_MS:
            out[-1]["end"] = t
            out[-1]["actions"] += 1
        else:
            out.append({"start": t, "end": t, "actions": 1})
    for s in out:
        s["duration_ms"] = s["end"] - s["start"] + CREDIT_MS
        s["minutes"] = s["duration_ms"] / MINUTE_MS
    return out


def _spread(start: int, end: int, tz: Zone, into: dict) -> None:
    """Add the milliseconds of ``[start, end)`` to the local days they fall in."""
    day = local_date(start, tz)
    while start < end:
        cut = min(end, day_end_ms(day, tz))
        into[day] += cut - start
        start, day = cut, date.fromordinal(day.toordinal() + 1)


def ms_by_day(events: list[dict], tz: Zone) -> dict[date, int]:
    """Milliseconds studied per local day; time is split at midnight, so a session
    from 23:50 to 00:10 gives each day its own share.
    """
    totals: dict[date, int] = defaultdict(int)
    times = study_times(events)
    for a, b in zip(times, times[1:]):
        if b - a <= GAP_MS:
            _spread(a, b, tz, totals)
    for s in infer(events):
        _spread(s["end"], s["end"] + CREDIT_MS, tz, totals)
    return dict(totals)


def minutes_by_day(events: list[dict], tz: Zone) -> dict[date, float]:
    """``ms_by_day`` in minutes."""
    return {d: ms / MINUTE_MS for d, ms in sorted(ms_by_day(events, tz).items())}
