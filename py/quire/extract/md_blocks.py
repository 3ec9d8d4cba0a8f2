"""Markdown block structure, CommonMark-style, as a list of simple blocks.

Blocks are tuples: ``("heading", level, raw)``, ``("para", raw)``,
``("code", text)``, ``("table", [[raw cell, ...], ...])``, ``("html", raw)``,
``("quote", blocks)``, ``("list", [(number or None, blocks), ...])`` and
``("note", label)`` where a footnote was defined.  Link reference
definitions and footnote bodies are collected into ``Definitions``.

>>> d = Definitions(); parse_blocks("# Hi\\n\\n- a\\n- b\\n\\n[x]: http://x".split("\\n"), d)
[('heading', 1, 'Hi'), ('list', [(None, [('para', 'a')]), (None, [('para', 'b')])])]
>>> d.links
{'x'}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from quire.extract.md_inline import label_key

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_ATTRIBUTES = re.compile(r"\s*\{[#.][^{}]*\}\s*$")  # Pandoc heading attributes {#id .class}
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}> ?")
_ITEM = re.compile(r"^( {0,3})([-+*]|(\d{1,9})[.)])(?:([ \t]+)(.*)|$)")
_NOTE_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]?(.*)$")
_LINK_DEF = re.compile(
    r"""^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:\s*(?:<[^<>\n]*>|[^\s<]\S*)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$"""
)
# HTML blocks that run to an end marker across blank lines: <script>, <pre>, comments, ...
_HTML_END = [(re.compile(r"^ {0,3}<(?:script|pre|style|textarea)(?:\s|>|$)", re.I), re.compile(r"</(?:script|pre|style|textarea)>", re.I)),
             (re.compile(r"^ {0,3}<!--"), re.compile(r"-->")), (re.compile(r"^ {0,3}<\?"), re.compile(r"\?>")),
             (re.compile(r"^ {0,3}<![A-Z]"), re.compile(r">")), (re.compile(r"^ {0,3}<!\[CDATA\["), re.compile(r"\]\]>"))]
# CommonMark HTML blocks: block-level tags (type 6) start one whatever follows them on
# the line; any other tag (type 7) only when it stands alone on its line.
_BLOCK_TAGS = ("address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|"
               "div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|"
               "legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|"
               "table|tbody|td|tfoot|th|thead|title|tr|track|ul|script|pre|style|textarea")
_HTML_START = re.compile(
    rf"^ {{0,3}}(?:<(?:!--|\?|![A-Z]|!\[CDATA\[)|</?(?:{_BLOCK_TAGS})(?:[\s/>]|$)"
    r"|(?:<[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|</[A-Za-z][\w-]*\s*>)\s*$)",
    re.I,
)
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_DEFINITION = re.compile(r"^ {0,3}[:~][ \t]+")
_GRID_RULE = re.compile(r"^\s*\+(?:[-=:]+\+)+\s*$")


@dataclass
class Definitions:
    links: set[str] = field(default_factory=set)
    notes: dict[str, list] = field(default_factory=dict)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _starts_block(line: str) -> bool:
    """Whether a line can interrupt a paragraph (and so is no lazy continuation)."""
    if _ATX.match(line) or _FENCE.match(line) or _RULE.match(line) or _QUOTE.match(line):
        return True
    m = _ITEM.match(line)
    return bool(m and m.group(5) and (m.group(3) is None or m.group(3) == "1"))


def split_cells(row: str) -> list[str]:
    """'| a | b \\| c |' -> ['a', 'b \\| c']: unescaped pipes separate cells."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)]


def _grid_table(lines: list[str]) -> list[list[str]]:
    """Pandoc grid table -> rows of cells; a cell's lines are joined."""
    rule = lines[0].strip()
    cuts = [i for i, ch in enumerate(rule) if ch == "+"]
    rows, current = [], None
    for line in lines[1:]:
        line = line.strip()
        if _GRID_RULE.match(line):
            if current and any(current):
                rows.append([" ".join(" ".join(cell).split()) for cell in current])
            current = None
            continue
        current = current or [[] for _ in cuts[1:]]
        for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
            current[k].append(line[a + 1 : b].strip(" |"))
    return rows


def _link_definition(lines: list[str], i: int, defs: Definitions) -> int:
    """Lines taken by a link reference definition at line i (its title may be on the next lines)."""
    for size in (3, 2, 1):
        block = lines[i : i + size]
        if len(block) == size and all(x.strip() for x in block) and (m := _LINK_DEF.match(" ".join(block))):
            defs.links.add(label_key(m.group(1)))
            return size
    return 0


MAX_NESTING = 24  # quotes and lists deeper than this are read as plain paragraphs


