"""A forgiving HTML/XHTML parser that builds a small element tree.

html.parser only tokenizes; this adds what browsers do with sloppy markup:
optional end tags (``<li>a<li>b``, ``<td>`` rows, ``<p>`` closed by a block),
stray end tags ignored, and marked sections (``<![CDATA[...]]>``,
``<![if !IE]>``) that would otherwise make html.parser fail the whole file.

>>> root = parse_html("<ul><li>a<li>b</ul>")
>>> [child.tag for child in root.children[0].children]
['li', 'li']
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
# Opening one of these closes an open <p>, as in the HTML parsing algorithm.
_CLOSES_P = {"address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure",
             "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav", "ol", "p", "pre",
             "section", "table", "ul"}
# tag -> (tags it closes when still open, tags that stop the search)
_IMPLIED_END = {
    "li": ({"li"}, {"ul", "ol", "menu"}),
    "dt": ({"dt", "dd"}, {"dl"}),
    "dd": ({"dt", "dd"}, {"dl"}),
    "tr": ({"tr", "td", "th"}, {"table", "thead", "tbody", "tfoot"}),
    "td": ({"td", "th"}, {"tr", "table"}),
    "th": ({"td", "th"}, {"tr", "table"}),
    "thead": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
    "tbody": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
    "tfoot": ({"thead", "tbody", "tfoot", "tr", "td", "th"}, {"table"}),
    "option": ({"option"}, {"select", "datalist"}),
}
MAX_DEPTH = 100  # deeper nesting is flattened; real pages stay far below, crafted ones would exhaust the stack
_MARKED = re.compile(r"<!\[CDATA\[(.*?)\]\]>|<!\[[^\]<>]*\]>|<!\[", re.S)


@dataclass
class Element:
    tag: str
    attrs: dict = field(default_factory=dict)
    children: list = field(default_factory=list)  # Element or str

    def get(self, name: str, default: str = "") -> str:
        return self.attrs.get(name) or default

    def iter(self):
        """This element and all below it, depth first, without recursion."""
        todo = [self]
        while todo:
            el = todo.pop()
            yield el
            todo.extend(reversed([c for c in el.children if isinstance(c, Element)]))


def _marked_section(m: re.Match) -> str:
    # CDATA is text in XHTML (EPUB); conditional-comment markers are dropped; a
    # lone "<![" is shown as written instead of stopping the parser.
    if m.group(1) is not None:
        return html.escape(m.group(1), quote=False)
    return "" if m.group(0) != "<![" else "&lt;!["


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root")
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        self._open(tag, attrs, void=tag in VOID)

    def handle_startendtag(self, tag, attrs):
        self._open(tag, attrs, void=True)  # XHTML <span/>: opened and closed at once

    def _open(self, tag, attrs, void):
        tag = tag.rpartition(":")[2]  # <m:math> in XHTML with a namespace prefix
        if tag in _CLOSES_P and self.stack[-1].tag == "p":
            self.stack.pop()
        if tag in _IMPLIED_END:
            closes, stops = _IMPLIED_END[tag]
            cut = 0  # the outermost open element this tag ends, within its table or list
            for i in range(len(self.stack) - 1, 0, -1):
                if self.stack[i].tag in stops:
                    break
                if self.stack[i].tag in closes:
                    cut = i
            if cut:
                del self.stack[cut:]
        el = Element(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(el)
        if not void and len(self.stack) < MAX_DEPTH:
            self.stack.append(el)

    def handle_endtag(self, tag):
        tag = tag.rpartition(":")[2]
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_html(text: str) -> Element:
    """The document as an element tree under a '#root' element."""
    builder = _Builder()
    builder.feed(_MARKED.sub(_marked_section, text))
    builder.close()
    return builder.root
