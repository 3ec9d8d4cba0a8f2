"""EPUB: chapters in spine order, each read with the HTML extractor.

Chapter titles come from the table of contents (EPUB 3 nav or EPUB 2 NCX),
else the chapter's first heading, else its <title>.

container.xml -> content.opf -> spine [ch1.xhtml, ch2.xhtml] -> units located
``{"chapter": "Chapter One"}`` with prefix ``[Chapter: Chapter One > Some Section]``.
"""

from __future__ import annotations

import posixpath
from urllib.parse import unquote

from quire.extract.base import ExtractError, Limits, SafeZip, attr, breadcrumb, join_path, local
from quire.extract.htmlfile import decode_html, html_units
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


def _toc_titles(z: SafeZip, nav_href: str | None, ncx_href: str | None) -> dict[str, str]:
    """{chapter path: title} from the nav document or the NCX, first entry per file wins."""
    titles: dict[str, str] = {}
    if nav_href:
        root = _xml_or_none(z, nav_href)
        for nav in root.iter() if root is not None else ():
            if local(nav.tag) == "nav" and (attr(nav, "type") or "toc") == "toc":
                for a in nav.iter():
                    if local(a.tag) == "a" and a.get("href"):
                        path = _href(nav_href, a.get("href"))
                        titles.setdefault(path, " ".join("".join(a.itertext()).split()))
                break
    if not titles and ncx_href:
        root = _xml_or_none(z, ncx_href)
        for point in root.iter() if root is not None else ():
            if local(point.tag) != "navPoint":
                continue
            label = next((" ".join("".join(el.itertext()).split()) for el in point if local(el.tag) == "navLabel"), "")
            src = next((el.get("src") for el in point if local(el.tag) == "content"), None)
            if src and label:
                titles.setdefault(_href(ncx_href, src), label)
    return {k: v for k, v in titles.items() if v}


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

    units: list[Unit] = []
    chapters = 0
    for itemref in spine if spine is not None else ():
        href, media = manifest.get(itemref.get("idref"), ("", ""))
        if media not in _HTML_TYPES or href == nav_href:
            continue
        html = z.read(href)
        if html is None:
            continue
        sections, page_title = html_units(decode_html(html, posixpath.basename(href)))
        if not sections:
            continue
        chapters += 1
        first_heading = next((u.location["section"][0] for u in sections if u.location["section"]), "")
        title = titles.get(href) or first_heading or page_title or posixpath.basename(href)
        for u in sections:
            path = list(u.location["section"])
            if path and path[0] == title:
                path = path[1:]  # the chapter's own heading is already the first crumb
            units.append(Unit(text=u.text, location={"chapter": title}, prefix=breadcrumb("Chapter", [title, *path])))
    meta = {"chapters": chapters}
    if book_title:
        meta["title"] = book_title
    return Extraction(kind="epub", units=units, meta=meta)