def parse_blocks(lines: list[str], defs: Definitions, depth: int = 0) -> list:
    if depth > MAX_NESTING:
        return [("para", "\n".join(line.strip() for line in lines if line.strip()))]
    blocks: list = []
    para: list[str] = []
    i = 0

    def close_para() -> None:
        if para:
            blocks.append(("para", "\n".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line[: len(line) - len(line.lstrip(" \t"))].count("\t"):
            line = line.expandtabs(4)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not line.strip():
            close_para()
            i += 1
        elif para and (m := _SETEXT.match(line)) and (m.group(1)[0] == "=" or len(para) == 1):
            # A '---' under a longer paragraph is far more often a rule in real notes.
            blocks.append(("heading", 1 if m.group(1)[0] == "=" else 2, "\n".join(para)))
            para.clear()
            i += 1
        elif _indent(line) >= 4 and not para:
            body = []
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i].expandtabs(4)) >= 4):
                body.append(lines[i].expandtabs(4)[4:])
                i += 1
            blocks.append(("code", "\n".join(body).strip("\n")))
        elif (m := _FENCE.match(line)) and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            close_para()
            fence, body, i = m.group(2), [], i + 1
            while i < len(lines) and not (lines[i].strip().startswith(fence) and not lines[i].strip().strip(fence[0])):
                body.append(lines[i][min(len(m.group(1)), _indent(lines[i])):])
                i += 1
            blocks.append(("code", "\n".join(body)))
            i += 1
        elif m := _ATX.match(line):
            close_para()
            blocks.append(("heading", len(m.group(1)), _ATTRIBUTES.sub("", m.group(2) or "")))
            i += 1
        elif _RULE.match(line):
            close_para()
            i += 1
        elif _QUOTE.match(line):
            close_para()
            body = []
            while i < len(lines) and lines[i].strip():
                if _QUOTE.match(lines[i]):
                    body.append(_QUOTE.sub("", lines[i], count=1))
                elif body and body[-1].strip() and not _starts_block(lines[i]):
                    body.append(lines[i])  # lazy continuation of the quoted paragraph
                else:
                    break
                i += 1
            blocks.append(("quote", parse_blocks(body, defs, depth + 1)))
        elif (m := _ITEM.match(line)) and not _RULE.match(line) and (not para or _starts_block(line)):
            close_para()
            items, i = _list_items(lines, i, defs, depth)
            blocks.append(("list", items))
        elif not para and (m := _NOTE_DEF.match(line)):
            body, i = [m.group(2)], i + 1
            while i < len(lines):
                if not lines[i].strip() or _indent(lines[i].expandtabs(4)) >= 4:
                    body.append(lines[i].expandtabs(4)[4:])
                elif body[-1].strip() and not _starts_block(lines[i]) and not _NOTE_DEF.match(lines[i]):
                    body.append(lines[i])
                else:
                    break
                i += 1
            defs.notes.setdefault(m.group(1), parse_blocks(body, defs, depth + 1))
            blocks.append(("note", m.group(1)))
        elif not para and (taken := _link_definition(lines, i, defs)):
            i += taken
        elif "|" in line and _DELIMITER_ROW.match(nxt) and "-" in nxt and len(split_cells(line)) == len(split_cells(nxt)):
            close_para()
            rows, i = [split_cells(line)], i + 2
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                rows.append(split_cells(lines[i]))
                i += 1
            blocks.append(("table", rows))
        elif _GRID_RULE.match(line) and not para:
            body = []
            while i < len(lines) and lines[i].strip()[:1] in ("+", "|"):
                body.append(lines[i])
                i += 1
            blocks.append(("table", _grid_table(body)))
        elif _HTML_START.match(line) and not para:
            end = next((end for start, end in _HTML_END if start.match(line)), None)
            body = []
            while i < len(lines) and (end or lines[i].strip()):
                body.append(lines[i])
                i += 1
                if end and end.search(body[-1], 0 if len(body) > 1 else line.index("<") + 2):
                    break
            blocks.append(("html", "\n".join(body)))
        else:
            # A Pandoc definition (": text" under its term) reads as a line of its own.
            para.append(_DEFINITION.sub("", line) if para or blocks else line)
            i += 1
    close_para()
    return blocks


def _list_items(lines: list[str], i: int, defs: Definitions, depth: int) -> tuple[list, int]:
    """Consecutive items of one list starting at line i -> ([(number, blocks)], next line)."""
    first = _ITEM.match(lines[i])
    kind = first.group(2)[-1] if first.group(3) else first.group(2)
    items = []
    while i < len(lines) and (m := _ITEM.match(lines[i].expandtabs(4))) and not _RULE.match(lines[i]):
        if (m.group(2)[-1] if m.group(3) else m.group(2)) != kind:
            break
        spaces = len(m.group(4) or " ")
        width = len(m.group(1)) + len(m.group(2)) + (spaces if spaces <= 4 else 1)
        body, i = [(m.group(5) or "")], i + 1
        while i < len(lines):
            line = lines[i].expandtabs(4) if "\t" in lines[i][:8] else lines[i]
            if not line.strip():
                body.append("")
            elif _indent(line) >= width:
                body.append(line[width:])
            elif body[-1].strip() and not _starts_block(line) and not _ITEM.match(line):
                body.append(line.strip())  # lazy continuation
            else:
                break
            i += 1
        while body and not body[-1].strip():
            body.pop()  # blank lines between items belong to the list, not the item
        number = int(m.group(3)) if m.group(3) else None
        items.append((number, parse_blocks(body, defs, depth + 1)))
        while i < len(lines) and not lines[i].strip() and i + 1 < len(lines) and _ITEM.match(lines[i + 1]):
            i += 1
    return items, i
