"""Tables of contents: find them so study tools skip them, while search still finds them.

A TOC line names a chapter and the page it starts on, often with dot leaders:

    1.2 Metrische Räume . . . . . . . . . . 6
    2 Mannigfaltigkeiten und Simplizialkomplexe 24

Taken as content, such lines become chapters, flashcards and quiz questions
that merely repeat the real headings further on.  ``toc_lines`` is a pure
function over page texts; the extractors mark what it finds with ``flag``
(``"toc"`` in ``unit.flags`` and ``location["toc"] = True``, which every
chunk of the unit inherits), and the study generators leave such passages
out.

A page is a TOC page when it
- carries a TOC title in its first lines ("Inhaltsverzeichnis", "Contents",
  ...) and at least three entries, or continues a TOC page with one;
- or consists mostly (half or more, at least five) of entry lines;
- or follows a TOC page and more than half its lines are entries.
Elsewhere, three or more consecutive dot-leader lines (a list of figures
inside a chapter page) are TOC lines.

>>> pages = ["Contents\\n1 Intro . . . . 1\\n2 Methods . . . 4\\n2.1 Data . . . 5", "1 Intro\\nText."]
>>> toc_lines(pages)
[{0, 1, 2, 3}, set()]
"""

from __future__ import annotations

import re

from quire.model import Unit

_TITLES = re.compile(
    r"^(?:\d+\s+|[ivxlc]+\s+)?(?:table of contents|contents|inhaltsverzeichnis|inhalt|"
    r"table des matières|sommaire|índice|indice|sumario|inhoudsopgave|inhoud|spis treści|"
    r"list of (?:figures|tables)|abbildungsverzeichnis|tabellenverzeichnis)(?:\s+[ivxlc\d]+)?$",
    re.I,
)
_PAGE = r"(?:\d{1,4}|[ivxlc]{1,6})"
# "Title . . . . 12", "Title ....... 12", "Title …… 12"
_LEADER = re.compile(rf"^\S.*?(?:\s?\.){{3,}}\s*{_PAGE}$|^\S.*?…+\s*{_PAGE}$", re.I)
# "2.1 Title 24", "A.3 Title 101", "Chapter 4 Title 64"; the number is a section number, not a year
_NUMBERED = re.compile(
    rf"^(?:(?:\d{{1,2}}|[A-Z])(?:\.\d{{1,2}})*\.?|(?:chapter|kapitel|part|teil)\s+\d+)\s+\D.*\s{_PAGE}$", re.I)
# "Stichwortverzeichnis 111": only counts on a page already known to be a TOC
_PLAIN = re.compile(r"^[^\W\d].{1,80}\s\d{1,4}$")
MIN_ENTRIES = 5  # a page with fewer entry lines and no TOC title is ordinary text
MIN_RUN = 3  # consecutive dot-leader lines that make a TOC block on an ordinary page


def is_entry(line: str) -> bool:
    """Does a line look like a TOC entry (title, then the page it starts on)?

    >>> is_entry("1.2 Metrische Räume . . . . . 6"), is_entry("In 1990 there were 12")
    (True, False)
    """
    line = line.strip()
    return bool(_LEADER.match(line) or _NUMBERED.match(line))


def _title_at_top(lines: list[str]) -> bool:
    return any(_TITLES.match(line.strip()) for line in lines[:3])


def toc_lines(pages: list[str]) -> list[set[int]]:
    """Per page, the indexes (into ``page.split("\\n")``) of its TOC lines."""
    out: list[set[int]] = []
    previous_toc = False
    for text in pages:
        lines = text.split("\n")
        filled = [i for i, line in enumerate(lines) if line.strip()]
        entries = [i for i in filled if is_entry(lines[i])]
        titled = _title_at_top([lines[i] for i in filled])
        loose = [i for i in filled if _PLAIN.match(lines[i].strip())] if titled or previous_toc else []
        count = len(set(entries) | set(loose))
        toc_page = bool(filled) and (
            (titled and (len(entries) >= MIN_RUN or (previous_toc and count >= 1)))
            or (len(entries) >= MIN_ENTRIES and 2 * len(entries) >= len(filled))
            or (previous_toc and count >= 1 and 2 * count > len(filled))
        )
        if toc_page:
            out.append(set(filled))
        else:
            out.append(_leader_runs(lines))
        previous_toc = toc_page
    return out


def _leader_runs(lines: list[str]) -> set[int]:
    found, run = set(), []
    for i, line in enumerate(lines + [""]):
        if line.strip() and _LEADER.match(line.strip()):
            run.append(i)
            continue
        if len(run) >= MIN_RUN:
            found.update(run)
        run = []
    return found


def flag(unit: Unit) -> Unit:
    """Mark a unit (and so every chunk cut from it) as table of contents."""
    if "toc" not in unit.flags:
        unit.flags.append("toc")
    unit.location["toc"] = True
    return unit


def mark_pages(units: list[Unit]) -> list[Unit]:
    """Page units with TOC pages flagged; a page with a TOC block inside is split in two.

    The TOC part follows the rest of its page and keeps the page number,
    so a search hit in it still cites the right page.
    """
    found = toc_lines([u.text for u in units])
    out = []
    for unit, toc in zip(units, found):
        lines = unit.text.split("\n")
        rest = "\n".join(line for i, line in enumerate(lines) if i not in toc).strip()
        if not toc:
            out.append(unit)
        elif not rest:
            out.append(flag(unit))
        else:
            out.append(Unit(rest, dict(unit.location), unit.prefix, list(unit.flags)))
            part = "\n".join(line for i, line in enumerate(lines) if i in toc)
            out.append(flag(Unit(part, dict(unit.location), unit.prefix, list(unit.flags))))
    return out
