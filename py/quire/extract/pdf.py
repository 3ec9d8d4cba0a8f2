"""PDF via pypdf: one unit per page, ``{"page": n}`` counted from 1.

Text comes from pypdf's plain mode, which follows the content stream.  For
two- and three-column papers (LaTeX, Word, the Federal Register) that stream
is written column by column, so sentences stay whole; pypdf's "layout" mode
instead lays lines out across the page and interleaves the columns, and on
the ACL papers it returns next to nothing, so it is not used.

Pages with under 50 characters that carry an image (or no text at all) are
flagged ``needs_ocr`` and counted in ``meta["needs_ocr"]`` instead of
silently disappearing.

Reading is a generator (``read_pdf``) that yields after every page, so the
library can let the worker hear a Cancel between pages; ``cancelled`` is also
asked before each page, and reading stops at ``Limits.max_seconds`` with the
pages read so far and a warning.

>>> clean_page("Auﬂage\\nan inter-\\nesting case\\x00x")
'Auflage\\nan interesting case x'
"""

from __future__ import annotations

import io
import logging
import re
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from quire.errors import traceback_of
from quire.extract import toc
from quire.extract.base import ExtractCancelled, ExtractError, Limits
from quire.extract.causes import cause
from quire.model import Extraction, Unit

SAVE_PDF = "if it opens in a PDF viewer, print it to a new PDF there and add that"
_log = logging.getLogger("quire.extract")
OCR_MIN_CHARS = 50  # fewer visible characters than a short paragraph: probably a scan
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "ft", "ﬆ": "st"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# "inter-\nesting": a hyphen at a line end between letters, lower case after.
_HYPHEN = re.compile(r"(?<=[^\W\d_])-\n(?=[^\W\d_])")


def clean_page(text: str) -> str:
    text = _CONTROL.sub(" ", text.translate(_LIGATURES))  # TeX math fonts map minus to \x00
    text = _HYPHEN.sub(lambda m: "" if text[m.end()].islower() else "-\n", text)
    return "\n".join(" ".join(line.split()) for line in text.split("\n")).strip()


def _has_image(resources, depth: int = 0) -> bool:
    """Does a page (or a form it draws) use an image XObject?"""
    try:
        xobjects = resources.get("/XObject") if resources else None
        for ref in (xobjects.get_object().values() if xobjects else ()):
            obj = ref.get_object()
            if obj.get("/Subtype") == "/Image":
                return True
            if obj.get("/Subtype") == "/Form" and depth < 3 and _has_image(obj.get("/Resources"), depth + 1):
                return True
    except Exception:  # a broken resource dictionary must not sink the page
        _log.debug("unreadable resources while looking for images", exc_info=True)
        return False
    return False


@contextmanager
def _quiet_pypdf():
    # pypdf logs a warning per odd font or xref; in the browser console that
    # is noise for the user, and the text comes out fine.
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _open(data: bytes):
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, PdfReadError

    if b"%PDF-" not in data[:1024]:
        raise ExtractError("this is not a valid PDF (the PDF header is missing); the file may be damaged or mislabelled")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            # Many PDFs are encrypted only to restrict printing, with an empty
            # open password; those read fine.
            try:
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError) as e:
                raise ExtractError("this PDF is encrypted in a way Quire cannot open; save an unencrypted copy and add that") from e
            if not opened:
                raise ExtractError("this PDF is password-protected; open it, save a copy without a password, and add that")
        count = len(reader.pages)
    except ExtractError:
        raise
    except PdfReadError as e:  # pypdf's own complaint: the file's fault
        raise ExtractError(f"could not read this PDF: {cause(e)}; {SAVE_PDF}") from e
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, OSError) as e:
        # pypdf tripping over odd input: name it and keep the traceback (a reader bug is possible)
        _log.warning("pypdf could not open a PDF", exc_info=True)
        raise ExtractError(f"could not read this PDF: {cause(e)}; {SAVE_PDF}", detail=traceback_of(e)) from e
    return reader, count


def read_pdf(data: bytes, name: str, limits: Limits = Limits(),
             cancelled: Callable[[], bool] | None = None) -> Iterator[int]:
    """Yield each page number once it is read; return the Extraction."""
    with _quiet_pypdf():
        reader, count = _open(data)
        if count > limits.max_pdf_pages:
            raise ExtractError(f"this PDF has {count} pages; Quire reads at most {limits.max_pdf_pages}")
        started = time.monotonic()  # opening is bounded by the file size; the pages are what can run for hours
        units, warnings, ocr_pages = [], [], []
        for number in range(1, count + 1):
            if cancelled is not None and cancelled():
                raise ExtractCancelled(f"reading {name} was cancelled at page {number}")
            if time.monotonic() - started > limits.max_seconds:
                warnings.append(f"only pages 1–{number - 1} of {count} were read: reading one file may take at most "
                                f"{limits.max_seconds:.0f} s; split the PDF to read the rest")
                break
            flags = []
            try:
                page = reader.pages[number - 1]
                text = clean_page(page.extract_text() or "")
            except Exception as e:  # one broken page should not cost the whole document
                logging.getLogger("quire.extract").warning("%s: page %d could not be read", name, number, exc_info=True)
                page, text = None, ""
                flags.append("unreadable")
                warnings.append(f"page {number} could not be read ({cause(e)})")
            if len(text) < OCR_MIN_CHARS and (not text or (page is not None and _has_image(page.get("/Resources")))):
                flags.append("needs_ocr")
                ocr_pages.append(number)
            units.append(Unit(text=text, location={"page": number}, flags=flags))
            yield number
        title = ""
        try:
            title = _CONTROL.sub("", reader.metadata.title or "").strip() if reader.metadata else ""
        except Exception:  # a broken info dictionary: the document simply has no title
            _log.debug("unreadable PDF metadata", exc_info=True)
    units = toc.mark_pages(units)  # TOC pages stay searchable but are flagged for the study tools
    if ocr_pages:
        warnings.append(f"{len(ocr_pages)} of {count} pages have little or no text (scanned?) and need OCR")
    meta = {"pages": count, "needs_ocr": len(ocr_pages), "needs_ocr_pages": ocr_pages}
    if len(units) < count:
        meta["pages_read"] = len(units)
    if title:
        meta["title"] = title
    return Extraction(kind="pdf", units=units, meta=meta, warnings=warnings)


def extract_pdf(data: bytes, name: str, limits: Limits = Limits(),
                cancelled: Callable[[], bool] | None = None) -> Extraction:
    steps = read_pdf(data, name, limits, cancelled)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
