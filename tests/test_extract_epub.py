"""EPUB chapters via container.xml -> OPF spine, titles from nav, NCX or headings."""

import pytest

from quire.extract import extract
from fixtures_docs import epub, write

CHAPTERS = [
    # The fixture writes this href as "kapitel%201.xhtml", as real EPUBs do.
    ("kapitel 1.xhtml", "Erstes Kapitel", "<h1>Erstes Kapitel</h1><p>Es war einmal.</p><h2>Der Wald</h2><p>Dunkel &amp; tief.</p>"),
    ("ch2.xhtml", "Second Chapter", "<h1>Ch. 2</h1><p>Then it ended.</p><script>x()</script>"),
]


@pytest.mark.parametrize("toc", ["nav", "ncx"])
def test_epub_chapters_from_toc(tmp_path, toc):
    path = write(tmp_path, "buch.epub", epub(CHAPTERS, toc=toc, book_title="Märchen"))
    ex = extract(path.name, path.read_bytes())
    assert ex.kind == "epub" and ex.meta == {"chapters": 2, "title": "Märchen"}
    assert [(u.location, u.prefix, u.text) for u in ex.units] == [
        ({"chapter": "Erstes Kapitel"}, "[Chapter: Erstes Kapitel]\n", "Es war einmal."),
        ({"chapter": "Der Wald"}, "[Chapter: Erstes Kapitel > Der Wald]\n", "Dunkel & tief."),
        ({"chapter": "Ch. 2"}, "[Chapter: Second Chapter > Ch. 2]\n", "Then it ended."),
    ]


def test_epub_without_toc_uses_headings():
    ex = extract("b.epub", epub(CHAPTERS, toc="none"))
    assert [u.location["chapter"] for u in ex.units] == ["Erstes Kapitel", "Der Wald", "Ch. 2"]


def test_single_file_book_is_cut_at_its_parts():
    """One XHTML holding the whole book, as Gutenberg EPUBs often are: the nearest heading is the chapter."""
    body = ("<h1>Gedichte</h1><p>Vorwort.</p><h2>I. Erster Teil</h2><p>eins</p><p>zwei</p>"
            "<h2>II. Zweiter Teil</h2><p>drei</p><h3>Anmerkung</h3><p>vier</p>")
    ex = extract("g.epub", epub([("book.xhtml", "Gedichte", body)]))
    assert [(u.location["chapter"], u.prefix, u.text) for u in ex.units] == [
        ("Gedichte", "[Chapter: Gedichte]\n", "Vorwort."),
        ("I. Erster Teil", "[Chapter: Gedichte > I. Erster Teil]\n", "eins\n\nzwei"),
        ("II. Zweiter Teil", "[Chapter: Gedichte > II. Zweiter Teil]\n", "drei"),
        ("Anmerkung", "[Chapter: Gedichte > II. Zweiter Teil > Anmerkung]\n", "vier"),
    ]


def test_epub_notes_math_and_marked_sections():
    """Also: an <aside> beside an <article> is a sidebar in a book, not page chrome."""
    body = (
        '<article><p>Gedicht.</p></article><aside><p>Kasten.</p></aside>'

        '<p>Satz<a epub:type="noteref" href="#n1">1</a> mit <math alttext="a^2+b^2"><mi>a</mi></math>.</p>'
        '<p><![CDATA[roh]]> Text</p>'
        '<aside epub:type="footnote" id="n1"><p>Die Fußnote.</p></aside>'
    )
    ex = extract("n.epub", epub([("c.xhtml", "Kapitel", body)]))
    assert [u.text for u in ex.units] == ["Gedicht.\n\nKasten.\n\nSatz [Note: Die Fußnote.] mit a^2+b^2.\n\nroh Text"]


def test_endnotes_in_another_file_are_shown_at_their_reference():
    chapters = [
        ("kapitel.xhtml", "Kapitel", '<h1>Kapitel</h1><p>Behauptung<a epub:type="noteref" href="notes.xhtml#n1">1</a>.</p>'),
        ("notes.xhtml", "Anmerkungen", '<h1>Anmerkungen</h1><ol><li id="n1" epub:type="endnote"><p>Quelle: Archiv.'
                                       ' <a href="kapitel.xhtml#r1" role="doc-backlink">↩</a></p></li>'
                                       '<li id="n2" epub:type="endnote"><p>Nie zitiert.</p></li></ol>'),
    ]
    ex = extract("n.epub", epub(chapters))
    assert [(u.location["chapter"], u.text) for u in ex.units] == [
        ("Kapitel", "Behauptung [Note: Quelle: Archiv.]."),
        ("Anmerkungen", "2. Nie zitiert."),  # a note nobody references stays where it is
    ]
