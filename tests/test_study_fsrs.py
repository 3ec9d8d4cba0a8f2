"""FSRS scheduling: a known rating sequence with fixed timestamps (fuzz off)."""

import json
from datetime import timedelta

import pytest

from quire.study import fsrs_sched as f

T0 = f.utc(2025, 1, 1, 9, 0)

# Worked by hand from FSRS-6 default parameters: a new card's first Good uses
# the 10-minute learning step; the second Good graduates it with stability
# w2 = 2.3065 -> 2 days at 90% retention; the next Good (2 days late-on-time)
# grows stability to ~10.97 -> 11 days; Again sends it to a 10-minute
# relearning step, and so on.
SEQUENCE = [
    ("good", "2025-01-01T09:00:00+00:00", "2025-01-01T09:10:00+00:00"),
    ("good", "2025-01-01T09:10:00+00:00", "2025-01-03T09:10:00+00:00"),
    ("good", "2025-01-03T09:10:00+00:00", "2025-01-14T09:10:00+00:00"),
    ("again", "2025-01-14T09:10:00+00:00", "2025-01-14T09:20:00+00:00"),
    ("good", "2025-01-14T09:20:00+00:00", "2025-01-16T09:20:00+00:00"),
    ("easy", "2025-01-16T09:20:00+00:00", "2025-01-24T09:20:00+00:00"),
]


def test_known_sequence_of_ratings():
    state = f.new_schedule(7, T0)
    for rating, at, due in SEQUENCE:
        state, log = f.review(state, rating, f.due_at({"due": at}))
        state = json.loads(json.dumps(state))  # survives storage as JSON
        assert state["due"] == due, rating
        assert log["rating"] == f.RATINGS.index(rating) + 1
    assert state["card_id"] == 7


def test_button_labels_for_a_new_card():
    assert f.next_intervals(f.new_schedule(1, T0), T0) == {"again": "1m", "hard": "6m", "good": "10m", "easy": "8d"}


def test_labels_match_what_happens():
    state = f.new_schedule(1, T0)
    state, _ = f.review(state, "good", T0)
    state, _ = f.review(state, "good", f.due_at(state))
    now = f.due_at(state)
    labels = f.next_intervals(state, now)
    for rating, label in labels.items():
        after, _ = f.review(state, rating, now)
        assert f.format_interval(f.due_at(after) - now) == label


@pytest.mark.parametrize("seconds,label", [(5, "<1m"), (60, "1m"), (600, "10m"), (3600, "1h"), (86400, "1d"),
                                           (3 * 86400, "3d"), (60 * 86400, "2mo"), (730 * 86400, "2y")])
def test_format_interval(seconds, label):
    assert f.format_interval(timedelta(seconds=seconds)) == label


def test_due_queue_orders_most_overdue_first():
    states = {"a": f.new_schedule(1, T0 + timedelta(days=1)), "b": f.new_schedule(2, T0 - timedelta(hours=1)),
              "c": f.new_schedule(3, T0)}
    assert f.due_queue(states, T0) == ["b", "c"]
    assert f.due_queue(states, T0, limit=1) == ["b"]


def test_bad_rating_names_the_valid_ones():
    with pytest.raises(ValueError, match="again, hard, good, easy"):
        f.review(f.new_schedule(1, T0), "meh", T0)


def test_stale_items():
    items = [{"id": "x", "chunk_hashes": {"a:0": "h1", "a:9": "h2"}}, {"id": "y", "chunk_hashes": {"a:0": "h1"}}]
    assert f.stale_items(items, {"a:0": "h1", "a:9": "new"}) == {"x": ["changed: a:9"]}
    assert f.stale_items(items, {}) == {"x": ["removed: a:0", "removed: a:9"], "y": ["removed: a:0"]}
