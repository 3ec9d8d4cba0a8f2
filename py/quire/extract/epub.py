"""EPUB: chapters in spine order, each read with the HTML extractor.

A passage's chapter is the nearest heading above it, so a single XHTML file
holding a whole book (as many Gutenberg EPUBs are) is still cut at its parts.
A file that the table of contents (EPUB 3 nav or EPUB 2 NCX) names once keeps
that name as the first crumb; text before any heading is located by it, else
by the file's <title>.

container.xml -> content.opf -> spine [ch1.xhtml, ch2.xhtml] -> units located
``{"chapter": "Some Section"}`` with prefix ``[Chapter: Chapter One > Some Section]``.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from quire.extract.base import ExtractError, Limits, SafeZip, attr, breadcrumb, join_path, local
from quire.extract.htmlfile import decode_html, tree_units
from quire.extract.htmlnotes import Book
from quire.extract.htmltree import Element, parse_html
from quire.model import Extraction, Unit

_HTML_TYPES = {"application/xhtml+xml", "text/html"}


def _href(base: str, href: str) -> str:
    return join_path(base, unquote(href))  # hrefs are URLs: "my%20chapter.xhtml"


def _xml_or_none(z: SafeZip, path: str | None):
    # A sloppy nav page (HTML entities in XHTML) should cost the titles, not the book.
    try:
        return z.xml(path) if path else None
    except ExtractError:
        return None


def _toc_titles(z: SafeZip, nav_href: str | None, ncx_href: str | None) -> dict[str, list[str]]:
    """{chapter path: [titles of the entries pointing into it]} from the nav document or the NCX."""
    entries: list[tuple[str, str]] = []
    if nav_href:
        root = _xml_or_none(z, nav_href)
        for nav in root.iter() if root is not None else ():
            if local(nav.tag) == "nav" and (attr(nav, "type") or "toc") == "toc":
                for a in nav.iter():
                    if local(a.tag) == "a" and a.get("href"):
                        entries.append((_href(nav_href, a.get("href")), " ".join("".join(a.itertext()).split())))
                break
    if not entries and ncx_href:
        root = _xml_or_none(z, ncx_href)
        for point in root.iter() if root is not None else ():
            if local(point.tag) != "navPoint":
                continue
            label = next((" ".join("".join(el.itertext()).split()) for el in point if local(el.tag) == "navLabel"), "")
            src = next((el.get("src") for el in point if local(el.tag) == "content"), None)
            if src:
                entries.append((_href(ncx_href, src), label))
    titles: dict[str, list[str]] = {}
    for path, title in entries:
        if title:
            titles.setdefault(path, []).append(title)
    return titles


def extract_epub(data: bytes, name: str, limits: Limits = Limits()) -> Extraction:
    z = SafeZip(data, "EPUB", limits)
    container = z.xml("META-INF/container.xml")
    rootfile = next((el.get("full-path") for el in container.iter() if local(el.tag) == "rootfile"), None) if container is not None else None
    opf = z.xml(rootfile) if rootfile else None
    if opf is None:
        raise ExtractError("this EPUB file is damaged (its package description is missing)")
    manifest, nav_href, ncx_href = {}, None, None
    for item in opf.iter():
        if local(item.tag) == "item":
            href = _href(rootfile, item.get("href", ""))
            manifest[item.get("id")] = (href, item.get("media-type", ""))
            if "nav" in (item.get("properties") or "").split():
                nav_href = href
            if item.get("media-type") == "application/x-dtbncx+xml":
                ncx_href = href
    spine = next((el for el in opf.iter() if local(el.tag) == "spine"), None)
    if spine is not None and spine.get("toc") in manifest:
        ncx_href = manifest[spine.get("toc")][0]
    titles = _toc_titles(z, nav_href, ncx_href)
    book_title = next((" ".join(el.text.split()) for el in opf.iter() if local(el.tag) == "title" and el.text), "")

    pages: dict[str, Element] = {}
    for itemref in spine if spine is not None else ():
        href, media = manifest.get(itemref.get("idref"), ("", ""))
        if media in _HTML_TYPES and href != nav_href and href not in pages and (html := z.read(href)) is not None:
            pages[href] = parse_html(decode_html(html, posixpath.basename(href)))
    book = Book(pages)  # notes may sit in another file of the book (endnotes.xhtml)

    units: list[Unit] = []
    chapters = 0
    for href, root in pages.items():
        sections, page_title = tree_units(root, href, book)
        if not sections:
            continue
        chapters += 1
        # A file that is one chapter keeps its table-of-contents title as the first
        # crumb; in a file holding several (one XHTML for a whole book) only the
        # headings can tell where each passage is.
        toc = titles.get(href, [])
        root = toc[0] if len(toc) == 1 else ""
        fallback = root or (toc[0] if toc else "") or page_title or posixpath.basename(href)
        for u in sections:
            path = list(u.location["section"])
            crumbs = [root, *path] if root and root not in path else path or [fallback]
            # The chapter is the nearest heading above the passage.
            units.append(Unit(text=u.text, location={"chapter": crumbs[-1]}, prefix=breadcrumb("Chapter", crumbs)))
    meta = {"chapters": chapters}
    if book_title:
        meta["title"] = book_title
    return Extraction(kind="epub", units=units, meta=meta)
