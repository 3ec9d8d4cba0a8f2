"""quire.chat.answer: hits -> citations and prompt; citation markers in answers."""

import random

import pytest

from quire.chat import answer as a
from quire.prompts import PromptError

HITS = [
    {"chunk_id": "bio:0", "source_id": "bio", "source": "Biology notes.pdf", "location": {"page": 5},
     "text": "  Mitosis makes two identical cells.  ", "score": 0.0328, "bm25_rank": 1, "bm25_score": 7.1},
    {"chunk_id": "lec3:120", "source": "Lecture 3.pptx", "location": {"slide": 3}, "text": "Meiosis halves.",
     "score": 0.016, "bm25_rank": None, "dense_rank": 2},
    {"chunk_id": "grades:40", "source": "grades.xlsx", "location": {"sheet": "Sheet1", "rows": [2, 21]},
     "text": "Ada 91"},
    {"chunk_id": "guide:9", "location": {"section": ["Setup", "Install"]}, "text": "pip install quire"},
]


def test_citations_for():
    cs = a.citations_for(HITS)
    assert [c["n"] for c in cs] == [1, 2, 3, 4]
    assert cs[0] == {"n": 1, "chunk_id": "bio:0", "source_id": "bio", "source": "Biology notes.pdf",
                     "location": {"page": 5}, "location_label": "p. 5",
                     "passage": "Mitosis makes two identical cells.",
                     "scores": {"score": 0.0328, "bm25_rank": 1, "bm25_score": 7.1}}
    assert cs[1]["source_id"] == "lec3" and cs[1]["scores"] == {"score": 0.016, "dense_rank": 2}
    assert cs[3]["source"] == "guide" and cs[3]["location_label"] == "Setup › Install"


def test_citations_keep_the_top_seven():
    hits = [dict(HITS[0], chunk_id=f"bio:{i}") for i in range(10)]
    assert [c["chunk_id"] for c in a.citations_for(hits)] == [f"bio:{i}" for i in range(7)]


def test_format_context_numbers_blocks():
    text = a.format_context(a.citations_for(HITS[:2]))
    assert text == ("[1] Biology notes.pdf, p. 5\nMitosis makes two identical cells.\n\n"
                    "[2] Lecture 3.pptx, slide 3\nMeiosis halves.")
    assert a.format_context([]) == a.NO_PASSAGES


@pytest.mark.parametrize("scope,statement,search", [
    (None, "Answer only from the documents in the student's library.", None),
    ({"category": "Exam 2"}, "Answer only from the documents in the category 'Exam 2'.", "Exam 2"),
    ({"sources": [{"id": "bio", "name": "Biology notes.pdf"}, {"id": "l3", "name": "Lecture 3.pptx"}]},
     "Answer only from: Biology notes.pdf, Lecture 3.pptx.", ["bio", "l3"]),
])
def test_scope(scope, statement, search):
    assert a.scope_statement(scope) == statement
    assert a.search_scope(scope) == search


def test_bad_scope_is_an_error():
    with pytest.raises(ValueError, match="category"):
        a.scope_statement({"folder": "x"})


def test_build_request_states_scope_in_system_and_user():
    history = [{"role": "user", "content": "Earlier?"}, {"role": "assistant", "content": "Yes [1]."}]
    scope = {"sources": [{"id": "bio", "name": "Biology notes.pdf"}]}
    req = a.build_request("What does mitosis make?", HITS, scope=scope, history=history, today="Tuesday, 2025-03-04")
    system, *middle, user = req["messages"]
    assert system["role"] == "system" and user["role"] == "user" and middle == history
    for part in (system["content"], user["content"]):
        assert "Answer only from: Biology notes.pdf." in part
    assert "Tuesday, 2025-03-04" in system["content"]
    assert "[1] Biology notes.pdf, p. 5\nMitosis makes two identical cells." in user["content"]
    assert "Question: What does mitosis make?" in user["content"]
    assert a.USER_MARKER not in system["content"] + user["content"]
    assert [c["n"] for c in req["citations"]] == [1, 2, 3, 4]


