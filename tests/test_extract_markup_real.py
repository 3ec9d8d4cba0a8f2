"""Markdown, HTML and EPUB files nobody on this project wrote, against a reference converter.

The files and their expected outputs come from the test suites of docling
(its Markdown export), Pandoc (its native AST) and markdown-it (expected HTML);
see tests/fixtures/markup/SOURCE.md for origin and licence.  For every file:
at least 97 % of the reference's words are in Quire's passages (math aside:
references render MathML as TeX), every note is there, and each passage is
located under the heading the reference puts above the same words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from markup_reference import docling_markdown, html_text, markdown_it_cases, pandoc_native, recall, words
from quire.chunking import chunk_units
from quire.extract import extract

ROOT = Path(__file__).parent / "fixtures" / "markup"
MIN_RECALL = 0.97


def _docling(kind: str, name: str) -> tuple[str, str]:
    return f"docling/{kind}/sources/{name}", f"docling/{kind}/groundtruth/{name}.md"


DOCLING_MD = ["blocks.md", "duck.md", "ending_with_table.md", "escaped_characters.md", "inline_and_formatting.md",
              "mixed.md", "mixed_without_h1.md", "nested.md", "signature_stamp_01.md", "wiki.md"]
DOCLING_HTML = sorted(p.name for p in (ROOT / "docling/html/sources").glob("*.html"))
CASES = (
    [_docling("md", n) for n in DOCLING_MD]
    + [_docling("html", n) for n in DOCLING_HTML]
    + [_docling("epub", "epub_purvis_poetry.epub")]
    + [("pandoc/epub/wasteland.epub", "pandoc/epub/wasteland.native"),
       ("pandoc/epub/features.epub", "pandoc/epub/features.native")]
)


def _reference(path: str) -> tuple[list[tuple[str, str]], list[str]]:
    text = (ROOT / path).read_text(encoding="utf-8")
    return pandoc_native(text) if path.endswith(".native") else (docling_markdown(text), [])


def _extract(path: str):
    return extract(Path(path).name, (ROOT / path).read_bytes())


def _location(unit) -> str | None:
    """The heading a passage is filed under: the last crumb (Markdown/HTML) or the chapter (EPUB)."""
    if "chapter" in unit.location:
        return unit.location["chapter"]
    return unit.location["section"][-1] if unit.location["section"] else None


def _stream(events) -> list[tuple[str, str | None]]:
    """Reference words, each with the heading above it (a heading's own words go with it)."""
    heading, out = None, []
    for kind, text in events:
        heading = text if kind == "h" else heading
        out += [(w, heading) for w in words(text)]
    return out


@pytest.mark.parametrize("source, reference", CASES, ids=[c[0] for c in CASES])
def test_words_of_the_reference_are_indexed(source, reference):
    events, notes = _reference(reference)
    ex = _extract(source)
    got = words(" ".join(u.prefix + u.text for u in ex.units))
    expected = [w for _, text in events for w in words(text)] + [w for n in notes for w in words(n)]
    assert recall(expected, got) >= MIN_RECALL, sorted(set(expected) - set(got))


@pytest.mark.parametrize("source, reference", CASES, ids=[c[0] for c in CASES])
def test_each_passage_sits_under_the_reference_heading(source, reference):
    placed, checked = _check_locations(source, reference)
    assert checked < 3 or placed >= 0.5 * checked, f"only {placed} of {checked} passages found in the reference"


def test_most_passages_are_found_in_their_reference():
    """The location check above is only as good as the share of passages it could place."""
    counts = [_check_locations(source, reference) for source, reference in CASES]
    placed, checked = sum(p for p, _ in counts), sum(c for _, c in counts)
    assert checked >= 100 and placed >= 0.8 * checked, (placed, checked)


def _check_locations(source: str, reference: str) -> tuple[int, int]:
    """Assert each passage's location for the passages found in the reference; (found, tried)."""
    events, _ = _reference(reference)
    stream = _stream(events)
    tokens = [w for w, _ in stream]
    start, placed, checked = 0, 0, 0
    for unit in _extract(source).units:
        body = words(re.sub(r"\[Note: [^\]]*\]", " ", unit.text))
        if len(body) < 3:
            continue
        checked += 1
        # Six words in a row, from the passage's start or a little later: the reference
        # may leave out an opening word or two (a table caption, an image's alt text).
        at = None
        for probe in [body[k : k + 6] for k in range(0, min(len(body) - 2, 24), 3)] + [body[:3]]:
            at = next((i for i in range(start, len(tokens) - len(probe) + 1) if tokens[i : i + len(probe)] == probe), None)
            if at is not None:
                break
        if at is None:
            continue  # the reference left these words out (a title page, a raw HTML comment)
        placed += 1
        start = at + len(probe)
        expected = stream[at][1]
        assert words(_location(unit) or "") == words(expected or ""), (unit.location, unit.text[:80])
    return placed, checked


NOTE_CASES = ["pandoc/epub/wasteland.epub"]


@pytest.mark.parametrize("source", NOTE_CASES)
def test_every_epub_note_is_shown_at_its_reference(source):
    _, notes = _reference(source.replace(".epub", ".native"))
    texts = [words(" ".join(re.findall(r"\[Note: (.*?)\](?:\s|$)", u.text, re.M))) for u in _extract(source).units]
    assert len(notes) == 20
    for note in notes:
        assert any(_contains(t, words(note)) for t in texts), note


def _contains(haystack: list[str], needle: list[str]) -> bool:
    return any(haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1))


