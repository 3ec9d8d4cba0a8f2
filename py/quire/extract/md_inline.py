"""Markdown inline syntax -> the text a reader sees.

Link and image text stay, their URLs go; emphasis, strikethrough and code
markers go, the code itself stays; backslash escapes and HTML entities are
resolved; inline HTML tags are dropped; footnote references are replaced by
the note's text (see ``Refs``); ``$math$`` is kept as written.

>>> render_inline("**Read** [the *guide*](https://x.org \\"t\\") \\\\*now\\\\* ~~not~~ `a*b`", Refs())
'Read the guide *now* not a*b'
"""

from __future__ import annotations

import html
import html.entities
import re
from dataclasses import dataclass, field
from typing import Callable

_HOLD = re.compile("\ue000(\\d+)\ue001")  # a piece of finished text, kept out of later rules
_NOTE_GAP = re.compile("(\\S?)\ue002")  # where a note goes: one space before it, unless at a line start
_CODE = re.compile(r"(?<![\\`])(`+)(?!`)(.{1,3000}?)(?<!`)\1(?!`)", re.S)
_MATH = re.compile(r"(?<![\\$\w])\$(?=[^\s$])(.{1,300}?)(?<=\S)\$(?!\d)|\$\$(.{1,3000}?)\$\$", re.S)
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")  # the ";" is required
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_BREAK_TAG = re.compile(r"<br\s*/?>", re.I)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*?)?\s*/?>")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_HARD_BREAK = re.compile(r"(?:\\| {2,})\n")
_INLINE_NOTE = re.compile(r"\^\[([^\[\]]*)\]")  # Pandoc: ^[note text]
_NOTE_REF = re.compile(r"\[\^([^\]\s]+)\]")
_SPAN = re.compile(r"\[([^\[\]]*)\]\{[^{}\n]*\}")  # Pandoc: [text]{.class}
_INLINE_LINK = re.compile(
    r"(!?)\[([^\[\]]*)\]\(\s*(?:<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))*)"
    r"""(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)(?:\{[^{}\n]*\})?"""
)
_REF_LINK = re.compile(r"(!?)\[([^\[\]]*)\]\[([^\[\]]*)\]")
_SHORTCUT = re.compile(r"(!?)\[([^\[\]]+)\](?![(\[:])")
# An emphasis span is at most 500 characters long, so a paragraph full of
# stray asterisks costs linear time, not quadratic.
_EMPHASIS = [
    re.compile(r"~~(?=\S)(.{1,500}?)(?<=\S)~~", re.S),
    re.compile(r"\*\*(?=\S)(.{1,500}?)(?<=\S)\*\*", re.S),
    re.compile(r"(?<!\w)__(?![\s_])(.{1,500}?)(?<![\s_])__(?!\w)", re.S),
    re.compile(r"\*(?=[^\s*])(.{1,500}?)(?<=[^\s*])\*", re.S),
    re.compile(r"\*(?=[^\s*])(\S)\*"),
    re.compile(r"(?<!\w)_(?![\s_])(.{1,500}?)(?<![\s_])_(?!\w)", re.S),  # snake_case is no emphasis
    re.compile(r"(?<!~)~(?=[^\s~])([^\s~]+)~(?!~)"),  # Pandoc subscript H~2~O
    re.compile(r"\^(?=\S)([^\s^\[]+)\^"),  # Pandoc superscript 2^10^
]


def _entity(m: re.Match) -> str:
    known = m.group(0)[1] == "#" or m.group(0)[1:] in html.entities.html5
    return html.unescape(m.group(0)) if known else m.group(0)


def label_key(label: str) -> str:
    """Link labels match case-insensitively with inner whitespace collapsed."""
    return " ".join(label.split()).casefold()


@dataclass
class Refs:
    """Link reference definitions and footnotes of one document.

    ``note`` renders a footnote's text the first time it is referenced and
    returns "" after that (the text is already in the passage).
    """

    links: set[str] = field(default_factory=set)
    note: Callable[[str], str | None] = lambda label: None


def render_inline(text: str, refs: Refs) -> str:
    held: list[str] = []

    def hold(piece: str) -> str:
        held.append(piece)
        return f"\ue000{len(held) - 1}\ue001"

    def code(m: re.Match) -> str:
        body = m.group(2).replace("\n", " ")
        if body.startswith(" ") and body.endswith(" ") and body.strip():
            body = body[1:-1]
        return hold(body)

    def note(label: str) -> str:
        body = refs.note(label)
        return hold(f"\ue002[Note: {body}]") if body else ""

    def link(m: re.Match, label_group: int | None) -> str:
        if label_group is not None:
            label = m.group(label_group) or m.group(2)
            if label_key(label) not in refs.links:
                return m.group(0)
        return m.group(2)

    text = _CODE.sub(code, re.sub("[\ue000-\ue002]", "", text))
    text = _MATH.sub(lambda m: hold(m.group(0)), text)
    text = _HARD_BREAK.sub("\n", text)
    text = _ESCAPE.sub(lambda m: hold(m.group(1)), text)  # before tags: \<b> is text
    text = _AUTOLINK.sub(lambda m: hold(m.group(1)), text)
    text = _COMMENT.sub("", text)
    text = _BREAK_TAG.sub("\n", text)
    text = _TAG.sub("", text)
    text = _INLINE_NOTE.sub(lambda m: hold(f"\ue002[Note: {render_inline(m.group(1), refs)}]"), text)
    text = _NOTE_REF.sub(lambda m: note(m.group(1)), text)
    for _ in range(20):  # innermost brackets first: [![logo](a.png)](b) -> logo
        before = text
        text = _INLINE_LINK.sub(lambda m: link(m, None), text)
        text = _SPAN.sub(r"\1", text)
        text = _REF_LINK.sub(lambda m: link(m, 3), text)
        text = _SHORTCUT.sub(lambda m: link(m, 2), text)
        if text == before:
            break
    for _ in range(20):
        before = text
        for pattern in _EMPHASIS:
            text = pattern.sub(r"\1", text)
        if text == before:
            break
    text = _ENTITY.sub(_entity, text)
    for _ in range(4):  # a held piece can hold another (an escape inside an autolink)
        text = _HOLD.sub(lambda m: held[int(m.group(1))], text)
    text = _NOTE_GAP.sub(lambda m: f"{m.group(1)} " if m.group(1) else "", text)  # "claim.[^1]" -> "claim. [Note: ...]"
    return "\n".join(line.strip() for line in text.split("\n")).strip()
