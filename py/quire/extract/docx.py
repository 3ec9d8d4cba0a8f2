"""Word .docx: paragraphs and table cells in document order, sections by heading.

Headings are recognised by style (Title, Heading 1-9, whatever the language
of the style id) or by an explicit outline level, so a German "Überschrift 1"
works as well as "Heading1".

Numbers that Word generates for numbered headings and lists ("1.2", "a)")
are written in front of the paragraph, as Word shows them (``docx_numbering``).

Footnotes and endnotes are written inline, right after the mark that
refers to them, numbered in reading order as Word numbers them:
"Reference footnote 1 [Footnote 1: First footnote]".  A note is therefore
searchable and cited with the section it belongs to.

A table of contents (Word's TOC field, paragraphs styled "TOC 1".."TOC 9",
or a content control from the "Table of Contents" gallery) stays
searchable but becomes its own unit flagged ``toc``, so study tools do not
turn it into chapters or questions.

>>> heading_level("heading 2"), heading_level("Title"), heading_level("Normal")
(2, 0, None)
"""

from __future__ import annotations

import re

from quire.extract import toc
from quire.extract.base import ExtractError, Limits, Outline, SafeZip, attr, local
from quire.extract.docx_numbering import Numbering, num_pr
from quire.model import Extraction

_HEADING_NAME = re.compile(r"^(?:heading|berschrift|titre|titolo|título|kop)\s*(\d)$", re.I)
_TOC_NAME = re.compile(r"^(?:toc|verzeichnis|inhaltsverzeichnis|tdm|índice)\s*\d$", re.I)
TOC_LEVEL = -1  # pseudo heading level that marks a table-of-contents paragraph


def heading_level(style_name: str) -> int | None:
    """Outline level for a style name: 0 for Title, n for 'heading n', else None."""
    name = style_name.strip().lower()
    if name == "title":
        return 0
    if m := _HEADING_NAME.match(name.lstrip("ü")):
        return int(m.group(1))
    return None


def _styles(z: SafeZip) -> tuple[dict[str, int], dict[str, tuple[str, int]]]:
    """From word/styles.xml: {styleId: outline level (TOC_LEVEL for TOC entries)}, {styleId: (numId, ilvl)}."""
    root = z.xml("word/styles.xml")
    levels: dict[str, int] = {}
    numbered: dict[str, tuple[str, int]] = {}
    for style in root.iter() if root is not None else ():
        if local(style.tag) != "style":
            continue
        style_id = attr(style, "styleId") or ""
        if numbering := num_pr(style):
            numbered[style_id] = numbering
        level = None
        for el in style.iter():
            if local(el.tag) == "name":
                name = attr(el, "val") or ""
                level = TOC_LEVEL if _TOC_NAME.match(name.strip()) else heading_level(name)
            elif local(el.tag) == "outlineLvl" and level is None:
                level = int(attr(el, "val") or 9) + 1
        if level is not None and level <= 9:
            levels[style_id] = level
    return levels, numbered


def _notes(z: SafeZip, part: str, kind: str) -> dict[str, object]:
    """{id: <w:footnote> element} of footnotes.xml or endnotes.xml, separators left out."""
    root = z.xml(part)
    out = {}
    for note in root if root is not None else ():
        if local(note.tag) == kind and (attr(note, "type") or "normal") == "normal":
            out[attr(note, "id") or ""] = note
    return out


class _Doc:
    """Styles, notes and running note numbers shared by the walk over one document."""

    def __init__(self, z: SafeZip):
        self.styles, self.style_numbering = _styles(z)
        self.numbering = Numbering(z, self.style_numbering)
        self.notes = {"footnote": _notes(z, "word/footnotes.xml", "footnote"),
                      "endnote": _notes(z, "word/endnotes.xml", "endnote")}
        self.numbers = {"footnote": 0, "endnote": 0}
        self.in_note = False
        self.bare_heading = ""  # the last heading, while no text has followed it

    def note(self, kind: str, note_id: str) -> str:
        """' [Footnote 1: text]' for a reference mark; '' for an unknown or nested one."""
        element = self.notes[kind].pop(note_id, None)  # pop: a note is written once, even if referenced twice
        if element is None or self.in_note:
            return ""
        self.numbers[kind] += 1
        self.in_note = True
        try:
            inner = Outline()
            _walk(element, self, inner)
            text = " ".join(" ".join(u.text.split()) for u in inner.units())
        finally:
            self.in_note = False
        return f" [{kind.capitalize()} {self.numbers[kind]}: {text}]" if text else ""


