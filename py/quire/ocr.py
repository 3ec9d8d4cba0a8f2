"""OCR during Train: pages with no text layer (or every page, when forced) are read by an
OCR engine and join the normal chunking, each marked with where its text came from.

The engine is injected: in the tab it is Tesseract in the page (``site/assets/ocr.js``,
reached through ``quire.browser``); on CPython there is none and pages stay marked
"needs OCR".  Every recognised page is saved at once in the ``ocr`` bucket, so a
cancelled Train keeps its pages and the next Train resumes where it stopped.
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable

from quire.errors import QuireError
from quire.model import Extraction

# (file key, bytes, page or None for an image, kind "pdf"|"image", tesseract language) -> {text, confidence}
Recognise = Callable[[str, bytes, "int | None", str, str], Awaitable[dict]]

OCR_LANGS = {"en": "eng", "de": "deu"}
DEFAULT_LANG = "eng+deu"  # a scan has no text to detect its language from
CHOICES = ("auto", "eng", "deu", "eng+deu")


class OCRUnavailable(QuireError):
    """The bundle was built without OCR (or the engine could not start)."""


class OCRStopped(Exception):
    """Cancelled between pages; the pages read so far are saved."""


def tesseract_language(source_language: str | None, choice: str = "auto") -> str:
    """Tesseract's language for a source: its own language, else English and German.

    >>> tesseract_language("de"), tesseract_language(None), tesseract_language("en", "deu")
    ('deu', 'eng+deu', 'deu')
    """
    if choice != "auto":
        return choice
    return OCR_LANGS.get(source_language or "", DEFAULT_LANG)


def pages_to_read(extraction: Extraction, force: bool) -> list[int]:
    """Indexes of the units OCR should read: flagged ones, or every page when forced."""
    if force:
        return [i for i, u in enumerate(extraction.units) if "page" in u.location]
    return [i for i, u in enumerate(extraction.units) if "needs_ocr" in u.flags]


def cache_key(sha256: str, page: int | None, lang: str) -> str:
    return f"{sha256}:{page or 0}:{lang}"


async def read_pages(extraction: Extraction, record: dict, data: bytes, recognise: Recognise | None, store, *,
                     lang: str, force: bool = False, report=None, cancelled=None) -> dict:
    """Fill the text of pages that need OCR; returns ``{page: confidence}`` for the pages read.

    Raises ``OCRStopped`` on cancel (what was read is in the cache) and ``OCRUnavailable``
    when there is no engine."""
    report = report or (lambda e: None)
    todo = pages_to_read(extraction, force)
    if not todo:
        return {}
    if recognise is None:
        raise OCRUnavailable("OCR is not included in this copy of Quire")
    done: dict[int, float] = {}
    spent, fresh = 0.0, 0
    for n, i in enumerate(todo):
        unit = extraction.units[i]
        page = unit.location.get("page")
        remaining = len(todo) - n
        eta = round(spent / fresh * remaining) if fresh else None
        report({"stage": "ocr", "file": record["name"], "page": page, "done": n, "pages": len(todo), "eta_s": eta})
        if cancelled and cancelled():
            raise OCRStopped(f"OCR stopped after {n} of {len(todo)} pages of {record['name']}; "
                             "those are kept, and Train picks up from there")
        key = cache_key(record["sha256"], page, lang)
        result = await store.get("ocr", key)
        if result is None:
            started = time.monotonic()
            result = await recognise(record["sha256"], data, None if extraction.kind == "image" else page,
                                     extraction.kind, lang)
            spent += time.monotonic() - started
            fresh += 1
            result = {"text": result.get("text", ""), "confidence": round(float(result.get("confidence", 0)), 1),
                      "lang": lang}
            await store.commit([("ocr", key, result)])  # at once: a closed tab keeps this page
        unit.text = result["text"].strip()
        unit.flags = [f for f in unit.flags if f != "needs_ocr"] + ["ocr"]
        if not unit.text:
            unit.flags.append("ocr_empty")
        done[page] = result["confidence"]
    report({"stage": "ocr", "file": record["name"], "done": len(todo), "pages": len(todo), "eta_s": 0})
    return done
