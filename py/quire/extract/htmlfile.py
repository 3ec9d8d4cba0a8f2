"""HTML: the visible main text, cut into sections at h1-h6.

Whitespace follows the browser: block elements break lines, inline elements
add nothing (``<b>un</b>fair`` stays one word), source whitespace between them
becomes one space, ``<br>`` is a line break, table rows become ``a | b``
lines, ``<pre>`` is kept as written.  Scripts, hidden elements, navigation and
page chrome around an <article>/<main> are dropped.  A footnote or EPUB note
is shown where it is referenced, as ``[Note: ...]``; MathML becomes its
alttext or TeX annotation.

>>> ex = extract_html(b"<nav>Menu</nav><h1>Intro</h1><p>Hi <b>the</b>re</p>", "a.html")
>>> [(u.location, u.text) for u in ex.units]
[({'section': ['Intro']}, 'Hi there')]
"""

from __future__ import annotations

import re
from collections import deque

from quire.extract.base import decode_text, guess_encoding
from quire.extract.htmlnotes import BACKLINK, Book, Notes, kinds
from quire.extract.htmltree import MAX_DEPTH, Element, parse_html
from quire.extract.sections import Sections
from quire.model import Extraction, Unit

# Never visible, or not reading matter.
_DROP = {"script", "style", "noscript", "template", "head", "title", "svg", "iframe", "object", "canvas", "select",
         "button", "textarea", "dialog", "nav", "rp"}
# Page chrome when the page marks its content with <article>/<main>; content otherwise
# (a title block in <header>, a sidebar in a book chapter).
_CHROME = {"header", "footer", "aside"}
_BLOCK = {"div", "li", "dt", "dd", "tr", "caption", "summary", "legend", "option", "address", "center", "tbody",
          "thead", "tfoot", "body", "html", "hgroup", "menu", "fieldset", "form", "main", "article", "figcaption"}
