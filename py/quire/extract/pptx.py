"""PowerPoint .pptx: one unit per slide in presentation order, speaker notes included.

Order comes from ``ppt/presentation.xml`` (sldIdLst) through its relationships,
not from file names: slide7.xml may well be shown second.

Besides text boxes and placeholders (title, subtitle, body) a slide's text
lives in tables (written as rows, ``a | b | c``), in shapes wrapped in
``mc:AlternateContent``, and in SmartArt diagrams, whose words are stored in
a separate data part (``ppt/diagrams/data1.xml``) that the slide only
points to.

A slide titled "Plan" with one bullet and a note becomes
``Unit(text="Plan\\nbullet\\n\\nNotes:\\nsay this", location={"slide": 2}, prefix="[Slide 2: Plan]\\n")``.
"""

from __future__ import annotations

from quire.extract.base import ExtractError, Limits, SafeZip, attr, local, rel_id, relationships, tidy
from quire.model import Extraction, Unit

_TITLE_TYPES = {"title", "ctrTitle"}
_NOTES_SKIP = {"sldImg", "sldNum", "hdr", "ftr", "dt"}  # notes-page furniture, not notes
_DIAGRAM_SKIP = {"pres", "parTrans", "sibTrans"}  # layout and connector points carry no words


def _placeholder(shape) -> str | None:
    for el in shape.iter():
        if local(el.tag) == "ph":
            return el.get("type", "body")
    return None


def _paragraph_text(p) -> str:
    parts = []
    for r in p.iter():
        tag = local(r.tag)
        if tag == "t":
            parts.append(r.text or "")
        elif tag == "br":
            parts.append("\n")
    return "".join(parts)


def _paragraphs(el) -> list[str]:
    """Text of every <a:p> under el, in order; a table comes out as one line per row."""
    out = []
    for child in el:
        tag = local(child.tag)
        if tag == "p":
            out.append(_paragraph_text(child))
        elif tag == "tbl":
            for row in (r for r in child if local(r.tag) == "tr"):
                cells = [" ".join(" ".join(_paragraphs(tc)).split()) for tc in row if local(tc.tag) == "tc"]
                out.append(" | ".join(cells))
        else:
            out += _paragraphs(child)
    return out


def _shapes(tree) -> list:
    """Leaf shapes (sp, graphicFrame) in drawing order, looking inside groups and AlternateContent."""
    out = []
    for el in tree:
        tag = local(el.tag)
        if tag == "grpSp":
            out += _shapes(el)
        elif tag in ("sp", "graphicFrame"):
            out.append(el)
        elif tag == "AlternateContent":
            # Choice and Fallback are two renderings of the same thing: read one.
            branches = [b for b in el if local(b.tag) in ("Choice", "Fallback")]
            for branch in branches:
                found = _shapes(branch)
                if found:
                    out += found
                    break
    return out


def _diagram(shape, z: SafeZip, rels: dict) -> list[str]:
    """Words of a SmartArt diagram, from the data part its graphicFrame names (r:dm)."""
    ref = next((el for el in shape.iter() if local(el.tag) == "relIds"), None)
    target = rels.get(attr(ref, "dm") or "", ("", ""))[1] if ref is not None else ""
    root = z.xml(target) if target else None
    out = []
    for pt in root.iter() if root is not None else ():
        if local(pt.tag) != "pt" or pt.get("type", "node") in _DIAGRAM_SKIP:
            continue
        body = next((el for el in pt if local(el.tag) == "t"), None)
        if body is not None:
            out += [line for line in _paragraphs(body) if line.strip()]
    return out


def _slide_text(root, z: SafeZip, rels: dict, skip: set[str] = frozenset()) -> tuple[str, list[str]]:
    """(title, other paragraphs) of a slide or notes page."""
    title, body = "", []
    tree = next((el for el in root.iter() if local(el.tag) == "spTree"), None)
    for shape in _shapes(tree) if tree is not None else []:
        kind = _placeholder(shape)
        if kind in skip:
            continue
        lines = _paragraphs(shape) + _diagram(shape, z, rels)
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
        slide_rels = relationships(z, path)
        title, body = _slide_text(root, z, slide_rels)
        notes = []
        for kind, target in slide_rels.values():
            if kind.endswith("/notesSlide") and (notes_root := z.xml(target)) is not None:
                notes = _slide_text(notes_root, z, relationships(z, target), _NOTES_SKIP | _TITLE_TYPES)[1]
        text = tidy("\n".join([title, *body]))
        if notes_text := tidy("\n".join(notes)):
            text = f"{text}\n\nNotes:\n{notes_text}".strip()
        if text:
            units.append(Unit(text=text, location={"slide": number}, prefix=f"[Slide {number}: {title}]\n" if title else f"[Slide {number}]\n"))
    return Extraction(kind="pptx", units=units, meta={"slides": len(order)})
