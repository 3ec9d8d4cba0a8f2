"""DOCX, XLSX and PPTX written by tests/fixtures_docs.py into tmp_path."""

import pytest

from quire.extract import ExtractError, extract
from fixtures_docs import A, P, R, W, _rels, docx, pptx, write, xlsx, zip_bytes


def test_docx_sections_tables_and_title(tmp_path):
    data = docx(
        [
            ("Title", "Biologie Skript"),
            ("", "Vorwort des Autors."),
            ("Heading1", "Zellen"),
            ("", "Zellen sind\tklein."),
            ("Heading2", "Organellen"),
            ("", "Mitochondrien liefern Energie."),
            ("table", [["Organell", "Aufgabe"], ["Ribosom", "Proteine"]]),
            ("berschrift1", "Genetik"),  # German Word's style id for "Überschrift 1"
            ("", "DNA trägt Erbinformation."),
        ],
        title="Skript",
    )
    path = write(tmp_path, "skript.docx", data)
    ex = extract(path.name, path.read_bytes())
    assert ex.kind == "docx" and ex.meta["title"] == "Skript"
    got = [(u.location["section"], u.text) for u in ex.units]
    assert got == [
        (["Biologie Skript"], "Vorwort des Autors."),
        (["Biologie Skript", "Zellen"], "Zellen sind\tklein."),
        (["Biologie Skript", "Zellen", "Organellen"], "Mitochondrien liefern Energie.\nOrganell | Aufgabe\nRibosom | Proteine"),
        (["Biologie Skript", "Genetik"], "DNA trägt Erbinformation."),
    ]
    assert ex.units[2].prefix == "[Section: Biologie Skript > Zellen > Organellen]\n"


def test_xlsx_sheets_rows_and_values(tmp_path):
    grades = [["Name", "Punkte", "Bestanden"]] + [[f"Schüler {i}", i * 1.5, i > 3] for i in range(1, 26)]
    data = xlsx({"Noten": grades, "Notizen": [[None], ["Thema", None, "Wann"], ["Optik", None, 3.0]]})
    path = write(tmp_path, "noten.xlsx", data)
    ex = extract(path.name, path.read_bytes())
    assert ex.kind == "xlsx" and ex.meta["sheets"] == ["Noten", "Notizen"]
    assert [u.location for u in ex.units] == [
        {"sheet": "Noten", "rows": [2, 21]},
        {"sheet": "Noten", "rows": [22, 26]},
        {"sheet": "Notizen", "rows": [3, 3]},  # rows keep Excel's numbering, blank row 1 included
    ]
    assert ex.units[0].prefix == "[Sheet: Noten]\nName | Punkte | Bestanden\n"
    assert ex.units[0].text.split("\n")[:4] == ["Schüler 1 | 1.5 | FALSE", "Schüler 2 | 3 | FALSE", "Schüler 3 | 4.5 | FALSE", "Schüler 4 | 6 | TRUE"]
    assert ex.units[2].prefix == "[Sheet: Notizen]\nThema |  | Wann\n"
    assert ex.units[2].text == "Optik |  | 3"


def test_xlsx_inline_strings():
    ex = extract("i.xlsx", xlsx({"S": [["Begriff"], ["Ökologie"]]}, inline=True))
    assert ex.units[0].text == "Ökologie"


def test_pptx_presentation_order_and_notes(tmp_path):
    slides = [
        ("Einführung", ["Was ist Physik?", "Warum messen?"], "Mit einer Frage beginnen."),
        ("Mechanik", ["F = m · a"], ""),
        ("", ["Folie ohne Titel"], ""),
    ]
    # Files named in reverse: order must come from presentation.xml.
    path = write(tmp_path, "physik.pptx", pptx(slides, file_order=[3, 1, 2]))
    ex = extract(path.name, path.read_bytes())
    assert ex.meta["slides"] == 3
    assert [(u.location, u.prefix) for u in ex.units] == [
        ({"slide": 1}, "[Slide 1: Einführung]\n"),
        ({"slide": 2}, "[Slide 2: Mechanik]\n"),
        ({"slide": 3}, "[Slide 3]\n"),
    ]
    assert ex.units[0].text == "Einführung\nWas ist Physik?\nWarum messen?\ngrouped 3\n\nNotes:\nMit einer Frage beginnen."
    assert ex.units[1].text == "Mechanik\nF = m · a"
    assert "Notes" not in ex.units[1].text


@pytest.mark.parametrize("name, missing", [("a.docx", "word/document.xml"), ("a.xlsx", "xl/workbook.xml"), ("a.pptx", "ppt/presentation.xml")])
def test_office_zip_without_main_part(name, missing):
    from fixtures_docs import zip_bytes

    with pytest.raises(ExtractError, match=f"damaged .*{missing}"):
        extract(name, zip_bytes({"other.xml": "<x/>"}))


