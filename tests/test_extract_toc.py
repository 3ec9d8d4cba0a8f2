"""Tables of contents (quire/extract/toc.py): found in real PDFs, searchable, never study material.

GeoTopo-komprimiert.pdf (py-pdf/sample-files, CC BY-SA 4.0) is a 117-page German
lecture script whose pages 4-5 are its "Inhaltsverzeichnis".
"""

import asyncio
import re

import pytest

from quire.app import Quire
from quire.extract import extract
from quire.extract.toc import is_entry, toc_lines
from quire.services import Context
from quire.services import study
from quire.store import MemoryStore

GEOTOPO = "py-pdf-sample-files/GeoTopo-komprimiert.pdf"
PDFS = ["acl-papers/N18-3011.pdf", "acl-papers/2020.acl-main.207.pdf", "pdfplumber-public/federal-register-2020-17221.pdf",
        "py-pdf-sample-files/multicolumn.pdf", "py-pdf-sample-files/pdflatex-4-pages.pdf",
        "ocrmypdf-scans/multipage.pdf"]


@pytest.mark.parametrize("line, entry", [
    ("1.2 Metrische Räume . . . . . . . . . . . . 6", True),
    ("Übungsaufgaben . . . . . . . . . . . . . . . 22", True),
    ("2 Mannigfaltigkeiten und Simplizialkomplexe 24", True),
    ("A.3 Lösungen 101", True),
    ("Introduction ........ iv", True),
    ("In 1990 there were 12", False),  # prose ending in a number
    ("2019 | 120", False),  # a table row
    ("1.2 Metrische Räume", False),  # the heading itself, no page number
    ("Definition 4", False),
])
def test_entry_lines(line, entry):
    assert is_entry(line) is entry


def test_pages_titled_or_made_of_entries_and_leader_runs_inside_pages():
    pages = [
        "Vorwort\nDieses Skript ist kurz. Es hat 3 Kapitel.",
        "Inhaltsverzeichnis\n1 Grundlagen 1\n1.1 Mengen . . . . 2\n1.2 Abbildungen . . . . 4",
        "2 Inhaltsverzeichnis\nStichwortverzeichnis 111",  # continuation: running header and one entry
        "1 Grundlagen\nEine Menge ist eine Zusammenfassung.\nSie hat Elemente.\nAbbildungen:\nAbbildung 1 . . . . 3\n"
        "Abbildung 2 . . . . 4\nAbbildung 3 . . . . 5\nWeiter im Text 7, dann kommt mehr.",
        "Chapter 3 . . . 9\nAnd the text goes on.",  # one leader line is not a TOC
    ]
    assert toc_lines(pages) == [set(), {0, 1, 2, 3}, {0, 1}, {4, 5, 6}, set()]


@pytest.mark.parametrize("name", PDFS)
def test_no_toc_found_in_pdfs_without_one(pdf_dir, name):
    ex = extract(name, (pdf_dir / name).read_bytes())
    assert not any("toc" in u.flags or u.location.get("toc") for u in ex.units)


@pytest.fixture(scope="module")
def geotopo(pdf_dir):
    """GeoTopo trained into a fresh library, with three no-model study sets made from it."""
    async def go():
        q = await Quire.open(MemoryStore())
        await q.stage("GeoTopo.pdf", (pdf_dir / GEOTOPO).read_bytes())
        await q.train()
        source = q.sources()[0]["id"]
        made = {}
        for kind in ("workshop", "flashcards", "quiz"):
            made[kind] = await study.METHODS["studyGenerate"](q, Context(), kind, {"scope": {"sources": [source]},
                                                                             "count": 30, "offline": True})
        chunks = await q.library.chunks_of(source)
        hits = await q.search("Inhaltsverzeichnis Metrische Räume Kompaktheit", k=3)
        return q, source, chunks, made, hits
    return asyncio.run(go())


def test_geotopo_toc_pages_are_flagged_and_still_one_unit_per_page(pdf_dir):
    ex = extract("GeoTopo.pdf", (pdf_dir / GEOTOPO).read_bytes())
    assert len(ex.units) == 117
    flagged = [u.location["page"] for u in ex.units if "toc" in u.flags]
    assert flagged == [4, 5]
    assert all(u.location.get("toc") for u in ex.units if "toc" in u.flags)
    assert "1.2 Metrische Räume" in ex.units[3].text


def _toc_titles(chunks) -> set[str]:
    """The chapter titles the TOC lists, as a heading parser would read them."""
    titles = set()
    for c in chunks:
        if c["location"].get("toc"):
            for line in c["text"].split("\n"):
                m = re.match(r"^(?:\d+(?:\.\d+)*\s+)?(.*?)[\s.]*\d*$", line.strip())
                titles.add(m.group(1).strip())
    return titles - {""}


def test_geotopo_workshop_has_no_toc_chapters_and_no_repeats(geotopo):
    """Without the TOC flags this outline opened with "Topologische Grundbegriffe 2", "Mannigfaltigkeiten
    und Simplizialkomplexe 24", ... "Inhaltsverzeichnis", and then the same chapters again."""
    _, source, chunks, made, _ = geotopo
    modules = made["workshop"]["outline"]["modules"]
    titles = [m["title"] for m in modules]
    lessons = [(m["title"], l["title"]) for m in modules for l in m["lessons"]]
    bare = [re.sub(r"\s+\d+$", "", t) for t in titles]  # "Krümmung 87" and "Krümmung" are one chapter
    assert len(bare) == len(set(bare)), titles
    assert len(lessons) == len(set(lessons)), lessons
    # No title carries a TOC line's page number or dot leaders, nor is the TOC's own title.
    assert not any(re.search(r"(\. ?){3}|\s\d+$", t) for t in titles + [l for _, l in lessons]), titles
    assert "Inhaltsverzeichnis" not in titles
    # The real chapters are there, the first one first, and no lesson cites a TOC passage.
    assert titles[1] == "Topologische Grundbegriffe"
    assert "Fundamentalgruppe und Überlagerungen" in titles
    toc_ids = {f"{source}:{c['n']}" for c in chunks if c["location"].get("toc")}
    assert toc_ids, "the TOC passages should be in the library"
    assert not {c for m in modules for l in m["lessons"] for c in l["chunk_ids"]} & toc_ids


def test_geotopo_cards_and_quiz_never_come_from_the_toc(geotopo):
    _, source, chunks, made, _ = geotopo
    toc_ids = {f"{source}:{c['n']}" for c in chunks if c["location"].get("toc")}
    toc_titles = _toc_titles(chunks)
    for kind in ("flashcards", "quiz"):
        items = made[kind]["items"]
        assert len(items) >= 10, kind
        for item in items:
            assert not set(item["chunk_ids"]) & toc_ids, (kind, item)
            text = item.get("text") or item.get("question")
            assert not re.search(r"(\. ){3}", text), (kind, text)
    assert "Metrische Räume" in toc_titles  # the check above had something to compare with


def test_geotopo_toc_is_still_found_by_search(geotopo):
    _, _, _, _, hits = geotopo
    assert hits[0]["location"] == {"page": 4, "toc": True}
    assert hits[0]["location_label"] == "p. 4"
    assert "1.5 Kompaktheit" in hits[0]["text"]
