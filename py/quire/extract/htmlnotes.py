"""Footnotes and endnotes in HTML and EPUB: which links reference a note, and its text.

A note is shown where it is referenced (``[Note: ...]``), so its body is left
out where it stands.  A reference is a link marked as one (EPUB
``epub:type="noteref"``, ``role="doc-noteref"``, Pandoc's ``footnote-ref``) or
a link inside <sup> to a note-like element (``epub:type="footnote"``, ``id="fn1"``,
class ``footnote``).  In an EPUB the note may live in another file of the book
(``endnotes.xhtml#note-3``); ``Book`` finds it there.

>>> from quire.extract.htmltree import parse_html
>>> root = parse_html('<p>Hi<sup><a href="#fn1">1</a></sup></p><ol><li id="fn1">Note</li></ol>')
>>> notes = Notes(root)
>>> link = next(el for el in root.iter() if el.tag == "a")
>>> "".join(notes.body_for(link).children)
'Note'
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from quire.extract.base import join_path
from quire.extract.htmltree import Element

NOTEREF = re.compile(r"\b(?:noteref|doc-noteref|footnote-ref|footnoteref)\b", re.I)
_NOTE_BODY = re.compile(r"\b(?:(?:foot|end|rear)?notes?|doc-(?:foot|end)note|fn\d*|footnote-item)\b", re.I)
BACKLINK = re.compile(r"\b(?:doc-backlink|footnote-back(?:ref)?|backref)\b", re.I)
_NOT_A_NOTE = {"body", "html", "main", "article", "section"}  # a link to a whole chapter is navigation


def kinds(el: Element) -> str:
    return f"{el.get('epub:type')} {el.get('role')} {el.get('class')}"


def _ids(root: Element) -> dict[str, Element]:
    ids: dict[str, Element] = {}
    for el in root.iter():
        if el.get("id"):
            ids.setdefault(el.get("id"), el)
    return ids


class Book:
    """The parsed files of one EPUB, so a note reference can reach into another file."""

    def __init__(self, roots: dict[str, Element]) -> None:
        self.roots = roots
        self.index: dict[str, dict[str, Element]] = {}
        self.shown: set[tuple[str, str]] = set()  # (file, id) of notes already placed

    def find(self, base: str, href: str) -> tuple[str, Element] | None:
        target, _, fragment = href.partition("#")
        path = join_path(base, unquote(target))
        if path not in self.roots or not fragment:
            return None
        if path not in self.index:
            self.index[path] = _ids(self.roots[path])
        element = self.index[path].get(unquote(fragment))
        return (path, element) if element is not None else None


class Notes:
    def __init__(self, root: Element, path: str = "", book: Book | None = None) -> None:
        self.path = path
        self.book = book
        self.shown: set[tuple[str, str]] = book.shown if book else set()
        self.refs: dict[int, tuple[str, str]] = {}  # id(link) -> (file, note id)
        self.bodies: dict[tuple[str, str], Element] = {}
        ids = _ids(root)
        for el in root.iter():
            for link in el.children:
                if isinstance(link, Element) and link.tag == "a" and "#" in link.get("href"):
                    marked = bool(NOTEREF.search(kinds(link)))
                    if marked or el.tag == "sup":
                        self._add(link, marked, ids)

    def _add(self, link: Element, marked: bool, ids: dict[str, Element]) -> None:
        href = link.get("href")
        if href.startswith("#"):
            found = (self.path, ids.get(unquote(href[1:])))
        elif self.book is not None:
            found = self.book.find(self.path, href) or ("", None)
        else:
            return
        path, target = found
        if target is None or target.tag in _NOT_A_NOTE or target is link:
            return
        if marked or _NOTE_BODY.search(f"{kinds(target)} {target.get('id')}"):
            key = (path, target.get("id"))
            self.refs[id(link)] = key
            self.bodies[key] = target

    def is_body(self, el: Element) -> bool:
        """A note body in this file, shown (or to be shown) at its reference instead."""
        key = (self.path, el.get("id"))
        return bool(el.get("id")) and (key in self.bodies or key in self.shown)

    def body_for(self, link: Element) -> Element | None:
        """The note a link references, the first time only (a second reference adds nothing)."""
        key = self.refs.get(id(link))
        if key is None:
            return None
        if key in self.shown:
            return Element("#empty")
        self.shown.add(key)
        return self.bodies[key]
