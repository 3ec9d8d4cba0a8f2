"""Excel .xlsx read straight from its XML parts (no openpyxl in the browser).

Each sheet becomes units of 20 rows headed by ``[Sheet: name]`` and the
sheet's first non-empty row; row numbers are the sheet's own (as Excel shows
them), so ``{"sheet": "Sales", "rows": [2, 21]}`` points at real cells.

>>> column_index("AB")
27
"""

from __future__ import annotations

import re

from quire.extract.base import ExtractError, Limits, SafeZip, local, rel_id, relationships
from quire.extract.csvfile import row_units
from quire.model import Extraction

_CELL_REF = re.compile(r"([A-Z]+)(\d+)")
MAX_COLUMNS = 16_384  # Excel's own limit; a larger ref is a broken or hostile file


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


def _number(value: str) -> str:
    """'3.0' -> '3', '0.1' stays; other text unchanged."""
    try:
        f = float(value)
    except ValueError:
        return value
    return str(int(f)) if f.is_integer() and abs(f) < 1e15 else value


def _cell_value(c, shared: list[str]) -> str:
    kind = c.get("t", "n")
    if kind == "inlineStr":
        return next((_text_of(ch) for ch in c if local(ch.tag) == "is"), "")
    v = next((ch.text or "" for ch in c if local(ch.tag) == "v"), "")
    if kind == "s":
        try:
            return shared[int(v)]
        except (ValueError, IndexError):
            return ""
    if kind == "b":
        return "TRUE" if v == "1" else "FALSE"
    if kind in ("str", "e"):
        return v
    return _number(v)


def _sheet_rows(root, shared: list[str]) -> list[tuple[int, list[str]]]:
    rows = []
    for sheet_data in (el for el in root if local(el.tag) == "sheetData"):
        for r_index, row in enumerate((el for el in sheet_data if local(el.tag) == "row"), start=1):
            number = int(row.get("r") or (rows[-1][0] + 1 if rows else r_index))
            cells: list[str] = []
            for c in row:
                if local(c.tag) != "c":
                    continue
                m = _CELL_REF.match(c.get("r", ""))
                col = column_index(m.group(1)) if m else len(cells)
                if col >= MAX_COLUMNS:
                    raise ExtractError("this Excel file is damaged (a cell lies outside the sheet)")
                value = _cell_value(c, shared)
                if value:
                    cells.extend([""] * (col + 1 - len(cells)))
                    cells[col] = value
            rows.append((number, cells))
    return rows


def extract_xlsx(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "Excel", limits)
    workbook = z.xml("xl/workbook.xml")
    if workbook is None:
        raise ExtractError("this Excel file is damaged (xl/workbook.xml is missing); is it really an .xlsx?")
    sst = z.xml("xl/sharedStrings.xml")
    shared = [_text_of(si) for si in sst] if sst is not None else []
    rels = relationships(z, "xl/workbook.xml")
    units, names = [], []
    for sheet in workbook.iter():
        if local(sheet.tag) != "sheet":
            continue
        sheet_name = sheet.get("name", f"Sheet{len(names) + 1}")
        names.append(sheet_name)
        target = rels.get(rel_id(sheet), ("", ""))[1]
        root = z.xml(target) if target else None
        if root is None:  # chart sheets and dialog sheets have no cells
            continue
        units += row_units(_sheet_rows(root, shared), f"[Sheet: {sheet_name}]\n", {"sheet": sheet_name})
    return Extraction(kind="xlsx", units=units, meta={"sheets": names})
