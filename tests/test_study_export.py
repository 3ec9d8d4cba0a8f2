"""Anki .apkg (checked by opening the SQLite inside), Quizlet text, Markdown, OPML."""

import io
import json
import sqlite3
import zipfile
from xml.etree import ElementTree

import pytest

from quire.study import anki, export

CARDS = [
    {"type": "basic", "front": "What is BM25?", "back": "A ranking function."},
    {"type": "cloze", "text": "{{c1::BM25}} scores {{c2::documents}} against a query.", "extra": "paper, page 2"},
    {"type": "cloze", "text": "IDF down-weights {{c1::common terms}}.", "extra": ""},
]
MINDMAP = {"topic": "IR & search", "children": [
    {"label": "BM25", "children": [{"label": "term frequency", "children": []}]}, {"label": "Dense <vectors>", "children": []}]}


def _open(data, tmp_path):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert sorted(z.namelist()) == ["collection.anki2", "media"]
        assert json.loads(z.read("media")) == {}
        (tmp_path / "c.anki2").write_bytes(z.read("collection.anki2"))
    return sqlite3.connect(tmp_path / "c.anki2")


def test_apkg_contents(tmp_path):
    db = _open(anki.write_apkg(CARDS, "Literature graph"), tmp_path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"col", "notes", "cards", "revlog", "graves"}
    ver, models, decks = db.execute("SELECT ver, models, decks FROM col").fetchone()
    assert ver == 11
    models = json.loads(models)
    by_name = {m["name"]: m for m in models.values()}
    assert [f["name"] for f in by_name["Basic (Quire)"]["flds"]] == ["Front", "Back"]
    assert [f["name"] for f in by_name["Cloze (Quire)"]["flds"]] == ["Text", "Back Extra"]
    assert by_name["Cloze (Quire)"]["type"] == 1 and by_name["Basic (Quire)"]["type"] == 0
    assert "Literature graph" in [d["name"] for d in json.loads(decks).values()]
    notes = db.execute("SELECT id, mid, flds FROM notes").fetchall()
    assert len(notes) == 3
    flds = {f for _, _, f in notes}
    assert "What is BM25?\x1fA ranking function." in flds
    assert "{{c1::BM25}} scores {{c2::documents}} against a query.\x1fpaper, page 2" in flds
    # Basic: 1 card; cloze with c1, c2: 2 cards; cloze with c1: 1 card.
    assert db.execute("SELECT count(*) FROM cards").fetchone()[0] == 4
    cloze_nid = next(i for i, _, f in notes if f.startswith("{{c1::BM25}}"))
    assert [r[0] for r in db.execute("SELECT ord FROM cards WHERE nid=? ORDER BY ord", (cloze_nid,))] == [0, 1]
    assert db.execute("SELECT count(*) FROM revlog").fetchone()[0] == 0


def test_apkg_is_reproducible_and_round_trips():
    data = anki.write_apkg(CARDS, "Deck")
    assert data == anki.write_apkg(CARDS, "Deck")
    assert anki.read_apkg(data) == CARDS


def test_read_apkg_rejects_other_zips():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("x.txt", "hi")
    with pytest.raises(ValueError, match="not an Anki package"):
        anki.read_apkg(buf.getvalue())


@pytest.mark.parametrize("separator,sep", [("tab", "\t"), ("comma", ",")])
def test_quizlet_round_trip(separator, sep):
    text = export.quizlet_text(CARDS, separator)
    lines = text.splitlines()
    assert len(lines) == 3 and all(line.count(sep) == 1 for line in lines)
    assert lines[1] == f"[...] scores [...] against a query.{sep}BM25; documents"
    back = export.read_quizlet(text)
    assert back[0] == CARDS[0]


def test_markdown_exports():
    md = export.deck_markdown(CARDS)
    assert "**[...] scores [...] against a query.**" in md and "BM25 scores documents against a query." in md
    items = [{"type": "multiple_choice", "question": "Pick", "options": ["a", "b", "c"], "answer": 1, "explanation": "b."}]
    assert "   B. b" in export.quiz_markdown(items) and "1. B \u2014 b." in export.quiz_markdown(items)
    outline = {"title": "W", "modules": [{"title": "M", "summary": "S", "lessons": [{"title": "L", "objective": "O"}]}]}
    assert "- **1.1 L**: O" in export.outline_markdown(outline)
    lesson = {"title": "L", "introduction": "I", "sections": [{"heading": "H", "body": "B"}], "key_points": ["k"],
              "exercises": [{"prompt": "P", "answer": "A"}]}
    assert "## H" in export.lesson_markdown(lesson) and "*Answer:* A" in export.lesson_markdown(lesson)
    assert export.mindmap_markdown(MINDMAP).splitlines() == ["# IR & search", "- BM25", "  - term frequency", "- Dense <vectors>"]


def test_opml_parses():
    root = ElementTree.fromstring(export.mindmap_opml(MINDMAP).encode())
    top = root.find("body/outline")
    assert top.get("text") == "IR & search"
    assert [o.get("text") for o in top] == ["BM25", "Dense <vectors>"]
    assert top[0][0].get("text") == "term frequency"