def word(body: str, parts: dict | None = None) -> bytes:
    """A .docx from raw <w:body> XML (plus any other parts)."""
    return zip_bytes({"word/document.xml": f'<w:document {W} {R}><w:body>{body}</w:body></w:document>', **(parts or {})})


def para(text: str, ppr: str = "") -> str:
    return f'<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def test_docx_toc_paragraphs_become_a_flagged_unit():
    """Word writes a TOC as paragraphs styled "TOC 1".."TOC 9"; they stay searchable, flagged ``toc``."""
    data = docx([("Title", "Skript"), ("TOC1", "1 Zellen\t2"), ("TOC2", "1.1 Organellen\t3"), ("Heading1", "Zellen"),
                 ("", "Zellen sind klein.")])
    ex = extract("t.docx", data)
    toc_units = [u for u in ex.units if "toc" in u.flags]
    assert [u.text for u in toc_units] == ["1 Zellen\t2\n1.1 Organellen\t3"]
    assert toc_units[0].location == {"section": ["Skript"], "toc": True}
    assert [u.text for u in ex.units if "toc" not in u.flags] == ["Zellen sind klein."]


def test_docx_toc_content_control_is_flagged():
    gallery = '<w:sdtPr><w:docPartObj><w:docPartGallery w:val="Table of Contents"/></w:docPartObj></w:sdtPr>'
    body = (f"<w:sdt>{gallery}<w:sdtContent>{para('Inhalt')}{para('Einleitung 1')}{para('Methoden 4')}</w:sdtContent></w:sdt>"
            + para("Der eigentliche Text."))
    ex = extract("c.docx", word(body))
    assert [(u.text, u.flags) for u in ex.units] == [("Inhalt\nEinleitung 1\nMethoden 4", ["toc"]), ("Der eigentliche Text.", [])]


def test_docx_notes_inline_in_reading_order_and_numbering():
    notes = (f'<w:footnotes {W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
             f'<w:footnote w:id="7">{para("Zweite Fußnote.")}</w:footnote><w:footnote w:id="3">{para("Erste Fußnote.")}</w:footnote>'
             "</w:footnotes>")
    ends = f'<w:endnotes {W}><w:endnote w:id="1">{para("Quelle: Lehrbuch, S. 12.")}</w:endnote></w:endnotes>'
    numbering = (f'<w:numbering {W}><w:abstractNum w:abstractNumId="5">'
                 '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl>'
                 '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%2)"/></w:lvl>'
                 '</w:abstractNum><w:num w:numId="2"><w:abstractNumId w:val="5"/></w:num></w:numbering>')
    item = lambda text, level: para(text, f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="2"/></w:numPr>')
    ref = lambda kind, n: f'<w:r><w:{kind}Reference w:id="{n}"/></w:r>'
    body = (f'<w:p><w:r><w:t>Zellen teilen sich.</w:t></w:r>{ref("footnote", 3)}<w:r><w:t xml:space="preserve"> Oft.</w:t></w:r>'
            f'{ref("footnote", 7)}</w:p>' + item("Prophase", 0) + item("Chromosomen", 1) + item("Spindel", 1)
            + item("Metaphase", 0) + f'<w:p><w:r><w:t>Ende.</w:t></w:r>{ref("endnote", 1)}</w:p>')
    ex = extract("n.docx", word(body, {"word/footnotes.xml": notes, "word/endnotes.xml": ends, "word/numbering.xml": numbering}))
    assert ex.units[0].text.split("\n") == [
        "Zellen teilen sich. [Footnote 1: Erste Fußnote.] Oft. [Footnote 2: Zweite Fußnote.]",
        "1. Prophase", "a) Chromosomen", "b) Spindel", "2. Metaphase",
        "Ende. [Endnote 1: Quelle: Lehrbuch, S. 12.]",
    ]


def test_pptx_alternate_content_is_read_once():
    """PowerPoint wraps newer shapes in mc:AlternateContent with a Fallback copy; read one of them."""
    mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    shape = lambda text, ph="": (f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr>'
                                 f"<p:txBody><a:p><a:r><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp>")
    tree = (shape("Titel", '<p:ph type="ctrTitle"/>') + shape("Untertitel", '<p:ph type="subTitle" idx="1"/>')
            + f'<mc:AlternateContent {mc}><mc:Choice Requires="p14">{shape("Neu")}</mc:Choice>'
            f'<mc:Fallback>{shape("Neu")}</mc:Fallback></mc:AlternateContent>')
    data = zip_bytes({
        "ppt/presentation.xml": f'<p:presentation {A} {P} {R}><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>',
        "ppt/_rels/presentation.xml.rels": _rels([("rId1", "slide", "slides/slide1.xml")]),
        "ppt/slides/slide1.xml": f"<p:sld {A} {P} {R}><p:cSld><p:spTree>{tree}</p:spTree></p:cSld></p:sld>",
    })
    ex = extract("a.pptx", data)
    assert ex.units[0].text == "Titel\nUntertitel\nNeu" and ex.units[0].prefix == "[Slide 1: Titel]\n"
