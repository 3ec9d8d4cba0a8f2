"""No-LLM generators on a real paper: text from pypdf, chunks by simple splitting."""

import re

import pytest

from quire.model import Chunk
from quire.study import offline_cards, offline_maps, offline_quiz
from quire.study.anki import cloze_numbers
from quire.study.text import normalize
from quire.study.validate import CLOZE, check_card, check_quiz_item


@pytest.fixture(scope="module")
def paper_chunks(pdf_dir):
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(str(pdf_dir / "acl-papers" / "N18-3011.pdf"))
    chunks, offset = [], 0
    for page_no, page in enumerate(reader.pages, 1):
        text = page.extract_text()
        # Simple splitting: each page in two halves at a line break.
        cut = text.find("\n", len(text) // 2)
        for part in (text[:cut], text[cut:]) if cut > 0 else (text,):
            chunks.append(Chunk("N18-3011.pdf", {"page": page_no}, offset, offset + len(part), part, n=len(chunks)))
            offset += len(part)
    return chunks


def _source(chunks, item):
    by_id = {c.id: c for c in chunks}
    return [by_id[i] for i in item["chunk_ids"]]


def test_cloze_answers_occur_in_their_passage(paper_chunks):
    cards = offline_cards.make_cloze_cards(paper_chunks, count=25)
    assert len(cards) >= 15
    for card in cards:
        assert card["made_without_ai"] is True
        (chunk,) = _source(paper_chunks, card)
        passage = normalize(chunk.text)
        answers = [m.group(2) for m in CLOZE.finditer(card["text"])]
        assert 1 <= len(answers) <= 2
        for answer in answers:
            assert answer in passage
        assert CLOZE.sub(lambda m: m.group(2), card["text"]) in passage  # the whole sentence is verbatim
        assert cloze_numbers(card["text"]) == list(range(1, len(answers) + 1))
        check_card({"type": "cloze", "front": card["text"], "back": card["extra"], "citations": [1]}, 1)


def test_cards_cover_many_pages(paper_chunks):
    cards = offline_cards.make_cloze_cards(paper_chunks, count=14)
    pages = {_source(paper_chunks, c)[0].location["page"] for c in cards}
    assert len(pages) >= 6


def test_quiz_items_are_valid_and_grounded(paper_chunks):
    items = offline_quiz.make_quiz(paper_chunks, count=16)
    assert len(items) >= 12
    kinds = {i["type"] for i in items}
    assert kinds == {"multiple_choice", "true_false"}
    for item in items:
        assert item["made_without_ai"] is True
        check_quiz_item({**item, "citations": [1]}, 1)
        (chunk,) = _source(paper_chunks, item)
        passage = normalize(chunk.text)
        if item["type"] == "true_false" and item["answer"] == 0:
            assert item["question"] in passage  # a true statement is a verbatim sentence
        if item["type"] == "true_false" and item["answer"] == 1:
            assert item["question"] not in passage
        if item["type"] == "multiple_choice":
            blanked = re.search(r"\u201c(.*)\u201d", item["question"]).group(1)
            assert blanked.replace(offline_quiz.BLANK, item["options"][item["answer"]]) in passage
            assert len(set(item["options"])) == 4
    answers = [i["answer"] for i in items if i["type"] == "true_false"]
    assert 0 in answers and 1 in answers


def test_quiz_is_deterministic(paper_chunks):
    assert offline_quiz.make_quiz(paper_chunks, 6) == offline_quiz.make_quiz(paper_chunks, 6)


def test_mindmap_from_numbered_headings(paper_chunks):
    mm = offline_maps.make_mindmap(paper_chunks)
    labels = [n["label"] for n in mm["children"]]
    assert "Introduction" in labels and "Entity Extraction and Linking" in labels
    extraction = next(n for n in mm["children"] if n["label"] == "Entity Extraction and Linking")
    assert "Knowledge Bases" in [n["label"] for n in extraction["children"]]
    assert not any("References" in label for label in labels)
    assert mm["made_without_ai"] is True and mm["chunk_ids"]


def test_outline_from_headings(paper_chunks):
    outline = offline_maps.make_outline(paper_chunks, title="Literature graph")
    titles = [m["title"] for m in outline["modules"]]
    assert titles[:2] == ["Overview", "Introduction"]
    structure = next(m for m in outline["modules"] if m["title"] == "Structure of The Literature Graph")
    assert [l["title"] for l in structure["lessons"]] == ["Structure of The Literature Graph", "Node Types", "Edge Types"]
    assert all(l["chunk_ids"] for m in outline["modules"] for l in m["lessons"])


def test_section_breadcrumbs_win():
    chunks = [
        Chunk("notes.md", {"section": ["Setup"]}, 0, 60, "Install the package manager first. The package manager fetches packages."),
        Chunk("notes.md", {"section": ["Setup", "Install"]}, 60, 120, "Run the installer twice. The installer checks the disk.", n=1),
        Chunk("notes.md", {"section": ["Usage"]}, 120, 180, "Open the dashboard to see reports. The dashboard refreshes reports hourly.", n=2),
    ]
    mm = offline_maps.make_mindmap(chunks, title="Notes")
    assert mm["topic"] == "Notes"
    assert [n["label"] for n in mm["children"]] == ["Setup", "Usage"]
    assert "Install" in [n["label"] for n in mm["children"][0]["children"]]
    outline = offline_maps.make_outline(chunks)
    assert [l["title"] for l in outline["modules"][0]["lessons"]] == ["Setup", "Install"]


def test_clusters_when_there_is_no_structure():
    texts = ["Cats purr when cats are happy. Cats purr loudly."] * 3 + ["Dogs bark at night. Dogs bark at cars."] * 3
    chunks = [Chunk("pets.txt", {}, i * 100, i * 100 + 50, t, n=i) for i, t in enumerate(texts)]
    mm = offline_maps.make_mindmap(chunks)
    assert len(mm["children"]) == 2


def test_empty_scope_gives_nothing():
    assert offline_cards.make_cloze_cards([]) == []
    assert offline_quiz.make_quiz([]) == []
