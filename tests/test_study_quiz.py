"""Quiz play as pure data."""

import json

import pytest

from quire.study import quiz

ITEMS = [
    {"id": "q1", "type": "true_false", "question": "A", "options": ["True", "False"], "answer": 0},
    {"id": "q2", "type": "multiple_choice", "question": "B", "options": ["w", "x", "y", "z"], "answer": 2},
    {"id": "q3", "type": "true_false", "question": "C", "options": ["True", "False"], "answer": 1},
]


def test_play_score_resume_and_retry():
    s = quiz.start(ITEMS, "t0", order=[2, 0, 1])
    assert quiz.current(s)["id"] == "q3"
    s = quiz.answer(s, 1, "t1")
    s = json.loads(json.dumps(s))  # saved and reloaded mid-quiz
    assert quiz.resume(s) == (1, 3)
    s = quiz.answer(s, None, "t2")  # skipped
    s = quiz.answer(s, 0, "t3")
    assert s["status"] == "finished" and quiz.current(s) is None
    assert quiz.score(s) == {"answered": 2, "correct": 1, "skipped": 1, "total": 3, "percent": 33, "wrong": ["q1", "q2"]}
    again = quiz.restart(s, "t4", only_wrong=True)
    assert [again["items"][i]["id"] for i in again["order"]] == ["q1", "q2"]
    assert again["history"][0]["score"]["correct"] == 1
    again = quiz.answer(quiz.answer(again, 0, "t5"), 2, "t6")
    assert quiz.score(again)["percent"] == 100
    with pytest.raises(ValueError, match="nothing to retry"):
        quiz.restart(again, "t7", only_wrong=True)


@pytest.mark.parametrize("bad", [[], None])
def test_errors(bad):
    with pytest.raises(ValueError):
        quiz.start(bad or [], "t0")
    s = quiz.start(ITEMS, "t0")
    with pytest.raises(ValueError, match="not an option"):
        quiz.answer(s, 9, "t1")
