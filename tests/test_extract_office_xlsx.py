"""XLSX specifics: number formats through the extractor, the 1904 date system, hostile sparse sheets.

Workbooks are written at test time (tests/fixtures_docs.py style); Excel's own
display for hundreds of format codes is checked in test_extract_office_real.py.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from xml.sax.saxutils import escape

import pytest

from fixtures_docs import R, S, _rels, zip_bytes
from quire.extract import extract
from quire.chunking import chunk_units
from quire.extract.xlsx import MAX_CELL, MAX_GAP, MAX_HEADER, MAX_TEXT


def workbook(rows: str, *, formats: dict[int, str] | None = None, xfs: list[int] | None = None,
             shared: list[str] | None = None, date1904: bool = False) -> bytes:
    """A one-sheet workbook from raw <row> XML, custom number formats and cell styles (numFmtIds)."""
    num_fmts = "".join(f'<numFmt numFmtId="{i}" formatCode="{escape(c, {chr(34): "&quot;"})}"/>'
                       for i, c in (formats or {}).items())
    cell_xfs = "".join(f'<xf numFmtId="{i}" applyNumberFormat="1"/>' for i in [0, *(xfs or [])])
    pr = '<workbookPr date1904="1"/>' if date1904 else ""
    sst = "".join(f"<si><t>{escape(s)}</t></si>" for s in shared or [])
    return zip_bytes({
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "xl/workbook.xml": f'<workbook {S} {R}>{pr}<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": _rels([("rId1", "worksheet", "worksheets/sheet1.xml")]),
        "xl/styles.xml": f"<styleSheet {S}><numFmts>{num_fmts}</numFmts><cellXfs>{cell_xfs}</cellXfs></styleSheet>",
        "xl/sharedStrings.xml": f"<sst {S}>{sst}</sst>",
        "xl/worksheets/sheet1.xml": f"<worksheet {S}><sheetData>{rows}</sheetData></worksheet>",
    })


def cells(ex) -> list[str]:
    return [row for u in ex.units for row in u.text.split("\n")]


CUSTOM = {164: "dd.mm.yyyy", 165: "#,##0.00 [$€-407]", 166: '0.0%;[Red]-0.0%;"–"', 167: "[h]:mm", 168: "@"}


@pytest.mark.parametrize("value, num_fmt_id, shown", [
    ("45730", 14, "3/14/2025"),  # built-in short date, en-US
    ("45730.5", 22, "3/14/2025 12:00"),
    ("0.25", 9, "25%"),
    ("0.12345", 10, "12.35%"),
    ("1234567.891", 4, "1,234,567.89"),
    ("-1234.5", 8, "($1,234.50)"),
    ("0.75", 18, "6:00 PM"),
    ("45730", 164, "14.03.2025"),
    ("1234.5", 165, "1,234.50 €"),
    ("-0.0625", 166, "-6.3%"),
    ("0", 166, "–"),
    ("1.75", 167, "42:00"),
    ("12.343999999999999", 0, "12.344"),  # General: what Excel shows, not the float's repr
    ("60", 164, "29.02.1900"),  # the day Lotus and Excel believe existed
    ("61", 164, "01.03.1900"),
])
def test_number_formats_through_the_extractor(value, num_fmt_id, shown):
    xfs = [num_fmt_id]
    rows = f'<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" s="1"><v>{value}</v></c></row>'
    ex = extract("f.xlsx", workbook(rows, formats=CUSTOM, xfs=xfs, shared=["Wert"]))
    assert cells(ex) == [shown]


def test_text_cells_go_through_the_text_section():
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s" s="1"><v>1</v></c></row>'
    ex = extract("t.xlsx", workbook(rows, formats={164: '0;-0;0;"Code: "@'}, xfs=[164], shared=["H", "AB-7"]))
    assert cells(ex) == ["Code: AB-7"]


@pytest.mark.parametrize("date1904, shown", [(False, "2025-03-14"), (True, "2029-03-15")])
def test_date_system_comes_from_workbook_xml(date1904, shown):
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" s="1"><v>45730</v></c></row>'
    ex = extract("d.xlsx", workbook(rows, formats={164: "yyyy-mm-dd"}, xfs=[164], shared=["Datum"], date1904=date1904))
    assert cells(ex) == [shown]


@contextmanager
def deadline(seconds: int):
    """Fail instead of hanging (or swapping) if the extractor falls back into a dense grid."""
    def fail(*_):
        raise TimeoutError(f"extraction took over {seconds} s; cost no longer follows the cells present")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_far_away_cells_cost_what_they_hold():
    """Two cells per row, A and XFD (column 16,384), in 100,000 rows: a few KB zipped.

    A dense grid would hold 1.6 billion empty strings; the reader keeps the
    two values and one gap of at most MAX_GAP columns per row.
    """
    data = workbook('<row><c r="A1"><v>1</v></c><c r="XFD1"><v>2</v></c></row>' * 100_000)
    assert len(data) < 20_000
    with deadline(60):
        ex = extract("wide.xlsx", data)
    rows = cells(ex)
    assert len(rows) == 99_999 and ex.units[-1].location["rows"][1] == 100_000
    assert rows[0] == "1" + " | " * (MAX_GAP + 1) + "2"
    assert sum(len(u.text) for u in ex.units) < 100_000 * (MAX_GAP * 3 + 10)


def test_one_long_shared_string_repeated_everywhere_is_capped():
    """A 1 MB shared string (compresses to ~1 KB) in 100,000 cells would make 100 GB of text.

    Excel itself stops a cell at 32,767 characters; the workbook's text stops at
    MAX_TEXT with a warning; and the header row, repeated in every passage, is cut short.
    """
    data = workbook('<row><c r="A1" t="s"><v>0</v></c></row>' * 100_000, shared=["x" * 1_000_000])
    assert len(data) < 30_000
    with deadline(60):
        ex = extract("sst.xlsx", data)
        chunks = chunk_units("s", ex.units)
    assert max(len(r) for r in cells(ex)) == MAX_CELL
    assert sum(len(u.text) for u in ex.units) <= MAX_TEXT + MAX_CELL
    assert max(len(u.prefix) for u in ex.units) <= MAX_HEADER + len(" …\n")
    assert sum(len(c.text) for c in chunks) < 2 * MAX_TEXT
    assert any("more text than Quire reads" in w for w in ex.warnings)