def test_wasteland_passages_name_the_part_they_are_in():
    """The issue's case: one spine item holding the poem's parts; every searchable passage names its own part."""
    events, _ = _reference("pandoc/epub/wasteland.native")
    stream = _stream(events)
    tokens = [w for w, _ in stream]
    chunks = chunk_units("w", _extract("pandoc/epub/wasteland.epub").units)
    parts = {c.location["chapter"] for c in chunks}
    assert {"I. THE BURIAL OF THE DEAD", "II. A GAME OF CHESS"} <= parts
    for chunk in chunks:
        probe = words(re.sub(r"\[Note: [^\]]*\]", " ", chunk.text))[:6]
        at = next((i for i in range(len(tokens)) if tokens[i : i + len(probe)] == probe), None)
        if at is not None and len(probe) == 6:
            assert words(chunk.location["chapter"]) == words(stream[at][1]), chunk.text[:60]


def test_wasteland_line_numbers_are_words_of_their_own():
    text = " ".join(u.text for u in _extract("pandoc/epub/wasteland.epub").units)
    assert "these ascended 90\n" in text and "ascended90" not in text


MARKDOWN_IT = ["markdown-it/tables.txt", "markdown-it/strikethrough.txt", "markdown-it/commonmark_extras.txt",
               "markdown-it-footnote/footnote.txt"]


@pytest.mark.parametrize("fixture", MARKDOWN_IT)
def test_markdown_it_examples(fixture):
    """Every example of the fixture file: Quire's text holds the words of markdown-it's expected HTML."""
    expected, got = [], []
    for _, markdown, html in markdown_it_cases((ROOT / fixture).read_text(encoding="utf-8")):
        if not markdown.strip():
            continue
        ex = extract("example.md", markdown.replace("→", "\t").encode())
        html = re.sub(r'<sup class="footnote-ref">.*?</sup>', " ", html)  # generated note numbers
        expected += words(html_text(html).replace("↩", " "))
        got += words(" ".join(u.prefix + u.text for u in ex.units))
    assert recall(expected, got) >= MIN_RECALL


def test_markdown_it_footnotes_are_placed_at_their_reference():
    """Each footnote's text follows the sentence that references it, in the same passage."""
    cases = markdown_it_cases((ROOT / "markdown-it-footnote/footnote.txt").read_text(encoding="utf-8"))
    checked = 0
    for line, markdown, html in cases:
        bodies = re.findall(r'<li id="fn\d+" class="footnote-item">(.*?)</li>', html, re.S)
        if not bodies or "[^" not in markdown:
            continue
        text = " ".join(u.text for u in extract("n.md", markdown.encode()).units)
        for body in bodies:
            note = words(html_text(body).replace("↩", " "))
            assert _contains(words(text), note), (line, note, text)
            checked += 1
    assert checked >= 10
