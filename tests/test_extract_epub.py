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
