"""Excel .xlsx read straight from its XML parts (no openpyxl in the browser).

Each sheet becomes units of 20 rows headed by ``[Sheet: name]`` and the
sheet's first non-empty row; row numbers are the sheet's own (as Excel shows
them), so ``{"sheet": "Sales", "rows": [2, 21]}`` points at real cells.
Numbers are shown through their cell's number format (``numfmt``), so a
date reads 3/14/2025 rather than 45730 and a share 25% rather than 0.25.

Cost follows the cells actually present: a cell at XFD1048576 or a huge
``<dimension ref>`` creates no dense grid (a run of empty columns is
written as one gap), and the text a workbook may produce is capped, since
one long shared string referenced by a million cells would otherwise
multiply into gigabytes.

>>> column_index("AB")
27
"""

from __future__ import annotations

import re

from quire.extract.base import ExtractError, Limits, SafeZip, attr, local, rel_id, relationships
from quire.extract.csvfile import row_units
from quire.extract.numfmt import builtin_code, general, render
from quire.model import Extraction

_CELL_REF = re.compile(r"([A-Z]+)(\d+)")
MAX_COLUMNS = 16_384  # Excel's own limit; a larger ref is a broken or hostile file
MAX_GAP = 20  # empty columns kept between two cells; wider gaps collapse so cost follows cells present
MAX_TEXT = 50_000_000  # characters of cell text per workbook; beyond this the rest is not read
MAX_CELL = 32_767  # Excel's own limit on the characters in one cell
MAX_HEADER = 500  # characters of the header row repeated at the head of every passage


def column_index(letters: str) -> int:
    """'A' -> 0, 'Z' -> 25, 'AA' -> 26."""
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def _text_of(el) -> str:
    """Concatenated <t> runs of a shared or inline string, skipping phonetic hints (<rPh>)."""
    parts = []
    for child in el:
        name = local(child.tag)
        if name == "t":
            parts.append(child.text or "")
        elif name == "r":
            parts.extend(t.text or "" for t in child if local(t.tag) == "t")
    return "".join(parts)


class Book:
    """What every cell needs from the workbook: shared strings, formats, date system."""

    def __init__(self, z: SafeZip, workbook):
        sst = z.xml("xl/sharedStrings.xml")
        self.shared = [_text_of(si) for si in sst] if sst is not None else []
        pr = next((el for el in workbook.iter() if local(el.tag) == "workbookPr"), None)
        self.date1904 = pr is not None and (attr(pr, "date1904") or "").lower() in ("1", "true")
        self.formats = _cell_formats(z.xml("xl/styles.xml"))
        self.budget = MAX_TEXT

    def value(self, c) -> str:
        kind = c.get("t", "n")
        if kind == "inlineStr":
            return self._text(next((_text_of(ch) for ch in c if local(ch.tag) == "is"), ""), c)
        v = next((ch.text or "" for ch in c if local(ch.tag) == "v"), "")
        if kind == "s":
            try:
                return self._text(self.shared[int(v)], c)
            except (ValueError, IndexError):
                return ""
        if kind == "b":
            return "TRUE" if v == "1" else "FALSE"
        if kind in ("str", "e", "d"):
            return self._text(v, c)
        try:
            number = float(v)
        except ValueError:
            return v
        code = self._code(c)
        return render(number, code, self.date1904) if code else general(number)

    def _code(self, c) -> str | None:
        try:
            return self.formats[int(c.get("s") or 0)]
        except (ValueError, IndexError):
            return None

    def _text(self, text: str, c) -> str:
        code = self._code(c)
        return render(text, code) if code else text  # only a text section ("@") changes text


def _cell_formats(styles) -> list[str | None]:
    """Per cell style index (``s=``): its number format code, None for General."""
    if styles is None:
        return []
    custom = {}
    for el in styles.iter():
        if local(el.tag) == "numFmt":
            try:
                custom[int(attr(el, "numFmtId") or -1)] = attr(el, "formatCode") or "General"
            except ValueError:
                continue
    xfs = next((el for el in styles.iter() if local(el.tag) == "cellXfs"), None)
    out = []
    for xf in xfs if xfs is not None else ():
        try:
            fid = int(attr(xf, "numFmtId") or 0)
        except ValueError:
            fid = 0
        code = custom.get(fid) or builtin_code(fid)
        out.append(None if code.lower() == "general" else code)
    return out


def _sheet_rows(root, book: Book) -> list[tuple[int, list[str]]]:
    """(row number, cells) for rows that hold something; at most MAX_GAP empties between cells."""
    rows = []
    for sheet_data in (el for el in root if local(el.tag) == "sheetData"):
        number = 0
        for row in (el for el in sheet_data if local(el.tag) == "row"):
            try:
                number = int(row.get("r") or number + 1)
            except ValueError:
                number += 1
            cells: list[str] = []
            last = -1
            for c in row:
                if local(c.tag) != "c":
                    continue
                m = _CELL_REF.match(c.get("r", ""))
                col = column_index(m.group(1)) if m else last + 1
                if col >= MAX_COLUMNS:
                    raise ExtractError("this Excel file is damaged (a cell lies outside the sheet)")
                value = book.value(c)[:MAX_CELL]
                if value:
                    cells.extend([""] * min(max(0, col - last - 1), MAX_GAP))
                    cells.append(value)
                    book.budget -= len(value)
                last = max(last, col)
            if cells:
                rows.append((number, cells))
            if book.budget < 0:
                break
    return rows


def extract_xlsx(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "Excel", limits)
    workbook = z.xml("xl/workbook.xml")
    if workbook is None:
        raise ExtractError("this Excel file is damaged (xl/workbook.xml is missing); is it really an .xlsx?")
    book = Book(z, workbook)
    rels = relationships(z, "xl/workbook.xml")
    units, names, warnings = [], [], []
    for sheet in workbook.iter():
        if local(sheet.tag) != "sheet":
            continue
        sheet_name = sheet.get("name", f"Sheet{len(names) + 1}")
        names.append(sheet_name)
        target = rels.get(rel_id(sheet), ("", ""))[1]
        root = z.xml(target) if target else None
        if root is None:  # chart sheets and dialog sheets have no cells
            continue
        for unit in row_units(_sheet_rows(root, book), f"[Sheet: {sheet_name}]\n", {"sheet": sheet_name}):
            if len(unit.prefix) > MAX_HEADER:  # every chunk repeats the prefix: keep it short
                unit.prefix = unit.prefix[:MAX_HEADER].rstrip() + " …\n"
            units.append(unit)
        if book.budget < 0 and units:
            warnings.append(f"this workbook holds more text than Quire reads ({MAX_TEXT // 1_000_000} million "
                            f"characters); it was read up to sheet {sheet_name!r}, row {units[-1].location['rows'][1]}")
            break
    return Extraction(kind="xlsx", units=units, meta={"sheets": names}, warnings=warnings)
