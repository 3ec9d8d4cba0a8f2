"""quire.chat.memory: sessions as JSON, the history budget, editing a question."""

import json

import pytest

from quire.chat import memory as m


def session_with(pairs, pending=None, **kw):
    s = m.new_session(session_id="s", now="2025-03-04T09:00:00+00:00", **kw)
    for q, a in pairs:
        m.add_question(s, q)
        m.add_answer(s, a)
    if pending:
        m.add_question(s, pending)
    return s


def test_session_is_plain_json():
    s = session_with([("Q1?", "A1 [1].")], scope={"category": "Exam 2"})
    s["messages"][-1]["citations"] = [{"n": 1, "chunk_id": "a:0"}]
    assert json.loads(json.dumps(s)) == s
    assert m.validate_session(json.loads(json.dumps(s))) == s


@pytest.mark.parametrize("bad,message", [
    ([], "must be an object"),
    ({"id": "s", "title": "t", "created": "c"}, "'messages'"),
    ({"id": "s", "title": "t", "created": "c", "messages": [{"role": "system", "content": "x"}]}, "message 0"),
    ({"id": "s", "title": "t", "created": "c", "messages": [], "scope": "Exam"}, "'scope'"),
])
def test_validate_session_names_the_problem(bad, message):
    with pytest.raises(ValueError, match=message):
        m.validate_session(bad)


def test_rename_tidies_the_title_and_a_blank_one_falls_back():
    a = m.new_session(session_id="a", now="1")
    assert m.rename(a, "  Krebs\n cycle ")["title"] == "Krebs cycle"
    assert m.rename(a, "   ")["title"] == m.DEFAULT_TITLE


@pytest.mark.parametrize("first,title", [
    ("What is mitosis?", "What is mitosis?"),
    ("   ", m.DEFAULT_TITLE),
    ("word " * 30, ("word " * 12).strip() + "…"),
])
def test_first_question_titles_the_session(first, title):
    s = m.new_session(session_id="s", now="t")
    m.add_question(s, first)
    assert s["title"] == title


def test_a_given_title_is_kept():
    s = m.new_session(title="Exam prep", session_id="s", now="t")
    m.add_question(s, "What?")
    assert s["title"] == "Exam prep"


def test_turns_must_alternate():
    s = session_with([], pending="Q?")
    with pytest.raises(ValueError, match="no answer yet"):
        m.add_question(s, "Another?")
    m.add_answer(s, "A", thinking="hmm", events=[{"kind": "tool_result"}])
    with pytest.raises(ValueError, match="no question"):
        m.add_answer(s, "again")
    assert s["messages"][-1] == {"role": "assistant", "content": "A", "thinking": "hmm",
                                 "events": [{"kind": "tool_result"}]}


def test_history_sends_only_role_and_content():
    s = session_with([("Q1", "A1")])
    s["messages"][1].update(citations=[{"n": 1}], thinking="secret", events=[1])
    assert m.history(s) == [{"role": "user", "content": "Q1"}, {"role": "assistant", "content": "A1"}]


# (pair sizes in characters, budget) -> indices of the pairs kept
BUDGET_CASES = [
    ([10, 10, 10], 100, [0, 1, 2]),
    ([10, 10, 10], 20, [1, 2]),  # oldest dropped first
    ([10, 10, 10], 29, [1, 2]),
    ([50, 10, 10], 30, [1, 2]),
    ([10, 50, 10], 30, [2]),  # whole pairs only; nothing older than a dropped pair comes back
    ([40], 30, []),
    ([], 30, []),
]


@pytest.mark.parametrize("sizes,budget,kept", BUDGET_CASES)
def test_history_budget_drops_oldest_pairs(sizes, budget, kept):
    pairs = [(f"q{i}".ljust(size // 2, "."), f"a{i}".ljust(size - size // 2, ".")) for i, size in enumerate(sizes)]
    s = session_with(pairs, pending="the new question")
    h = m.history(s, budget)
    assert [x["content"][:2] for x in h[::2]] == [f"q{i}" for i in kept]
    assert all(x["role"] == r for x, r in zip(h, ["user", "assistant"] * len(kept)))
    assert sum(len(x["content"]) for x in h) <= budget
    assert m.dropped_pairs(s, budget) == len(sizes) - len(kept)


def test_default_budget_is_48000_characters():
    s = session_with([("q" * 10_000, "a" * 10_000)] * 3)
    assert m.HISTORY_BUDGET == 48_000
    assert len(m.history(s)) == 4


@pytest.mark.parametrize("pairs,pending,expected", [
    ([], None, 0.0),
    ([("q" * 12_000, "a" * 12_000)], None, 0.5),
    ([("q" * 12_000, "a" * 12_000)], "p" * 12_000, 0.75),
    ([("q" * 40_000, "a" * 40_000)], None, 1.0),
])
def test_fullness(pairs, pending, expected):
    assert m.fullness(session_with(pairs, pending)) == expected


@pytest.mark.parametrize("index,kept_before", [(0, 0), (2, 2), (4, 4)])
def test_edit_question_rewinds(index, kept_before):
    s = session_with([("Q0", "A0"), ("Q1", "A1"), ("Q2", "A2")])
    before = [dict(x) for x in s["messages"][:kept_before]]
    m.edit_question(s, index, "New?")
    assert s["messages"][:kept_before] == before
    assert s["messages"][kept_before:] == [{"role": "user", "content": "New?"}]
    assert m.pending_question(s) == "New?"
    assert m.history(s) == [{"role": x["role"], "content": x["content"]} for x in before]
    m.add_answer(s, "regenerated")
    assert s["messages"][-1]["content"] == "regenerated"


@pytest.mark.parametrize("index,error", [(1, IndexError), (9, IndexError), (-1, IndexError)])
def test_edit_question_rejects_non_questions(index, error):
    s = session_with([("Q0", "A0")])
    with pytest.raises(error, match="questions are at"):
        m.edit_question(s, index, "x")


def test_edit_question_rejects_empty_text():
    with pytest.raises(ValueError, match="empty"):
        m.edit_question(session_with([("Q0", "A0")]), 0, "  ")