def test_build_request_with_an_override_template():
    over = {"chat": "Only $scope\n=== user ===\n$question | $context | $today"}
    req = a.build_request("Q?", [], overrides=over, today="T")
    assert req["messages"] == [{"role": "system", "content": "Only Answer only from the documents in the student's library."},
                               {"role": "user", "content": f"Q? | {a.NO_PASSAGES} | T"}]
    with pytest.raises(PromptError):
        a.build_request("Q?", [], overrides={"chat": "$question $context"}, today="T")


@pytest.mark.parametrize("text,expected", [
    ("system\n=== user ===\nuser", ("system", "user")),
    ("all user", ("", "all user")),
    ("a\n  === user ===  \nb\n=== user ===\nc", ("a", "b\n=== user ===\nc")),
])
def test_split_roles(text, expected):
    assert a.split_roles(text) == expected


# text, max_n -> [(marked text, numbers)]
MARKERS = [
    ("Cells divide [1].", None, [("[1]", (1,))]),
    ("A [2,3] and [2, 3] and [1; 2]", None, [("[2,3]", (2, 3)), ("[2, 3]", (2, 3)), ("[1; 2]", (1, 2))]),
    ("Pair [1][3].", None, [("[1]", (1,)), ("[3]", (3,))]),
    ("Range [2-4] and [5–6]", None, [("[2-4]", (2, 3, 4)), ("[5–6]", (5, 6))]),
    ("Out of range [9] and [2, 9]", 7, [("[2, 9]", (2,))]),
    ("Year [2023] is not", 7, []),
    ("A [link](https://x.org) and [1](#c) are links", None, []),
    ("Zero [0] and words [a] [1a]", None, []),
    ("Code `arr[1]` and [2]", None, [("[2]", (2,))]),
    ("```\nx = y[1]\n```\nafter [3]", None, [("[3]", (3,))]),
    ("```\nunclosed [1]", None, []),
    ("a stray ` tick then [1]", None, [("[1]", (1,))]),
    ("``two `one` [1]``, [2]", None, [("[2]", (2,))]),
    ("`x\n\nstill open? [4]` no", None, [("[4]", (4,))]),
    ("dup [1, 1, 2]", None, [("[1, 1, 2]", (1, 2))]),
]


@pytest.mark.parametrize("text,max_n,expected", MARKERS)
def test_find_markers(text, max_n, expected):
    got = a.find_markers(text, max_n)
    assert [(text[x.start:x.end], x.numbers) for x in got] == expected


def test_cited_orders_by_first_use_and_reports_unknown():
    cs = a.citations_for(HITS)
    assert a.cited("B [3]. A [1][3]. C [8][2-3].", cs) == {"used": [3, 1, 2], "unknown": [8]}
    assert a.cited("No markers.", cs) == {"used": [], "unknown": []}


STREAM_TEXTS = [t for t, _, _ in MARKERS] + [
    "Mitosis [1] makes two cells [2,3]. ```py\nprint(a[1])\n``` then [4][5] and `b[6]` and [7](x) end [1]",
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
@pytest.mark.parametrize("seed", range(5))
def test_marker_stream_matches_the_final_text(text, seed):
    rng = random.Random(seed)
    stream, got, pos = a.MarkerStream(7), [], 0
    while pos < len(text):
        step = rng.randint(1, 4)
        got += stream.feed(text[pos:pos + step])
        pos += step
    got += stream.close()
    assert got == a.find_markers(text, 7)


def test_marker_stream_one_character_at_a_time_emits_each_once():
    text = STREAM_TEXTS[-1]
    stream = a.MarkerStream()
    got = [mk for ch in text for mk in stream.feed(ch)] + stream.close()
    assert got == a.find_markers(text) and len(got) == len(set(got))


@pytest.mark.parametrize("pieces,early", [
    (["see [1", "2]"], []),  # "[1" could still become "[12]"
    (["see [1]", "(https://x)"], []),  # "[1]" could still become a link
    (["see [1] ", "more"], [(4, 7)]),
    (["`code [1]", "` x"], []),  # inside a backtick that may close
])
def test_marker_stream_holds_back_what_could_change(pieces, early):
    stream = a.MarkerStream()
    first = stream.feed(pieces[0])
    assert [(x.start, x.end) for x in first] == early
