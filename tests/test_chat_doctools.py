"""quire.chat.doctools: the document tools, with a fake model speaking structured JSON."""

import json

import pytest

from quire.chat import doctools as d
from aio import answered
from quire.model import Chunk
from quire.study.validate import StudyError
from quire.chat.agent import MAX_TOOL_RESULT

LIBRARY = [
    {"id": "bio", "name": "Biology notes.pdf", "kind": "pdf", "size": 1_234_567, "pages": 12, "category": "Exam 2"},
    {"id": "l3", "name": "Lecture 3.pptx", "kind": "pptx", "size": 900, "slides": 20},
]
CHUNKS = {
    "bio": [Chunk("bio", {"page": 1}, 0, 40, "Mitosis makes two identical cells."),
            Chunk("bio", {"page": 2}, 40, 90, "Meiosis makes four cells with half the chromosomes.", n=1)],
    "l3": [{"chunk_id": "l3:0", "location": {"slide": 3}, "text": "Mitosis has four phases."}],
}


class FakeModel:
    """Answers llm_call(prompt, schema) from a queue; records what it was asked."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), []

    def __call__(self, prompt, schema):
        self.calls.append((prompt, schema))
        answer = self.answers.pop(0)
        return answer if isinstance(answer, str) else json.dumps(answer)


def analyze_document(chunks, model, **kw):
    """The tool run to its result, each request answered by ``model(prompt, schema)``."""
    return answered(d.analyze_document(chunks, **kw), lambda ask: model(ask.prompt, ask.schema))


def compare_documents(topic, chunks_a, chunks_b, model, **kw):
    return answered(d.compare_documents(topic, chunks_a, chunks_b, **kw), lambda ask: model(ask.prompt, ask.schema))


ANALYSIS = {"summary": " About cell division. ", "topics": ["mitosis", "", 3, "meiosis"],
            "entities": [{"name": "Mitosis", "type": "process"}, {"name": ""}, "x"],
            "key_facts": [{"fact": "Mitosis makes two cells.", "citations": [1, 1, 9, True]},
                          {"fact": "", "citations": [1]}, {"citations": [2]}]}


def test_list_documents():
    out = d.list_documents(LIBRARY)
    assert out == {"count": 2, "documents": [
        {"name": "Biology notes.pdf", "kind": "pdf", "category": "Exam 2", "pages": 12, "size": "1.2 MB"},
        {"name": "Lecture 3.pptx", "kind": "pptx", "slides": 20, "size": "900 bytes"}]}


@pytest.mark.parametrize("name,found", [
    ("Biology notes.pdf", "bio"), ("biology NOTES.pdf", "bio"), ("bio", "bio"), ("Lecture 3", "l3"),
    ("lecture", "l3"), ("Biology notes", "bio"),
])
def test_find_document(name, found):
    assert d.find_document(LIBRARY, name)["id"] == found


@pytest.mark.parametrize("name", ["Chemistry.pdf", "", "e"])
def test_find_document_lists_the_names_when_lost(name):
    with pytest.raises(ValueError, match="Biology notes.pdf; Lecture 3.pptx"):
        d.find_document(LIBRARY, name)


def test_analyze_document_validates_and_resolves_citations():
    model = FakeModel(ANALYSIS)
    out = analyze_document(CHUNKS["bio"], model, document="Biology notes.pdf")
    prompt, schema = model.calls[0]
    assert schema is d.ANALYSIS_SCHEMA and '"Biology notes.pdf"' in prompt and "Summarise the whole document." in prompt
    assert "[1] (page 1)" not in prompt and "[1] (p. 1)\nMitosis makes two identical cells." in prompt
    assert out["summary"] == "About cell division."
    assert out["topics"] == ["mitosis", "meiosis"]
    assert out["entities"] == [{"name": "Mitosis", "type": "process"}]
    assert out["key_facts"] == [{"fact": "Mitosis makes two cells.", "citations": [1],
                                 "sources": [{"chunk_id": "bio:0", "location_label": "p. 1"}]}]
    assert [p["chunk_id"] for p in out["passages"]] == ["bio:0", "bio:1"]


@pytest.mark.parametrize("aspect,question,phrase", [
    ("outline", "", "structure"), ("key_terms", "", "key terms"),
    ("question", "Which phases?", "Answer this question about the document as a whole: Which phases?"),
])
def test_analyze_aspects(aspect, question, phrase):
    model = FakeModel(ANALYSIS)
    analyze_document(CHUNKS["bio"], model, document="b", aspect=aspect, question=question)
    assert phrase in model.calls[0][0]


@pytest.mark.parametrize("kwargs,error", [
    ({"aspect": "poem"}, "unknown aspect 'poem'; valid: summary, outline, key_terms, question"),
    ({"aspect": "question"}, "needs the question"),
])
def test_analyze_bad_arguments(kwargs, error):
    with pytest.raises(ValueError, match=error):
        analyze_document(CHUNKS["bio"], FakeModel(), document="b", **kwargs)


def test_analyze_empty_document():
    with pytest.raises(ValueError, match="no text"):
        analyze_document([Chunk("x", {}, 0, 0, "  ")], FakeModel(), document="scan.pdf")


@pytest.mark.parametrize("answers,ok", [
    (["<think>hm</think>```json\n" + json.dumps(ANALYSIS) + "\n```"], True),
    (["Sure! Here is a summary.", ANALYSIS], True),  # asked once more
    (["[1, 2]", ANALYSIS], True),
    (["no", "still no"], False),
])
def test_analyze_retries_once(answers, ok):
    model = FakeModel(*answers)
    if ok:
        assert analyze_document(CHUNKS["bio"], model, document="b")["topics"] == ["mitosis", "meiosis"]
    else:
        with pytest.raises(StudyError):
            analyze_document(CHUNKS["bio"], model, document="b")
    assert len(model.calls) == len(answers)


COMPARISON = {"summary": "Both cover mitosis.",
              "similarities": [{"point": "Mitosis exists.", "citations": [1, 3]}],
              "differences": [{"point": "Detail", "a": "cells", "b": "phases", "citations": [2, 3]},
                              {"point": "missing sides", "citations": [1]}],
              "only_in_a": [{"point": "Meiosis.", "citations": [2]}], "only_in_b": "oops"}


def test_compare_documents_numbers_across_both():
    model = FakeModel(COMPARISON)
    out = compare_documents("cell division", CHUNKS["bio"], CHUNKS["l3"], model,
                              names=("Biology notes.pdf", "Lecture 3.pptx"))
    prompt, schema = model.calls[0]
    assert schema is d.COMPARISON_SCHEMA and "on this topic: cell division" in prompt
    assert "[2] (p. 2)\nMeiosis" in prompt and "[3] (slide 3)\nMitosis has four phases." in prompt
    assert out["similarities"][0]["sources"] == [{"chunk_id": "bio:0", "location_label": "p. 1"},
                                                 {"chunk_id": "l3:0", "location_label": "slide 3"}]
    assert [x["point"] for x in out["differences"]] == ["Detail"]
    assert out["only_in_b"] == [] and out["only_in_a"][0]["citations"] == [2]
    assert out["passages"]["b"] == [{"n": 3, "chunk_id": "l3:0", "location_label": "slide 3"}]


def test_compare_needs_text_on_both_sides():
    with pytest.raises(ValueError, match="'B' has no text"):
        compare_documents("x", CHUNKS["bio"], [], FakeModel())


def fake_search(query, k, document):
    hits = [{"chunk_id": f"bio:{i}", "source": "Biology notes.pdf", "location": {"page": i + 1},
             "text": f"passage {i} " + "word " * 2000} for i in range(30)]
    return [h for h in hits if document in (None, "bio")][:k]


@pytest.mark.parametrize("top_k,count", [(3, 3), (7, 7), (0, 1), (99, 20)])
def test_search_knowledge_base_fits_one_tool_message(top_k, count):
    out = d.search_knowledge_base(fake_search, "mitosis", top_k)
    assert len(out["results"]) == count
    assert len(json.dumps(out, ensure_ascii=False)) <= MAX_TOOL_RESULT
    assert out["results"][0]["location_label"] == "p. 1" and out["results"][0]["text"].endswith(" …")


def test_search_knowledge_base_empty():
    assert "note" in d.search_knowledge_base(lambda q, k, doc: [], "zebra")
    with pytest.raises(ValueError, match="empty"):
        d.search_knowledge_base(fake_search, "  ")


