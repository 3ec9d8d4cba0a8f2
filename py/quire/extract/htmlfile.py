"""HTML: the visible main text, cut into sections at h1-h6.

Navigation, scripts, hidden elements and page chrome are dropped so that the
index holds what a reader sees in the article itself.

>>> ex = extract_html(b"<nav>Menu</nav><h1>Intro</h1><p>Hi <b>there</b></p>", "a.html")
>>> [(u.location, u.text) for u in ex.units]
[({'section': ['Intro']}, 'Hi there')]
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from quire.extract.base import Outline, decode_text, guess_encoding
from quire.model import Extraction, Unit

# Never visible, or page chrome rather than content.
_DROP = {"script", "style", "noscript", "template", "nav", "aside", "head", "svg", "iframe", "object", "canvas",
         "select", "button", "form", "dialog"}
# header/footer are chrome at page level but hold the title inside an article.
_CHROME = {"header", "footer"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
_BLOCK = {"p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "blockquote", "pre", "table",
          "tr", "figure", "figcaption", "address", "details", "summary", "caption", "h1", "h2", "h3", "h4", "h5", "h6",
          "br", "hr", "header", "footer", "body"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_HIDDEN_STYLE = re.compile(r"(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([-\w.:]+)""", re.I)


class _Visible(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.outline = Outline()
        self.line: list[str] = []
        self.skip_tag = ""  # tag whose subtree is being dropped
        self.skip_depth = 0
        self.heading: list[str] | None = None  # collecting a heading's text
        self.heading_level = 0
        self.pre = 0
        self.in_content = 0  # inside <article>/<main>
        self.title = ""
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title" and self.skip_tag in ("", "head"):
            self.in_title = True
            return
        if self.skip_tag:
            if tag == self.skip_tag and tag not in _VOID:
                self.skip_depth += 1
            return
        a = dict(attrs)
        hidden = "hidden" in a or a.get("aria-hidden") == "true" or _HIDDEN_STYLE.search(a.get("style") or "")
        if tag in _DROP or hidden or (tag in _CHROME and not self.in_content):
            if tag not in _VOID:
                self.skip_tag, self.skip_depth = tag, 1
            return
        if tag in ("article", "main"):
            self.in_content += 1
        if tag == "pre":
            self.pre += 1
        if tag in _HEADINGS:
            self.newline()
            self.heading, self.heading_level = [], _HEADINGS[tag]
        elif tag in _BLOCK:
            self.newline(blank=tag in ("p", "div", "section", "table", "pre", "blockquote", "ul", "ol"))
        elif tag in ("td", "th"):
            self.line.append(" | ")
        elif tag == "img" and a.get("alt"):
            self.handle_data(f" {a['alt']} ")

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
            return
        if self.skip_tag:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = ""
            return
        if tag in _HEADINGS and self.heading is not None:
            self.outline.heading(self.heading_level, "".join(self.heading))
            self.heading = None
        elif tag in _BLOCK:
            if tag in ("article", "main"):
                self.in_content = max(0, self.in_content - 1)
            if tag == "pre":
                self.pre = max(0, self.pre - 1)
            self.newline()

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        elif self.skip_tag:
            return
        elif self.heading is not None:
            self.heading.append(data)
        elif self.pre:
            self.line.append(data)
        else:
            self.line.append(re.sub(r"\s+", " ", data))

    def newline(self, blank: bool = False) -> None:
        text = "".join(self.line)
        self.line = []
        if self.pre:
            self.outline.text(text)
        else:
            text = text.strip(" ").removeprefix("| ").strip()
            if text:
                self.outline.text(text)
        if blank:
            self.outline.text("")

    def units(self) -> list[Unit]:
        self.newline()
        return self.outline.units()


def html_units(html: str) -> tuple[list[Unit], str]:
    """(section units, <title> text) for an HTML string; reused by EPUB."""
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return parser.units(), " ".join(parser.title.split())


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
