"""Word .docx: paragraphs and table cells in document order, sections by heading.

Headings are recognised by style (Title, Heading 1-9, whatever the language
of the style id) or by an explicit outline level, so a German "Überschrift 1"
works as well as "Heading1".

>>> heading_level("heading 2"), heading_level("Title"), heading_level("Normal")
(2, 0, None)
"""

from __future__ import annotations

import re

from quire.extract.base import ExtractError, Limits, Outline, SafeZip, attr, local
from quire.model import Extraction

_HEADING_NAME = re.compile(r"^(?:heading|berschrift|titre|titolo|título|kop)\s*(\d)$", re.I)


def heading_level(style_name: str) -> int | None:
    """Outline level for a style name: 0 for Title, n for 'heading n', else None."""
    name = style_name.strip().lower()
    if name == "title":
        return 0
    if m := _HEADING_NAME.match(name.lstrip("ü")):
        return int(m.group(1))
    return None


def _styles(z: SafeZip) -> dict[str, int]:
    """{styleId: outline level} from word/styles.xml."""
    root = z.xml("word/styles.xml")
    levels: dict[str, int] = {}
    for style in root.iter() if root is not None else ():
        if local(style.tag) != "style":
            continue
        style_id = attr(style, "styleId") or ""
        level = None
        for el in style.iter():
            if local(el.tag) == "name":
                level = heading_level(attr(el, "val") or "")
            elif local(el.tag) == "outlineLvl" and level is None:
                level = int(attr(el, "val") or 9) + 1
        if level is not None and level <= 9:
            levels[style_id] = level
    return levels


def _paragraph(p, styles: dict[str, int]) -> tuple[str, int | None]:
    """(text, heading level or None) of one <w:p>."""
    parts, level = [], None
    for el in p.iter():
        tag = local(el.tag)
        if tag == "t":  # not delText/instrText: deleted revisions and field codes are invisible
            parts.append(el.text or "")
        elif tag == "tab":
            parts.append("\t")
        elif tag in ("br", "cr"):
            parts.append("\n")
        elif tag == "pStyle":
            style_id = attr(el, "val") or ""
            level = styles.get(style_id, heading_level(style_id))
        elif tag == "outlineLvl":
            value = int(attr(el, "val") or 9)
            level = value + 1 if value < 9 else level
    return "".join(parts), level


def _walk(el, styles: dict[str, int], outline: Outline) -> None:
    for child in el:
        tag = local(child.tag)
        if tag == "p":
            text, level = _paragraph(child, styles)
            if level is not None and text.strip():
                outline.heading(level, text)
            else:
                outline.text(text)
        elif tag == "tbl":
            for row in (r for r in child if local(r.tag) == "tr"):
                outline.text(" | ".join(_cell_text(c, styles) for c in row if local(c.tag) == "tc"))
            outline.text("")
        elif tag in ("sdt", "sdtContent", "customXml", "ins", "smartTag"):
            _walk(child, styles, outline)  # wrappers around ordinary paragraphs


def _cell_text(cell, styles: dict[str, int]) -> str:
    inner = Outline()
    _walk(cell, styles, inner)
    return " ".join(" ".join(u.text.split()) for u in inner.units())


def extract_docx(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "Word", limits)
    root = z.xml("word/document.xml")
    if root is None:
        raise ExtractError("this Word file is damaged (word/document.xml is missing); is it really a .docx?")
    body = next((el for el in root if local(el.tag) == "body"), None)
    outline = Outline()
    if body is not None:
        _walk(body, _styles(z), outline)
    units = outline.units()
    meta = {}
    core = z.xml("docProps/core.xml")
    if core is not None:
        title = next((el.text for el in core if local(el.tag) == "title" and el.text), None)
        if title:
            meta["title"] = title.strip()
    return Extraction(kind="docx", units=units, meta=meta)
