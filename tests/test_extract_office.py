"""DOCX, XLSX and PPTX written by tests/fixtures_docs.py into tmp_path."""

import pytest

from quire.extract import ExtractError, extract
from fixtures_docs import docx, pptx, write, xlsx


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
