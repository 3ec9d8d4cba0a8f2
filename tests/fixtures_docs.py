"""Build small office/EPUB documents at test time by writing their XML into a zip.

Binary fixtures are not committed; these helpers write just enough of each
format for Word, Excel, PowerPoint and e-readers to accept the file.
"""

from __future__ import annotations

import io
import zipfile
from urllib.parse import quote
from xml.sax.saxutils import escape

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
P = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
S = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
RT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def zip_bytes(parts: dict[str, str | bytes], stored_first: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        if stored_first:
            z.writestr(stored_first, parts[stored_first], compress_type=zipfile.ZIP_STORED)
        for name, data in parts.items():
            if name != stored_first:
                z.writestr(name, data)
    return buf.getvalue()


def _rels(items: list[tuple[str, str, str]]) -> str:
    body = "".join(f'<Relationship Id="{i}" Type="{RT}/{t}" Target="{target}"/>' for i, t, target in items)
    return f'<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="{RELS}">{body}</Relationships>'


# ---------------------------------------------------------------- DOCX


def docx(blocks: list, title: str = "") -> bytes:
    """blocks: ("Heading1", "text") paragraphs, or ("table", [[cell, ...], ...])."""
    body = []
    for style, content in blocks:
        if style == "table":
            rows = "".join(
                "<w:tr>" + "".join(f"<w:tc><w:p><w:r><w:t>{escape(c)}</w:t></w:r></w:p></w:tc>" for c in row) + "</w:tr>"
                for row in content
            )
            body.append(f"<w:tbl>{rows}</w:tbl>")
        else:
            ppr = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
            runs = "<w:r><w:tab/></w:r>".join(f'<w:r><w:t xml:space="preserve">{escape(t)}</w:t></w:r>' for t in content.split("\t"))
            body.append(f"<w:p>{ppr}{runs}</w:p>")
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="{sid}"><w:name w:val="{name}"/></w:style>'
        for sid, name in [("Title", "Title"), ("Heading1", "heading 1"), ("Heading2", "heading 2"), ("berschrift1", "heading 1")]
    )
    core = (
        '<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{escape(title)}</dc:title></cp:coreProperties>'
    )
    return zip_bytes({
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "_rels/.rels": _rels([("rId1", "officeDocument", "word/document.xml")]),
        "word/document.xml": f'<w:document {W} {R}><w:body>{"".join(body)}</w:body></w:document>',
        "word/styles.xml": f"<w:styles {W}>{styles}</w:styles>",
        "docProps/core.xml": core,
    })


# ---------------------------------------------------------------- XLSX


