"""Markdown: the rendered text, one unit per heading section, the heading path as breadcrumb.

What is indexed is what a reader of the rendered page sees: link text without
its URL, code without fences, tables as ``a | b | c`` rows, no emphasis or
escape characters.  A footnote's text is placed where it is first referenced,
as ``[Note: ...]``; a footnote nobody references stays where it is defined.
A title block (YAML front matter ``title:``/``author:``/``date:`` or Pandoc
``% title`` lines) opens the first passage; other metadata is dropped.

>>> ex = extract_markdown(b"# Setup\\nSee [the guide](http://x.org).\\n## Install\\n`pip install x`\\n", "r.md")
>>> [(u.prefix, u.text) for u in ex.units]
[('[Section: Setup]\\n', 'See the guide.'), ('[Section: Setup > Install]\\n', 'pip install x')]
"""

from __future__ import annotations

import re

from quire.extract.base import decode_text
from quire.extract.htmlfile import fragment_text
from quire.extract.md_blocks import Definitions, parse_blocks
from quire.extract.md_inline import Refs, render_inline
from quire.extract.sections import Sections
from quire.model import Extraction

_YAML = re.compile(r"\A(?:\ufeff)?---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_YAML_KEY = re.compile(r"^([A-Za-z_][\w -]*?)\s*:(?:\s+(.*))?$")
_PANDOC_TITLE = re.compile(r"\A((?:%[^\n]*\n(?:[ \t]+[^\n]*\n)*){1,3})")
_TITLE_KEYS = ("title", "subtitle", "author", "date")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _yaml_title(source: str) -> dict[str, list[str]]:
    """The title/author/date values of simple YAML metadata; other keys are dropped."""
    fields: dict[str, list[str]] = {}
    key, scalar = "", False
    for line in source.split("\n"):
        if (m := _YAML_KEY.match(line)) and not line[:1].isspace():
            key, value = m.group(1).lower(), (m.group(2) or "").strip()
            fields[key], scalar = [], value in ("|", ">", "|-", ">-")
            if value.startswith("[") and value.endswith("]"):
                fields[key] = [_unquote(v) for v in value[1:-1].split(",")]
            elif value and not scalar:
                fields[key] = [_unquote(value)]
        elif key and scalar and line.strip():
            fields[key] = [" ".join([*fields[key], line.strip()])]  # "title: >" and its indented lines
        elif key and line.strip() and line[:1] in (" ", "\t", "-"):
            item = line.strip().removeprefix("- ").strip()
            if (m := _YAML_KEY.match(item)) and m.group(1) != "name":
                continue  # author affiliations and other nested keys
            fields[key].append(_unquote(item.removeprefix("name:")))
    return {k: v for k, v in fields.items() if k in _TITLE_KEYS and any(v)}


def _title_block(text: str) -> tuple[dict[str, list[str]], str]:
    """(title fields, the rest of the document)."""
    if (m := _YAML.match(text)) and _YAML_KEY.match(m.group(1).split("\n")[0]):
        return _yaml_title(m.group(1)), text[m.end():]
    if m := _PANDOC_TITLE.match(text):
        lines = re.split(r"\n(?=%)", m.group(1).strip("\n"))
        values = [" ".join(line.lstrip("%").split()) for line in lines]
        fields = dict(zip(("title", "author", "date"), ([v] for v in values)))
        if "author" in fields:
            fields["author"] = [a.strip() for a in fields["author"][0].split(";")]
        return {k: v for k, v in fields.items() if any(v)}, text[m.end():]
    return {}, text


class _Renderer:
    def __init__(self, defs: Definitions) -> None:
        self.defs = defs
        self.shown: set[str] = set()
        self.refs = Refs(links=defs.links, note=self.note)
        # A breadcrumb stays short: a note referenced in a heading stays where it was defined.
        self.heading_refs = Refs(links=defs.links)

    def note(self, label: str) -> str | None:
        if label not in self.defs.notes:
            return None
        if label in self.shown:
            return ""
        self.shown.add(label)
        return " ".join(self.block(b) for b in self.defs.notes[label]).replace("\n", " ").strip()

    def block(self, block: tuple) -> str:
        kind = block[0]
        if kind == "para":
            return render_inline(block[1], self.refs)
        if kind == "heading":
            return render_inline(block[2], self.refs)
        if kind == "code":
            return block[1]
        if kind == "table":
            return "\n".join(" | ".join(render_inline(cell, self.refs) for cell in row) for row in block[1])
        if kind == "html":
            return fragment_text(block[1])
        if kind == "quote":
            return "\n\n".join(self.block(b) for b in block[1])
        if kind == "list":
            items = []
            for k, (number, blocks) in enumerate(block[1]):
                text = "\n".join(self.block(b) for b in blocks)
                start = block[1][0][0]
                items.append(f"{start + k}. {text}" if number is not None else text)
            return "\n".join(items)
        return ""  # "note": resolved once every reference has been seen


def extract_markdown(data: bytes, name: str) -> Extraction:
    fields, text = _title_block(decode_text(data, name))
    defs = Definitions()
    blocks = parse_blocks(text.split("\n"), defs)
    renderer = _Renderer(defs)
    opening = [render_inline(", ".join(v), renderer.heading_refs) for k in _TITLE_KEYS if (v := fields.get(k))]
    events: list[tuple] = [("text", "\n".join(opening))] if opening else []
    for block in blocks:
        if block[0] == "heading":
            events.append(("heading", block[1], render_inline(block[2], renderer.heading_refs)))
        elif block[0] == "note":
            events.append(block)
        else:
            events.append(("text", renderer.block(block)))
    outline = Sections()
    title = render_inline(", ".join(fields["title"]), renderer.heading_refs) if "title" in fields else None
    for event in events:
        if event[0] == "heading":
            outline.heading(event[1], event[2])
            title = title or (event[2] if event[1] == 1 else None)
        elif event[0] == "note":
            if body := renderer.note(event[1]):  # never referenced: it stays where it was defined
                outline.text(f"[Note: {body}]")
                outline.text("")
        else:
            outline.text(event[1])
            outline.text("")
    meta = {"title": title} if title else {}
    return Extraction(kind="markdown", units=outline.units(), meta=meta)