def _paragraph(p, doc: _Doc) -> tuple[str, int | None]:
    """(text, heading level or None) of one <w:p>, with its list or heading number if Word shows one."""
    parts, level, style_id = [], None, ""
    ppr = next((el for el in p if local(el.tag) == "pPr"), None)
    for el in p.iter():
        tag = local(el.tag)
        if tag == "t":  # not delText/instrText: deleted revisions and field codes are invisible
            parts.append(el.text or "")
        elif tag == "tab":
            parts.append("\t")
        elif tag in ("br", "cr"):
            parts.append("\n")
        elif tag in ("footnoteReference", "endnoteReference"):
            parts.append(doc.note(tag[: -len("Reference")], attr(el, "id") or ""))
        elif tag == "instrText" and (el.text or "").strip().upper().startswith("TOC"):
            level = TOC_LEVEL
        elif tag == "pStyle":
            style_id = attr(el, "val") or ""
            level = doc.styles.get(style_id, heading_level(style_id))
            if level is None and _TOC_NAME.match(style_id):
                level = TOC_LEVEL
        elif tag == "outlineLvl" and level != TOC_LEVEL:
            value = int(attr(el, "val") or 9)
            level = value + 1 if value < 9 else level
    text = "".join(parts)
    numbering = (num_pr(ppr) if ppr is not None else None) or doc.style_numbering.get(style_id)
    if numbering and level != TOC_LEVEL and not doc.in_note:
        label = doc.numbering.label(*numbering)
        if label and text.strip():
            text = f"{label} {text.lstrip()}"
    return text, level


def _is_toc_control(sdt) -> bool:
    return any(local(el.tag) == "docPartGallery" and "contents" in (attr(el, "val") or "").lower() for el in sdt.iter())


def _walk(el, doc: _Doc, outline: Outline, in_toc: bool = False) -> None:
    for child in el:
        tag = local(child.tag)
        if tag == "p":
            text, level = _paragraph(child, doc)
            if (in_toc or level == TOC_LEVEL) and not doc.in_note:
                _toc_line(outline, text)
            elif level is not None and text.strip():
                outline.heading(level, text)
                doc.bare_heading = " ".join(text.split())
            else:
                outline.text(text)
                doc.bare_heading = doc.bare_heading if not text.strip() else ""
        elif tag == "tbl":
            for row in (r for r in child if local(r.tag) == "tr"):
                outline.text(" | ".join(_cell_text(c, doc) for c in row if local(c.tag) == "tc"))
            outline.text("")
        elif tag == "sdt":
            _walk(child, doc, outline, in_toc or _is_toc_control(child))
        elif tag in ("sdtContent", "customXml", "ins", "smartTag"):
            _walk(child, doc, outline, in_toc)  # wrappers around ordinary paragraphs


def _toc_line(outline: Outline, text: str) -> None:
    """Put a TOC line into a unit of its own (consecutive lines share it), flagged ``toc``."""
    if not text.strip():
        return
    last = outline.done[-1] if outline.done else None
    if outline.parts or last is None or "toc" not in last.flags:
        outline.flush()
        outline.text(text)
        outline.flush()
        if outline.done:
            toc.flag(outline.done[-1])
    else:
        last.text = f"{last.text}\n{text.strip()}"


def _cell_text(cell, doc: _Doc) -> str:
    inner = Outline()
    _walk(cell, doc, inner)
    return " ".join(" ".join(u.text.split()) for u in inner.units())


def extract_docx(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "Word", limits)
    root = z.xml("word/document.xml")
    if root is None:
        raise ExtractError("this Word file is damaged (word/document.xml is missing); is it really a .docx?")
    body = next((el for el in root if local(el.tag) == "body"), None)
    outline, doc = Outline(), _Doc(z)
    if body is not None:
        _walk(body, doc, outline)
    if doc.bare_heading:
        outline.text(doc.bare_heading)  # a heading that ends the document would otherwise vanish
    units = outline.units()
    meta = {}
    core = z.xml("docProps/core.xml")
    if core is not None:
        title = next((el.text for el in core if local(el.tag) == "title" and el.text), None)
        if title:
            meta["title"] = title.strip()
    return Extraction(kind="docx", units=units, meta=meta)
