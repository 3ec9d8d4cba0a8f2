"""PowerPoint .pptx: one unit per slide in presentation order, speaker notes included.

Order comes from ``ppt/presentation.xml`` (sldIdLst) through its relationships,
not from file names: slide7.xml may well be shown second.

A slide titled "Plan" with one bullet and a note becomes
``Unit(text="Plan\\nbullet\\n\\nNotes:\\nsay this", location={"slide": 2}, prefix="[Slide 2: Plan]\\n")``.
"""

from __future__ import annotations

from quire.extract.base import ExtractError, Limits, SafeZip, local, rel_id, relationships, tidy
from quire.model import Extraction, Unit

_TITLE_TYPES = {"title", "ctrTitle"}
_NOTES_SKIP = {"sldImg", "sldNum", "hdr", "ftr", "dt"}  # notes-page furniture, not notes


def _placeholder(shape) -> str | None:
    for el in shape.iter():
        if local(el.tag) == "ph":
            return el.get("type", "body")
    return None


def _paragraphs(el) -> list[str]:
    """Text of every <a:p> under el, table cells included, in order."""
    out = []
    for p in el.iter():
        if local(p.tag) != "p":
            continue
        parts = []
        for r in p.iter():
            tag = local(r.tag)
            if tag == "t":
                parts.append(r.text or "")
            elif tag == "br":
                parts.append("\n")
        out.append("".join(parts))
    return out


def _shapes(tree) -> list:
    """Leaf shapes (sp, graphicFrame) in drawing order, looking inside groups."""
    out = []
    for el in tree:
        tag = local(el.tag)
        if tag == "grpSp":
            out += _shapes(el)
        elif tag in ("sp", "graphicFrame"):
            out.append(el)
    return out


def _slide_text(root, skip: set[str] = frozenset()) -> tuple[str, list[str]]:
    """(title, other paragraphs) of a slide or notes page."""
    title, body = "", []
    tree = next((el for el in root.iter() if local(el.tag) == "spTree"), None)
    for shape in _shapes(tree) if tree is not None else []:
        kind = _placeholder(shape)
        if kind in skip:
            continue
        lines = _paragraphs(shape)
        if kind in _TITLE_TYPES and not title:
            title = " ".join(" ".join(lines).split())
        else:
            body += lines
    return title, body


def extract_pptx(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "PowerPoint", limits)
    pres = z.xml("ppt/presentation.xml")
    if pres is None:
        raise ExtractError("this PowerPoint file is damaged (ppt/presentation.xml is missing); is it really a .pptx?")
    rels = relationships(z, "ppt/presentation.xml")
    order = [rel_id(el) for el in pres.iter() if local(el.tag) == "sldId"]
    units = []
    for number, rid in enumerate(order, start=1):
        path = rels.get(rid, ("", ""))[1]
        root = z.xml(path) if path else None
        if root is None:
            continue
        title, body = _slide_text(root)
        notes = []
        for kind, target in relationships(z, path).values():
            if kind.endswith("/notesSlide") and (notes_root := z.xml(target)) is not None:
                notes = _slide_text(notes_root, _NOTES_SKIP | _TITLE_TYPES)[1]
        text = tidy("\n".join([title, *body]))
        if notes_text := tidy("\n".join(notes)):
            text = f"{text}\n\nNotes:\n{notes_text}".strip()
        if text:
            units.append(Unit(text=text, location={"slide": number}, prefix=f"[Slide {number}: {title}]\n" if title else f"[Slide {number}]\n"))
    return Extraction(kind="pptx", units=units, meta={"slides": len(order)})
