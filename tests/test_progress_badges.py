"""Badges are data: 25 definitions over named metrics, and an evaluator that checks them all."""

import copy
import json

import pytest

from quire.progress import badges, metrics
from quire.progress.clock import DAY_MS, to_ms

T0 = to_ms("2025-01-06T09:00:00Z")
NOW = T0 + 400 * DAY_MS
M = 60_000
DEFS = badges.load_definitions()


def ev(i, kind="chat", step=M, **extra):
    return {"t": T0 + i * step, "kind": kind, "scoped": False, "sources": [], **extra}


def covered_source(name, covered):
    return ({"id": name, "chunk_ids": [f"{name}:0", f"{name}:1"]},
            {"id": f"set-{name}", "kind": "flashcards",
             "items": [{"type": "basic", "chunk_ids": [f"{name}:{c}"]} for c in range(covered)]})


def make(metric, n):
    """Stored data whose ``metric`` is exactly ``n``, with some noise that must not count."""
    noise_chat = [ev(10_000, "chat", step=1)]
    if metric == "sources_trained":
        return {"sources": [{"id": f"s{i}.md"} for i in range(n)]}
    if metric == "questions_asked":
        return {"events": [ev(i) for i in range(n)] + [ev(0, "lesson_open")]}
    if metric == "scoped_questions":
        return {"events": [ev(i, scoped=True) for i in range(n)] + noise_chat}
    if metric == "quiz_answers":
        return {"events": [ev(i, "quiz_answer", correct=i % 2 == 0) for i in range(n)] + noise_chat}
    if metric == "quiz_correct":
        return {"events": [ev(i, "quiz_answer", correct=True) for i in range(n)] + [ev(0, "quiz_answer", correct=False)]}
    if metric == "quiz_perfect_scores":
        return {"events": [ev(i, "quiz_complete", score=5, total=5) for i in range(n)]
                + [ev(0, "quiz_complete", score=4, total=5), ev(0, "quiz_complete", score=0, total=0)]}
    if metric == "cards_reviewed":
        return {"events": [ev(i, "card_review", step=1000, rating="good") for i in range(n)] + noise_chat}
    if metric == "streak_days":
        # a run of n days, a gap, then a shorter run: the longest counts
        run = [ev(i, step=DAY_MS) for i in range(n)]
        return {"events": run + [ev(n + 1 + i, step=DAY_MS) for i in range(n // 2)], "tz": "Europe/Berlin"}
    if metric == "active_days":
        return {"events": [ev(2 * i, step=DAY_MS) for i in range(n)] + [ev(0, "export")]}
    if metric == "study_minutes":
        return {"events": [ev(i) for i in range(n)]}  # (n - 1) minutes apart + 1 minute credit
    if metric == "sessions":
        return {"events": [ev(i, step=20 * M) for i in range(n)] + [ev(0, "export")]}
    if metric in ("flashcard_decks", "quizzes_made", "mindmaps"):
        kind = {"flashcard_decks": "flashcards", "quizzes_made": "quiz", "mindmaps": "mindmap"}[metric]
        other = "workshop_outline"
        return {"sets": [{"id": f"x{i}", "kind": kind, "items": []} for i in range(n)] + [{"id": "o", "kind": other}]}
    if metric == "workshops_completed_lessons":
        done = [ev(i, "lesson_complete", item=f"lesson-{i}") for i in range(n)]
        return {"events": done + done[:1] + [ev(0, "lesson_open", item="lesson-x")]}
    if metric == "exports":
        return {"events": [ev(i, "export" if i % 2 else "vault_export") for i in range(n)] + [ev(0, "vault_import")]}
    if metric == "sources_covered":
        pairs = [covered_source(f"s{i}", 2) for i in range(n)] + [covered_source("half", 1)]
        return {"sources": [p[0] for p in pairs], "sets": [p[1] for p in pairs]}
    raise AssertionError(f"no test data for metric {metric!r}: add it to make()")


@pytest.mark.parametrize("name", sorted(metrics.METRICS))
@pytest.mark.parametrize("n", [0, 1, 7])
def test_every_metric_counts_exactly(name, n):
    assert metrics.compute(name, make(name, n), NOW) == n


def test_empty_data_gives_zero_everywhere():
    assert {name: metrics.compute(name, {}, NOW) for name in metrics.METRICS} == dict.fromkeys(metrics.METRICS, 0)


def test_unknown_metric_lists_the_valid_names():
    with pytest.raises(ValueError, match=r"unknown metric 'hugs'; choose one of: active_days, cards_reviewed"):
        metrics.compute("hugs", {}, NOW)


# --- the shipped definitions ------------------------------------------------------

def test_there_are_exactly_25_well_formed_badges():
    assert len(DEFS) == 25
    assert len({d["code"] for d in DEFS}) == 25
    for d in DEFS:
        assert set(d) <= {"code", "name", "icon", "description", "metric", "target", "next"}
        assert d["name"] and d["description"] and 0 < len(d["icon"]) <= 3


def test_ladders_climb_the_same_metric():
    by_code = {d["code"]: d for d in DEFS}
    for d in DEFS:
        if "next" in d:
            nxt = by_code[d["next"]]
            assert (nxt["metric"], nxt["target"] > d["target"]) == (d["metric"], True), d["code"]
    assert len([d for d in DEFS if "next" in d]) == len({d["next"] for d in DEFS if "next" in d})


@pytest.mark.parametrize("badge", DEFS, ids=[d["code"] for d in DEFS])
def test_each_badge_is_earned_exactly_at_its_target(badge):
    def earned(n):
        return badge["code"] in [b["code"] for b in badges.evaluate(DEFS, make(badge["metric"], n), [], NOW)]

    assert (earned(badge["target"] - 1), earned(badge["target"])) == (False, True)


# --- the evaluator ------------------------------------------------------------------

def test_evaluate_awards_once_in_definition_order():
    data = {"events": [ev(i) for i in range(30)]}  # 30 questions in 30 minutes
    got = badges.evaluate(DEFS, data, [], NOW)
    assert [(b["code"], b["value"]) for b in got] == [("first_question", 30), ("inquirer", 30)]
    assert got[0]["awarded"] == "2026-02-10T09:00:00+00:00"
    assert badges.evaluate(DEFS, data, ["first_question"], NOW)[0]["code"] == "inquirer"
    assert badges.evaluate(DEFS, data, got, NOW) == []


def test_a_26th_badge_is_only_a_json_entry(tmp_path):
    raw = json.loads(badges.DEFINITIONS.read_text(encoding="utf-8"))
    raw["badges"].append({"code": "well_read", "name": "Well read", "icon": "📖",
                          "description": "Quiz or card 80% of a source.", "metric": "sources_covered", "target": 1})
    path = tmp_path / "badges.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    defs = badges.load_definitions(path)
    assert len(defs) == 26
    got = badges.evaluate(defs, make("sources_covered", 1), [], NOW)
    assert "well_read" in [b["code"] for b in got]


@pytest.mark.parametrize("change, message", [
    (lambda d: d[0].update(metric="hugs"), "unknown metric 'hugs'; choose one of: active_days"),
    (lambda d: d[1].update(code=d[0]["code"]), "used more than once"),
    (lambda d: d[0].update(target=0), "positive integer"),
    (lambda d: d[0].update(target="5"), "positive integer"),
    (lambda d: d[0].update(next="nope"), "next badge 'nope' is not defined"),
    (lambda d: d[0].pop("icon"), "missing icon"),
])
def test_bad_definitions_fail_loudly_before_anything_is_awarded(change, message):
    defs = copy.deepcopy(DEFS)
    change(defs)
    with pytest.raises(ValueError, match=message):
        badges.evaluate(defs, make("questions_asked", 200), [], NOW)


def test_progress_shows_how_far_along():
    rows = {r["code"]: r for r in badges.progress(DEFS, make("cards_reviewed", 50), ["cards_10"], NOW)}
    assert (rows["cards_10"]["earned"], rows["cards_10"]["fraction"]) == (True, 1.0)
    assert (rows["cards_100"]["earned"], rows["cards_100"]["fraction"], rows["cards_100"]["value"]) == (False, 0.5, 50)
    assert rows["first_map"]["fraction"] == 0.0
