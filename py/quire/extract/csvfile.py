"""CSV/TSV: rows in groups of 20, each unit headed by the header row.

Row numbers count records the way a spreadsheet shows them: the header is
row 1, so the first data row is row 2 and a unit's location is
``{"rows": [2, 21]}``.  (A quoted field spanning lines is still one row.)

>>> ex = extract_csv(b"name,age\\nAda,36\\nAlan,41\\n", "p.csv")
>>> ex.units[0].prefix, ex.units[0].text, ex.units[0].location
('name | age\\n', 'Ada | 36\\nAlan | 41', {'rows': [2, 3]})
"""

from __future__ import annotations

import csv
import io

from quire.extract.base import ExtractError, decode_text
from quire.model import Extraction, Unit

ROWS_PER_UNIT = 20  # small enough that a unit is about one chunk for typical tables
HEADER_MAX = 300  # characters of the header row repeated in each unit; a 10,000-column header is cut
_DELIMITERS = ",;\t|"


def row_text(cells: list[str]) -> str:
    """Cells joined with ' | ' after dropping trailing empties: ['a', '', 'b', ''] -> 'a |  | b'."""
    cells = [" ".join(str(c).split()) for c in cells]
    while cells and not cells[-1]:
        cells.pop()
    return " | ".join(cells)


def row_units(rows: list[tuple[int, list[str]]], head: str = "", location: dict | None = None) -> list[Unit]:
    """Group (row number, cells) pairs; the first non-empty row is the header.

    The header is repeated in every unit's prefix so that a chunk cut from
    row 900 still says what its columns mean; a very wide one is cut to
    ``HEADER_MAX`` characters, the column count said at its end.
    """
    rows = [(n, text) for n, cells in rows if (text := row_text(cells))]
    if not rows:
        return []
    header = short_header(rows[0][1])
    body = rows[1:] or rows[:1]  # a one-row table is its own content
    units = []
    for i in range(0, len(body), ROWS_PER_UNIT):
        group = body[i : i + ROWS_PER_UNIT]
        loc = dict(location or {}, rows=[group[0][0], group[-1][0]])
        units.append(Unit(text="\n".join(t for _, t in group), location=loc, prefix=f"{head}{header}\n"))
    return units


def short_header(header: str) -> str:
    """'a | b | c' stays; a header past HEADER_MAX characters is cut at a cell boundary.

    >>> short_header(" | ".join(f"col{n}" for n in range(1000)))[-40:]
    'col33 | col34 | col35 | … (1000 columns)'
    """
    if len(header) <= HEADER_MAX:
        return header
    cells = header.split(" | ")
    tail = f" | … ({len(cells)} columns)"
    kept = header[: HEADER_MAX - len(tail)].rsplit(" | ", 1)[0]
    return kept + tail


def sniff_delimiter(text: str, name: str) -> str:
    if name.lower().endswith((".tsv", ".tab")):
        return "\t"
    sample = "\n".join(text[:20_000].split("\n")[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        # The sniffer gives up on one-column files and ragged rows; count instead.
        first = sample.split("\n", 1)[0]
        return max(_DELIMITERS, key=first.count) if any(d in first for d in _DELIMITERS) else ","


def extract_csv(data: bytes, name: str) -> Extraction:
    text = decode_text(data, name)
    delimiter = sniff_delimiter(text, name)
    try:
        records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as e:
        raise ExtractError(f"{name} is not a readable CSV file ({e})") from e
    units = row_units(list(enumerate(records, start=1)))
    return Extraction(kind="csv", units=units, meta={"rows": len(records), "delimiter": delimiter})
