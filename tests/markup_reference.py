"""Reference texts of other converters, read without Quire's own code.

Each reader turns a reference output into events in document order:
``("h", heading text)`` and ``("t", text)``; Pandoc's notes come separately.
The tests compare Quire's passages against these: which words are there,
where each passage sits, and whether every note made it.
"""

from __future__ import annotations

import html
import re
from collections import Counter

WORD = re.compile(r"[^\W_]+")  # "to_escape" and "to\_escape" both read as two words


def words(text: str) -> list[str]:
    return [w.casefold() for w in WORD.findall(text)]


def recall(reference: list[str], got: list[str]) -> float:
    """Share of the reference's words (with repeats) that Quire's text has.

    Where the reference splits what Quire keeps as one word (docling writes
    H<sub>2</sub>O as "H 2 O"), the pieces count as found when joined with a
    neighbour they make one of Quire's words.
    """
    have, whole = Counter(got), set(got)
    found = 0
    for i, w in enumerate(reference):
        if have[w] > 0:
            have[w] -= 1
            found += 1
        elif any("".join(reference[a:b]) in whole for a in range(max(0, i - 2), i + 1) for b in range(i + 1, i + 4) if b - a > 1):
            found += 1
    return found / max(1, len(reference))


# ---------------------------------------------------------------- docling's Markdown export


def docling_markdown(text: str) -> list[tuple[str, str]]:
    """Docling's .md ground truth: '#' lines are headings; link targets and comments are not text."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\]\([^)\s]*\)", "] ", text)
    events = []
    for line in text.split("\n"):
        if m := re.match(r"^#{1,6}\s+(.*)$", line):
            events.append(("h", html.unescape(m.group(1).strip())))
        elif line.startswith("|"):
            # Docling copies a cell into every column it spans; Quire writes it once.
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            merged = [c for i, c in enumerate(cells) if i == 0 or c != cells[i - 1]]
            events.append(("t", html.unescape(" | ".join(merged))))
        elif line.strip():
            events.append(("t", html.unescape(line)))
    return events


# ---------------------------------------------------------------- Pandoc's native AST

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\](),]|[A-Za-z][\w.]*|-?\d+(?:\.\d+)?')


def _haskell_string(token: str) -> str:
    body = token[1:-1]
    body = re.sub(r"\\(\d+)", lambda m: chr(int(m.group(1))), body)
    body = re.sub(r"\\&", "", body)
    return body.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def _parse_native(text: str):
    """Pandoc's `native` output -> nested lists; a constructor with arguments is a list headed by its name."""
    body = re.search(r"^  \[", text, re.M)  # the blocks, after the metadata record
    tokens = _TOKEN.findall(text[body.start() :] if body else text)
    pos = 1 if tokens[:1] == ["["] else 0

    def sequence(close: str) -> list:
        nonlocal pos
        items, current = [], []
        while tokens[pos] != close:
            token = tokens[pos]
            pos += 1
            if token == ",":
                items.append(current)
                current = []
            elif token in "[(":
                current.append(("list" if token == "[" else "tuple", sequence("]" if token == "[" else ")")))
            else:
                current.append(("str", _haskell_string(token)) if token.startswith('"') else ("name", token))
        pos += 1
        if current:
            items.append(current)
        return items

    return sequence("]")


def pandoc_native(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(events, notes) from a Pandoc native document; math is left out (MathML aside)."""
    events: list[tuple[str, str]] = []
    notes: list[str] = []

    def inline_text(args) -> str:
        out: list[str] = []
        for arg in args:
            element([arg], out, None)
        return "".join(out)

    def element(item, out, sink) -> None:
        if not item:
            return
        kind, value = item[0]
        if kind in ("list", "tuple"):
            for sub in value:
                element(sub, out, sink)
            return
        if kind == "str":
            return  # attributes, URLs, formats: not text
        args = item[1:]
        if value == "Str":
            out.append(args[0][1])
        elif value in ("Space", "SoftBreak", "LineBreak"):
            out.append(" ")
        elif value in ("Code", "CodeBlock"):
            out.append(f" {args[-1][1]} " if value == "CodeBlock" else args[-1][1])
        elif value in ("RawInline", "RawBlock"):
            return  # markup, not text
        elif value == "Math":
            out.append(" ")
        elif value == "Note":
            notes.append(" ".join(inline_text(args).split()))
        elif value == "Header":
            flush(out, sink)
            events.append(("h", " ".join(inline_text(args[2:]).split())))
        elif value in ("Link", "Image", "Span"):
            for arg in args[1:2] if value != "Span" else args[1:]:
                element([arg], out, sink)
        else:
            block = value in ("Para", "Plain", "Div", "LineBlock", "BlockQuote", "BulletList", "OrderedList",
                              "Table", "Cell", "Row", "Figure", "DefinitionList")
            if block:
                out.append(" ")
            for arg in args:
                element([arg], out, sink)
            if block:
                out.append(" ")

    def flush(out, sink) -> None:
        if sink is events and "".join(out).strip():
            events.append(("t", " ".join("".join(out).split())))
        out.clear()

    out: list[str] = []
    for block in _parse_native(text):
        element(block, out, events)
        flush(out, events)
    return events, notes


# ---------------------------------------------------------------- markdown-it fixtures


def markdown_it_cases(text: str) -> list[tuple[int, str, str]]:
    """(line, markdown, expected HTML) for every example in a markdown-it fixture file."""
    lines = text.split("\n")
    cases, i = [], 0
    while i < len(lines):
        if lines[i] == ".":
            j = lines.index(".", i + 1)
            k = lines.index(".", j + 1)
            cases.append((i + 1, "\n".join(lines[i + 1 : j]), "\n".join(lines[j + 1 : k])))
            i = k + 1
        else:
            i += 1
    return cases


def html_text(markup: str) -> str:
    """Text of expected HTML by stripping tags: no shared code with Quire's HTML reader."""
    markup = re.sub(r"<!--.*?-->", " ", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))
