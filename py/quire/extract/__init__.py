"""Turn an uploaded file into units: ``extract(name, data) -> Extraction``.

Dispatch is on the file extension; a file without one is recognised by its
first bytes.  Every problem with the file itself surfaces as ``ExtractError``
with a message meant for the user that names the cause; an unexpected
exception is logged with its traceback (the browser console shows it) and
still becomes an ``ExtractError`` naming it, with the traceback as its ``detail``.  ``read_steps`` is the same as a
generator that yields between pages, so an async caller can let a Cancel in.

>>> ex = extract("notes.md", b"# Plan\\nRead chapter 2.")
>>> ex.kind, ex.units[0].location, ex.units[0].text
('markdown', {'section': ['Plan']}, 'Read chapter 2.')
"""

from __future__ import annotations

import logging
import posixpath
from importlib import import_module
from typing import Callable, Iterator

from quire.errors import traceback_of
from quire.extract.base import ExtractCancelled, ExtractError, Limits
from quire.extract.causes import cause
from quire.model import Extraction

__all__ = ["SUPPORTED", "ExtractCancelled", "ExtractError", "Limits", "extract", "kind_of", "read_steps"]

# Largest file read by default (the page's Settings can raise it; site/assets/api.js has the same
# default).  Measured in Chromium (tests/bench/tab_limits.py): a 50 MB text file peaks near 2.7 GB
# in the tab's process, a 199 MB one crashed the tab.
MAX_BYTES = 50 * 1024 * 1024
# Recordings are not read by the engine (the page decodes them a few minutes at a time and their
# bytes stay in the page: quire.originals.Held), so their limit is what a tab holds at once: a
# 90-minute lecture video is often 200-700 MB.  The larger of this and the Settings limit binds.
MAX_RECORDING_BYTES = 1024 * 1024 * 1024
_log = logging.getLogger("quire.extract")

# extension -> kind; the kind names the module and function that read it.
SUPPORTED: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".csv": "csv",
    ".tsv": "csv",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".epub": "epub",
    ".txt": "text",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".text": "text",
    # recordings: decoded in the page, transcribed by Whisper tiny.en (quire.transcripts)
    ".mp3": "audio",
    ".m4a": "audio",
    ".aac": "audio",
    ".ogg": "audio",
    ".oga": "audio",
    ".opus": "audio",
    ".wav": "audio",
    ".flac": "audio",
    ".webm": "audio",
    ".mp4": "audio",
}

# kind -> (module, function).  Imported on first use so that loading Quire
# in the browser does not pay for pypdf until a PDF arrives.
_READERS = {
    "pdf": ("quire.extract.pdf", "extract_pdf"),
    "docx": ("quire.extract.docx", "extract_docx"),
    "pptx": ("quire.extract.pptx", "extract_pptx"),
    "xlsx": ("quire.extract.xlsx", "extract_xlsx"),
    "epub": ("quire.extract.epub", "extract_epub"),
    "csv": ("quire.extract.csvfile", "extract_csv"),
    "markdown": ("quire.extract.markdown", "extract_markdown"),
    "html": ("quire.extract.htmlfile", "extract_html"),
    "text": ("quire.extract.text", "extract_text"),
    "image": ("quire.extract.image", "extract_image"),
    "audio": ("quire.extract.audio", "extract_audio"),
}
_TAKES_LIMITS = {"pdf", "docx", "pptx", "xlsx", "epub"}
_UNSUPPORTED = (
    "unsupported type {ext}; Quire reads PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), "
    "CSV, Markdown, HTML, EPUB, plain text, PNG or JPEG images (read by OCR), and recordings "
    "(MP3, M4A/AAC, Ogg/Opus, WAV, FLAC, WebM, MP4; English or German speech)"
)
_OLD_OFFICE = {".doc": ".docx", ".ppt": ".pptx", ".xls": ".xlsx"}


def kind_of(name: str, data: bytes = b"") -> str:
    """The reader for a file: 'report.PDF' -> 'pdf'; raises ExtractError if none fits."""
    ext = posixpath.splitext(name.replace("\\", "/"))[1].lower()
    if ext in SUPPORTED:
        return SUPPORTED[ext]
    if not ext:
        if sniffed := _sniff(data):
            return sniffed
        ext = "(no extension)"
    message = _UNSUPPORTED.format(ext=ext)
    if ext in _OLD_OFFICE:
        message += f" (save it as {_OLD_OFFICE[ext]} first)"
    raise ExtractError(message)


def _sniff(data: bytes) -> str | None:
    head = data[:2048]
    if b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        if b"mimetypeapplication/epub+zip" in head[:100]:
            return "epub"
        for marker, kind in ((b"word/", "docx"), (b"ppt/", "pptx"), (b"xl/", "xlsx")):
            if marker in data[:65536]:
                return kind
        return None
    if head.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
        return "image"
    if b"<html" in head.lower() or b"<!doctype html" in head.lower():
        return "html"
    return "text"  # decode_text still refuses binary data


def read_steps(name: str, data: bytes, *, max_bytes: int = MAX_BYTES, limits: Limits = Limits(),
               cancelled: Callable[[], bool] | None = None) -> Iterator[int]:
    """Read one file, yielding now and then (after each PDF page); returns the Extraction.

    Raises ExtractError for anything wrong with the file, ExtractCancelled if
    ``cancelled()`` turned true while reading."""
    kind = kind_of(name, data)
    if len(data) > max_bytes:
        raise ExtractError(f"{name} is too large ({len(data) / 2**20:.0f} MB; the limit is {max_bytes / 2**20:.0f} MB)")
    if not data or (len(data) < 4096 and not data.strip()):
        raise ExtractError(f"{name} is empty")
    module, function = _READERS[kind]
    try:
        if kind == "pdf":
            from quire.extract.pdf import read_pdf

            extraction = yield from read_pdf(data, name, limits, cancelled)
        else:
            reader = getattr(import_module(module), function)
            extraction = reader(data, name, limits) if kind in _TAKES_LIMITS else reader(data, name)
    except (ExtractError, ExtractCancelled):
        raise
    except RecursionError as e:
        raise ExtractError(f"{name} is nested too deeply to read (more levels than Python can follow)") from e
    except MemoryError as e:
        raise ExtractError(f"{name} needs more memory than the browser tab has; split it into smaller files") from e
    except Exception as e:  # a parser bug on odd input: name the cause, keep the traceback
        _log.error("could not read %s", name, exc_info=True)
        raise ExtractError(f"could not read {name}: {cause(e)} (the file may be damaged, or Quire cannot read "
                           "this variant of it; save a new copy from its program and add that, and if it still "
                           "fails, report it with Copy details)", detail=traceback_of(e)) from e
    # (a recording's text comes later, from its transcript: quire/transcripts.py)
    if not any(u.text.strip() for u in extraction.units) and not extraction.meta.get("needs_ocr") and kind != "audio":
        extraction.warnings.append(f"no text found in {name}")
    return extraction


def extract(name: str, data: bytes, *, max_bytes: int = MAX_BYTES, limits: Limits = Limits(),
            cancelled: Callable[[], bool] | None = None) -> Extraction:
    """Read one file.  Raises ExtractError for anything wrong with the file."""
    steps = read_steps(name, data, max_bytes=max_bytes, limits=limits, cancelled=cancelled)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
