"""Word's automatic numbering: the "1.2" before a heading, the "a)" before a list item.

The numbers are not in the document text; Word computes them from
``word/numbering.xml``: a paragraph (or its style) names a list (``numId``)
and a level (``ilvl``); the list's abstract definition gives each level a
start value, a format (decimal, letters, roman) and a pattern such as
``%1.%2``.  Counters run per abstract list, and a level restarts whenever a
higher level advances.  Bullets are left out: their "text" is a symbol-font
glyph, not a word.

>>> roman(14), letters(28)
('xiv', 'bb')
"""

from __future__ import annotations

import re

from quire.extract.base import SafeZip, attr, local

_PLACE = re.compile(r"%([1-9])")


def roman(n: int) -> str:
    out = ""
    for value, digits in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                          (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out, n = out + digits, n - value
    return out


def letters(n: int) -> str:
    """Word's letter numbering: a..z, then aa..zz."""
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if n > 0 else ""


_FORMATS = {
    "decimal": str, "decimalZero": lambda n: f"{n:02d}", "lowerLetter": letters,
    "upperLetter": lambda n: letters(n).upper(), "lowerRoman": roman, "upperRoman": lambda n: roman(n).upper(),
}


def _child(el, name: str):
    return next((c for c in el if local(c.tag) == name), None)


def _val(el, name: str) -> str | None:
    found = _child(el, name)
    return attr(found, "val") if found is not None else None


def num_pr(el) -> tuple[str, int] | None:
    """(numId, ilvl) from a <w:pPr> or <w:style>, if it has numbering."""
    ppr = el if local(el.tag) == "pPr" else _child(el, "pPr")
    numpr = _child(ppr, "numPr") if ppr is not None else None
    if numpr is None or _val(numpr, "numId") in (None, "0"):
        return None
    try:
        return _val(numpr, "numId"), int(_val(numpr, "ilvl") or 0)
    except ValueError:
        return None


class Numbering:
    """Counters over one document; ``label(numId, ilvl)`` gives the next label, e.g. '1.2'."""

    def __init__(self, z: SafeZip, style_numbering: dict[str, tuple[str, int]]):
        root = z.xml("word/numbering.xml")
        self.abstract: dict[str, object] = {}
        self.nums: dict[str, str] = {}
        links: dict[str, str] = {}
        for el in root if root is not None else ():
            if local(el.tag) == "abstractNum":
                aid = attr(el, "abstractNumId") or ""
                self.abstract[aid] = el
                if (link := _val(el, "styleLink")) is not None:
                    links[link] = aid
            elif local(el.tag) == "num":
                self.nums[attr(el, "numId") or ""] = _val(el, "abstractNumId") or ""
        # An abstract list that only says numStyleLink="X" borrows the levels of the list style X.
        for aid, el in list(self.abstract.items()):
            if (link := _val(el, "numStyleLink")) is not None:
                target = style_numbering.get(link)
                linked = self.nums.get(target[0]) if target else links.get(link)
                if linked in self.abstract and linked != aid:
                    self.abstract[aid] = self.abstract[linked]
        self.counters: dict[int, list[int]] = {}  # keyed by the abstract definition actually used

    def _level(self, definition, ilvl: int):
        return next((lvl for lvl in definition if local(lvl.tag) == "lvl" and attr(lvl, "ilvl") == str(ilvl)), None)

    def label(self, num_id: str, ilvl: int) -> str:
        definition = self.abstract.get(self.nums.get(num_id, ""))
        if definition is None or not 0 <= ilvl < 9:
            return ""
        levels = [self._level(definition, i) for i in range(9)]
        counts = self.counters.setdefault(id(definition), [0] * 9)
        for i in range(ilvl):  # a deeper item under a level never used yet starts that level
            if counts[i] == 0:
                counts[i] = self._start(levels[i])
        counts[ilvl] = counts[ilvl] + 1 if counts[ilvl] else self._start(levels[ilvl])
        for deeper in range(ilvl + 1, 9):
            counts[deeper] = 0
        lvl = levels[ilvl]
        if lvl is None or (_val(lvl, "numFmt") or "decimal") not in _FORMATS:
            return ""
        pattern = _val(lvl, "lvlText") or ""

        def number(m) -> str:
            k = int(m.group(1)) - 1
            fmt = _val(levels[k], "numFmt") if levels[k] is not None else "decimal"
            return _FORMATS.get(fmt or "decimal", str)(counts[k] or self._start(levels[k]))

        return _PLACE.sub(number, pattern).strip()

    @staticmethod
    def _start(lvl) -> int:
        try:
            return int(_val(lvl, "start") or 1) if lvl is not None else 1
        except ValueError:
            return 1
