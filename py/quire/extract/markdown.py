"""Markdown: one unit per heading section, the heading path as breadcrumb.

>>> ex = extract_markdown(b"# Setup\\nintro\\n## Install\\npip install x\\n", "r.md")
>>> [(u.prefix, u.text) for u in ex.units]
[('[Section: Setup]\\n', 'intro'), ('[Section: Setup > Install]\\n', 'pip install x')]
"""

from __future__ import annotations

import re

from quire.extract.base import Outline, decode_text
from quire.model import Extraction

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_SETEXT = re.compile(r"^(?: {4}|\t| {0,3}(?:[-*+>]|\d+[.)])(?:\s|$))")  # code, list, quote
_FRONT_MATTER = re.compile(r"\A---\n.*?\n(?:---|\.\.\.)\n", re.S)


def extract_markdown(data: bytes, name: str) -> Extraction:
    text = decode_text(data, name)
    text = _FRONT_MATTER.sub("", text, count=1)  # YAML metadata is not prose
    outline = Outline()
    lines = text.split("\n")
    fence = ""
    title = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence:
            # Inside a code block a '#' line is a comment, not a heading.
            if line.strip().startswith(fence):
                fence = ""
            outline.text(line)
        elif m := _FENCE.match(line):
            fence = m.group(1)[0] * 3
            outline.text(line)
        elif m := _ATX.match(line):
            level, heading = len(m.group(1)), m.group(2) or ""
            outline.heading(level, _plain(heading))
            title = title or (_plain(heading) if level == 1 else None)
        elif (
            i + 1 < len(lines)
            and line.strip()
            and not _NOT_SETEXT.match(line)
            and _SETEXT.match(lines[i + 1])
            and _starts_paragraph(lines, i)
        ):
            level = 1 if lines[i + 1].strip()[0] == "=" else 2
            outline.heading(level, _plain(line))
            title = title or (_plain(line) if level == 1 else None)
            i += 1
        else:
            outline.text(line)
        i += 1
    meta = {"title": title} if title else {}
    return Extraction(kind="markdown", units=outline.units(), meta=meta)


def _starts_paragraph(lines: list[str], i: int) -> bool:
    # Only one-line paragraphs become setext headings here; a '---' under a
    # longer paragraph is far more often a thematic break in real notes.
    return i == 0 or not lines[i - 1].strip() or bool(_ATX.match(lines[i - 1]))


def _plain(heading: str) -> str:
    """Drop inline markup from a heading: '**Install** `pip`' -> 'Install pip'."""
    heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[*_`]+", "", heading).strip()
