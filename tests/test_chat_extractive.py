"""quire.chat.extractive: the no-model answer, highlighted with the retrieval tokenizer."""

import pytest

from quire.chat import extractive as x
from quire.retrieval.relevance import WEAK_MESSAGE
from quire.retrieval.index import HybridIndex
from quire.retrieval.tokenize import Tokenizer

EN, DE = Tokenizer("en"), Tokenizer("de")


def marked(text, query, tokenizer=EN):
    return [text[s:e] for s, e in x.highlight_spans(text, x.query_terms(query, tokenizer), tokenizer)]


@pytest.mark.parametrize("text,query,tokenizer,expected", [
    ("Cells divide by mitosis. Dividing cells copy DNA.", "how do cells divide", EN,
     ["Cells", "divide", "Dividing", "cells"]),
    ("The audits failed; the auditor audited.", "audit", EN, ["audits", "audited"]),
    ("The cat and the hat", "the", EN, []),  # stopwords are never marked
    ("ISO-9001 audit and ISO 14001", "ISO-9001", EN, ["ISO-9001", "ISO"]),  # search matches the parts too
    ("ISO-9001 audit and ISO 14001", "iso", EN, ["ISO", "ISO"]),
    ("Error 404B again", "404", EN, ["404B"]),
    ("Die Häuser stehen am Fluss, das Haus auch.", "Haus", DE, ["Häuser", "Haus"]),
    ("nothing here", "", EN, []),
])
def test_highlight_spans(text, query, tokenizer, expected):
    assert marked(text, query, tokenizer) == expected


@pytest.mark.parametrize("text,query,snippet", [
    ("Plants grow. Cells divide by mitosis. Water boils.", "cell mitosis", "Cells divide by mitosis."),
    ("First line about cells\nSecond line about mitosis and cells", "mitosis cells",
     "Second line about mitosis and cells"),
    ("No match at all here. Another one.", "zebra", "No match at all here."),
])
def test_best_sentence(text, query, snippet):
    got = x.best_sentence(text, x.query_terms(query, EN), EN)
    assert got["text"] == snippet == text[got["start"]:got["end"]]
    for s, e in got["highlights"]:
        assert got["text"][s:e].strip()


def test_long_sentence_is_cut_around_the_first_match():
    text = "word " * 100 + "mitosis " + "word " * 100
    got = x.best_sentence(text, {"mitosi"}, EN, max_chars=80)
    assert len(got["text"]) <= 80 and "mitosis" in got["text"]
    assert got["text"] == text[got["start"]:got["end"]]


def test_extractive_answer_from_a_real_index():
    index = HybridIndex()
    texts = {"bio:0": "Mitosis: a cell divides into two identical daughter cells.",
             "bio:1": "Meiosis produces four cells with half the chromosomes.",
             "hist:0": "The treaty was signed in 1648."}
    index.add_chunks("bio", ["bio:0", "bio:1"], [texts["bio:0"], texts["bio:1"]], language="en")
    index.add_chunks("hist", ["hist:0"], [texts["hist:0"]], language="en")
    query = "How does a cell divide?"
    hits = [{"chunk_id": h.id, "source": index.source_of(h.id) + ".pdf", "location": {"page": 1},
             "text": texts[h.id], **h.to_dict()} for h in index.search(query)]
    out = x.extractive_answer(query, hits, tokenizer_for=index.tokenizer)
    assert out["label"] == "Search results — no AI summary (no model connected)"
    assert out["kind"] == "extractive" and out["message"] == ""
    first = out["results"][0]
    assert first["chunk_id"] == "bio:0" and first["relevance"] == 1.0 and first["location_label"] == "p. 1"
    assert [first["passage"][s:e] for s, e in first["highlights"]] == ["cell", "divides", "cells"]
    assert first["snippet"]["text"] == first["passage"]
    assert all(0 <= r["relevance"] <= 1 for r in out["results"])


def test_extractive_answer_uses_each_hits_language():
    hits = [{"chunk_id": "de:0", "source": "Notizen.md", "text": "Die Häuser am Fluss.", "language": "de",
             "score": 1.0}]
    out = x.extractive_answer("Haus", hits)
    r = out["results"][0]
    assert [r["passage"][s:e] for s, e in r["highlights"]] == ["Häuser"]


def test_extractive_answer_with_no_hits():
    out = x.extractive_answer("anything", [])
    assert out["results"] == [] and "Nothing" in out["message"]


def test_weak_matches_are_said_plainly():
    # "relevance 100%" used to mean "the best of whatever came back"; now it is the share of the query.
    hits = [{"chunk_id": "a:0", "text": "Volcanoes erupt lava.", "relevance": 0.2}]
    out = x.extractive_answer("Who wrote the treaty about volcanoes?", hits)
    assert out["weak"] and out["message"] == WEAK_MESSAGE and WEAK_MESSAGE in out["label"]
    assert out["results"][0]["relevance"] == 0.2
    strong = x.extractive_answer("volcanoes", [{**hits[0], "relevance": 1.0}])
    assert not strong["weak"] and strong["message"] == ""


@pytest.mark.parametrize(
    "hit,terms,passage,expected",
    [
        ({"relevance": 0.75}, {"x"}, "", 0.75),  # search's idf-weighted value wins
        ({}, {"cell", "divid"}, "Cells divide.", 1.0),  # else the plain share of the query's terms
        ({}, {"cell", "divid"}, "Nothing here.", 0.0),
    ],
)
def test_hit_relevance(hit, terms, passage, expected):
    assert x.hit_relevance(hit, terms, passage, EN) == expected


def test_english_function_words_are_not_marked_in_a_german_passage():
    hits = [{"chunk_id": "de:0", "text": "Die Matrix IS heißt erste Fundamentalform; is ist ein Symbol.", "language": "de"}]
    r = x.extractive_answer("What is the first fundamental form?", hits)["results"][0]
    assert [r["passage"][s:e] for s, e in r["highlights"]] == []


def test_top_limits_the_passages():
    hits = [{"chunk_id": f"a:{i}", "text": "cells", "score": 1.0 / (i + 1)} for i in range(9)]
    assert len(x.extractive_answer("cells", hits, top=3)["results"]) == 3