# Blocks set off by a blank line.
_PARAGRAPH = {"p", "section", "table", "blockquote", "ul", "ol", "dl", "figure", "header", "footer", "aside", "details"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
# Line and page numbers float in the margin: their own word, never glued to the text.
_MARGIN_NUMBER = re.compile(r"\b(?:lnum|line-?num(?:ber)?s?|lineno|pagenum|page-?num(?:ber)?)\b", re.I)
_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML whitespace; a no-break space is a character, not a gap
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([-\w.:]+)""", re.I)


def _hidden(el: Element) -> bool:
    return "hidden" in el.attrs or el.get("aria-hidden").lower() == "true" or bool(_HIDDEN_STYLE.search(el.get("style")))


def math_text(el: Element) -> str:
    """MathML as its alttext, else its TeX annotation, else its tokens in order."""
    if alt := el.get("alttext").strip():
        return alt
    for node in el.iter():
        if node.tag == "annotation" and "tex" in node.get("encoding").lower():
            return " ".join(_plain(node).split())
    tokens = [_plain(n) for n in el.iter() if n.tag in ("mi", "mn", "mo", "mtext", "ms")]
    return " ".join(t.strip() for t in tokens if t.strip())


def _plain(el: Element) -> str:
    return "".join(c if isinstance(c, str) else _plain(c) for c in el.children)


def _span(cell: Element, name: str) -> int:
    value = cell.get(name).strip()
    return min(int(value), 1000) if value.isdigit() and int(value) > 0 else 1


class _Document:
    """Facts about the whole page needed while walking it: its notes, title and content root."""

    def __init__(self, root: Element, path: str = "", book: Book | None = None) -> None:
        # A web page that marks its content with <article>/<main> has chrome around it;
        # a book (EPUB) has none: its headers, footers and sidebars are reading matter.
        self.has_content_root = book is None and any(el.tag in ("article", "main") for el in root.iter())
        title = next((el for el in root.iter() if el.tag == "title"), None)
        self.title = " ".join(_plain(title).split()) if title is not None else ""
        self.notes = Notes(root, path, book)


class _Renderer:
    """Walks the tree, writing lines into an Outline (or one flat line when ``flat``)."""

    def __init__(self, doc: _Document, flat: bool = False, headings: bool = True) -> None:
        self.doc = doc
        self.flat = flat
        self.headings = headings  # False: a heading is one more paragraph
        self.outline = Sections()
        self.line: list[str] = []
        self.space = False  # source whitespace seen since the last word
        self.pre = 0
        self.cells = 0  # inside a table cell, where blocks only separate words
        self.row_cells = 0
        self.content = 0  # inside <article>/<main>
        self.article = 0
        self.lists: list[int | None] = []  # next item number of each open <ol>; None for <ul>
        self.numbered = False  # the line holds only a list item's number so far

    # ------------------------------------------------------------ output

    def words(self, text: str) -> None:
        if self.pre and not (self.flat or self.cells):
            for i, piece in enumerate(text.split("\n")):
                if i:
                    self.break_line(keep_empty=True)
                self.line.append(piece)
            return
        parts = _SPACE.split(text)
        for i, word in enumerate(parts):
            if i:
                self.space = True
            if word:
                if self.space and self.line:
                    self.line.append(" ")
                self.line.append(word)
                self.space = self.numbered = False

    def literal(self, text: str) -> None:
        if self.space and self.line:
            self.line.append(" ")
        self.line.append(text)
        self.space = self.numbered = False

    def break_line(self, blank: bool = False, keep_empty: bool = False) -> None:
        if self.numbered:
            return  # "3. " waits for its item's text, even when that starts with a <p>
        if self.flat or self.cells:
            self.space = True
            return
        text = "".join(self.line)
        self.line, self.space = [], False
        text = text.rstrip() if self.pre else text.strip()
        if text or keep_empty:
            self.outline.text(text)
        if blank:
            self.outline.text("")

    def flat_text(self, el: Element) -> str:
        sub = _Renderer(self.doc, flat=True)
        sub.content, sub.article = self.content, self.article
        sub.walk(el, 0)
        return "".join(sub.line).strip()

    # ------------------------------------------------------------ walking

    def walk(self, el: Element, depth: int) -> None:
        for child in el.children:
            if isinstance(child, str):
                self.words(child)
            elif depth < MAX_DEPTH:
                self.element(child, depth + 1)

    def skipped(self, el: Element) -> bool:
        if el.tag in _DROP or _hidden(el) or self.doc.notes.is_body(el):
            return True  # a note is shown where it is referenced
        if el.tag in _CHROME and self.doc.has_content_root and not self.content:
            return True
        if el.tag == "aside" and self.doc.has_content_root and not self.article:
            return True  # beside the article: adverts, related links
        return el.tag == "a" and bool(BACKLINK.search(kinds(el)) or _plain(el).strip() in ("↩", "↩\ufe0e", "↩\ufe0f"))

    def element(self, el: Element, depth: int) -> None:
        tag = el.tag
        if self.skipped(el):
            if self.doc.notes.is_body(el):
                self.outline.filled = True  # its text moved to the reference: the heading above is not empty
            if tag == "li" and self.lists and self.lists[-1] is not None:
                self.lists[-1] += 1  # a moved note keeps its number: the next item is still "2."
            return
        if tag == "math":
            block = el.get("display") == "block"
            if block:
                self.break_line()
            self.literal(math_text(el))  # inline math is spaced by the text around it, like any inline element
            if block:
                self.break_line()
        elif (note := self.doc.notes.body_for(el)) is not None:
            if body := self.flat_text(note):
                self.space = True
                self.literal(f"[Note: {body}]")
        elif tag in _HEADINGS and self.headings and not (self.flat or self.cells):
            self.break_line(blank=True)
            self.outline.heading(_HEADINGS[tag], self.flat_text(el))
        elif tag == "br":
            self.break_line()
        elif tag == "hr":
            self.break_line(blank=True)
        elif tag == "img":
            self.words(f" {el.get('alt')} ")
        elif tag == "table" and not (self.flat or self.cells):
            self.break_line(blank=True)
            for row in self.table_rows(el):
                self.literal(row)
                self.break_line()
            self.break_line(blank=True)
        elif tag == "tr":
            self.break_line()
            outer, self.row_cells = self.row_cells, 0
            self.walk(el, depth)
            self.break_line()
            self.row_cells = outer
        elif tag in ("td", "th"):
            if self.flat:
                self.space = True
            elif self.row_cells:
                self.space = False
                self.literal(" | ")
            self.row_cells += 1
            self.cells += 1
            self.walk(el, depth)
            self.cells -= 1
        elif tag == "pre":
            self.break_line(blank=True)
            self.pre += 1
            self.walk(el, depth)
            self.break_line(blank=True)
            self.pre -= 1
        elif tag in ("ol", "ul", "menu"):
            outermost = not self.lists  # a nested list continues its item without a blank line
            self.break_line(blank=outermost)
            start = el.get("start").strip()
            self.lists.append((int(start) if start.lstrip("-").isdigit() else 1) if tag == "ol" else None)
            self.walk(el, depth)
            self.lists.pop()
            self.break_line(blank=outermost)
        elif tag == "li" and self.lists and self.lists[-1] is not None:
            self.break_line()
            value = el.get("value").strip()
            number = int(value) if value.lstrip("-").isdigit() else self.lists[-1]
            self.lists[-1] = number + 1
            self.literal(f"{number}. ")  # the number a reader sees, generated by the browser
            self.numbered = True
            self.walk(el, depth)
            self.numbered = False  # an empty item still ends its line
            self.break_line()
        elif _MARGIN_NUMBER.search(el.get("class")):
            self.words(" ")
            self.walk(el, depth)
            self.words(" ")
        elif tag in _BLOCK or tag in _PARAGRAPH or tag in _HEADINGS:
            self.break_line(blank=tag in _PARAGRAPH)
            self.content += tag in ("article", "main")
            self.article += tag == "article"
            self.walk(el, depth)
            self.content -= tag in ("article", "main")
            self.article -= tag == "article"
            self.break_line(blank=tag in _PARAGRAPH)
        else:
            self.walk(el, depth)

    def table_rows(self, table: Element) -> list[str]:
        """'a | b | c' lines; a cell spanning rows is repeated so every line reads on its own."""
        rows: list[Element] = []
        lines: list[str] = []
        todo = deque(table.children)
        while todo:
            child = todo.popleft()
            if not isinstance(child, Element) or self.skipped(child):
                continue
            if child.tag == "tr":
                rows.append(child)
            elif child.tag in ("thead", "tbody", "tfoot"):
                todo.extendleft(reversed(child.children))
            elif child.tag == "caption" and (caption := self.flat_text(child)):
                lines.append(caption)
        carried: dict[int, list] = {}  # column -> [text, rows still spanned]
        for row in rows:
            out, column = [], 0
            cells = [c for c in row.children if isinstance(c, Element) and c.tag in ("td", "th") and not self.skipped(c)]
            for cell in [*cells, None]:
                while column in carried or (cell is None and any(k >= column for k in carried)):
                    if column in carried:
                        out.append(carried[column][0])
                        carried[column][1] -= 1
                        if not carried[column][1]:
                            del carried[column]
                    column += 1
                if cell is None:
                    break
                text = self.flat_text(cell)
                out.append(text)
                if (span := _span(cell, "rowspan")) > 1:
                    carried[column] = [text, span - 1]
                column += _span(cell, "colspan")
            if any(out):
                lines.append(" | ".join(out))
        return lines

    def units(self) -> list[Unit]:
        self.break_line()
        return self.outline.units()


def html_units(html: str) -> tuple[list[Unit], str]:
    """(section units, <title> text) for an HTML string."""
    return tree_units(parse_html(html))


def tree_units(root: Element, path: str = "", book: Book | None = None) -> tuple[list[Unit], str]:
    """(section units, <title> text) for a parsed page; EPUB passes its file path and the whole book."""
    renderer = _Renderer(_Document(root, path, book))
    renderer.walk(root, 0)
    return renderer.units(), renderer.doc.title


def fragment_text(markup: str) -> str:
    """Visible text of an HTML snippet, headings included (raw HTML in Markdown).

    >>> fragment_text("<div><h3>Note</h3><p>Hi <em>there</em></p><!-- x --></div>")
    'Note\\n\\nHi there'
    """
    root = parse_html(markup)
    renderer = _Renderer(_Document(root), headings=False)
    renderer.walk(root, 0)
    return "\n\n".join(u.text for u in renderer.units())


def decode_html(data: bytes, name: str) -> str:
    encoding, _ = guess_encoding(data)
    if encoding == "utf-8" and not data.startswith(b"\xef\xbb\xbf"):
        # A declared charset wins over the guess for legacy pages.
        if m := _META_CHARSET.search(data[:4096]):
            declared = m.group(1).decode("ascii", "replace").lower()
            if declared not in ("utf-8", "utf8"):
                encoding = None if declared.startswith(("utf-16", "utf-32")) else declared
    return decode_text(data, name, encoding if encoding != "utf-8" else None)


def extract_html(data: bytes, name: str) -> Extraction:
    units, title = html_units(decode_html(data, name))
    return Extraction(kind="html", units=units, meta={"title": title} if title else {})