def _col(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def xlsx(sheets: dict[str, list[list]], inline: bool = False) -> bytes:
    """Cells: str (shared string, or inline if inline=True), int/float, bool, None (blank)."""
    shared: list[str] = []
    parts = {}
    for n, (name, rows) in enumerate(sheets.items(), start=1):
        xml_rows = []
        for r, row in enumerate(rows, start=1):
            cells = []
            for c, value in enumerate(row):
                ref = f"{_col(c)}{r}"
                if value is None:
                    continue
                if isinstance(value, bool):
                    cells.append(f'<c r="{ref}" t="b"><v>{int(value)}</v></c>')
                elif isinstance(value, (int, float)):
                    cells.append(f'<c r="{ref}"><v>{value}</v></c>')
                elif inline:
                    cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{escape(value)}</t></is></c>')
                else:
                    shared.append(value)
                    cells.append(f'<c r="{ref}" t="s"><v>{len(shared) - 1}</v></c>')
            if cells:
                xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
        parts[f"xl/worksheets/sheet{n}.xml"] = f'<worksheet {S}><sheetData>{"".join(xml_rows)}</sheetData></worksheet>'
    sheet_list = "".join(f'<sheet name="{escape(name)}" sheetId="{n}" r:id="rId{n}"/>' for n, name in enumerate(sheets, start=1))
    sst = "".join(f"<si><t>{escape(s)}</t></si>" for s in shared)
    parts.update({
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "xl/workbook.xml": f"<workbook {S} {R}><sheets>{sheet_list}</sheets></workbook>",
        "xl/_rels/workbook.xml.rels": _rels([(f"rId{n}", "worksheet", f"worksheets/sheet{n}.xml") for n in range(1, len(sheets) + 1)]),
        "xl/sharedStrings.xml": f'<sst {S} count="{len(shared)}">{sst}</sst>',
    })
    return zip_bytes(parts)


# ---------------------------------------------------------------- PPTX


def _shape(text_lines: list[str], ph: str | None) -> str:
    ph_xml = f'<p:nvPr><p:ph type="{ph}"/></p:nvPr>' if ph else "<p:nvPr/>"
    paras = "".join(f"<a:p><a:r><a:t>{escape(t)}</a:t></a:r></a:p>" for t in text_lines)
    return f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/>{ph_xml}</p:nvSpPr><p:txBody>{paras}</p:txBody></p:sp>'


def pptx(slides: list[tuple[str, list[str], str]], file_order: list[int] | None = None) -> bytes:
    """slides in presentation order: (title, bullets, notes).

    file_order[i] is the file number used for slide i, so a test can check
    that order comes from presentation.xml, not from file names.
    """
    file_order = file_order or list(range(1, len(slides) + 1))
    parts = {"[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'}
    rels, ids = [], []
    for i, ((title, bullets, notes), num) in enumerate(zip(slides, file_order)):
        shapes = _shape([title], "title") + _shape(bullets, None)
        # A group shape, as PowerPoint writes for grouped text boxes.
        shapes += f'<p:grpSp>{_shape(["grouped " + str(num)], None)}</p:grpSp>' if i == 0 else ""
        parts[f"ppt/slides/slide{num}.xml"] = f"<p:sld {A} {P} {R}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"
        if notes:
            note_shapes = _shape(["slide image"], "sldImg") + _shape([notes], "body") + _shape([str(num)], "sldNum")
            parts[f"ppt/notesSlides/notesSlide{num}.xml"] = f"<p:notes {A} {P}><p:cSld><p:spTree>{note_shapes}</p:spTree></p:cSld></p:notes>"
            parts[f"ppt/slides/_rels/slide{num}.xml.rels"] = _rels([("rId9", "notesSlide", f"../notesSlides/notesSlide{num}.xml")])
        rels.append((f"rId{10 + i}", "slide", f"slides/slide{num}.xml"))
        ids.append(f'<p:sldId id="{256 + i}" r:id="rId{10 + i}"/>')
    parts["ppt/presentation.xml"] = f'<p:presentation {A} {P} {R}><p:sldIdLst>{"".join(ids)}</p:sldIdLst></p:presentation>'
    parts["ppt/_rels/presentation.xml.rels"] = _rels(rels)
    return zip_bytes(parts)


# ---------------------------------------------------------------- EPUB


def epub(chapters: list[tuple[str, str, str]], toc: str = "nav", book_title: str = "A Book") -> bytes:
    """chapters: (file name, toc title, xhtml body).  toc: "nav" (EPUB 3), "ncx" (EPUB 2) or "none"."""
    manifest = "".join(f'<item id="c{i}" href="text/{quote(f)}" media-type="application/xhtml+xml"/>' for i, (f, _, _) in enumerate(chapters))
    spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
    parts: dict[str, str | bytes] = {
        "mimetype": "application/epub+zip",
        "META-INF/container.xml": (
            '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'
        ),
    }
    for f, _, body in chapters:
        parts[f"OEBPS/text/{f}"] = (
            '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{escape(f)}</title></head><body>{body}</body></html>"
        )
    spine_attr = ""
    if toc == "nav":
        links = "".join(f'<li><a href="text/{quote(f)}">{escape(t)}</a></li>' for f, t, _ in chapters)
        parts["OEBPS/nav.xhtml"] = (
            '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
            f'<nav epub:type="toc"><ol>{links}</ol></nav></body></html>'
        )
        manifest += '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        spine = '<itemref idref="nav"/>' + spine
    elif toc == "ncx":
        points = "".join(
            f'<navPoint id="n{i}"><navLabel><text>{escape(t)}</text></navLabel><content src="text/{quote(f)}"/></navPoint>'
            for i, (f, t, _) in enumerate(chapters)
        )
        parts["OEBPS/toc.ncx"] = f'<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap>{points}</navMap></ncx>'
        manifest += '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
        spine_attr = ' toc="ncx"'
    parts["OEBPS/content.opf"] = (
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:title>{escape(book_title)}</dc:title></metadata><manifest>{manifest}</manifest>"
        f"<spine{spine_attr}>{spine}</spine></package>"
    )
    return zip_bytes(parts, stored_first="mimetype")


# ---------------------------------------------------------------- zip bombs


def zip_bomb(inner_name: str, size: int, extra: dict[str, str] | None = None) -> bytes:
    """A small archive whose one part inflates to `size` bytes of zeros."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, data in (extra or {}).items():
            z.writestr(name, data)
        with z.open(inner_name, "w", force_zip64=True) as f:
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                f.write(block)
    return buf.getvalue()


def lying_zip(parts: dict[str, str], declared: int = 10) -> bytes:
    """An archive whose central directory understates every part's size."""
    data = bytearray(zip_bytes(parts))
    offset = 0
    while (offset := data.find(b"PK\x01\x02", offset)) != -1:
        data[offset + 24 : offset + 28] = declared.to_bytes(4, "little")  # uncompressed size
        offset += 4
    return bytes(data)


def write(tmp_path, name: str, data: bytes):
    """Write a fixture into tmp_path (never the working tree) and return its path."""
    path = tmp_path / name
    path.write_bytes(data)
    return path
