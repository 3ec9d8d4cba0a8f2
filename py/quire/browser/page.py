"""What the engine says to the page besides a call's answer, and what it asks of it.

- ``emit(call_id, event)``: one call's progress, ``{"type": "event", "id", "event"}``; the page
  hands it to that call's ``onEvent`` (site/assets/boot-calls.js).
- ``notify(event)``: engine news not tied to a call, ``{"type": "engine-event", "event"}``; the
  page fires the document event ``quire:engine-<kind>`` (``_`` as ``-``) with the event as its
  detail.  The bridge passes the bus's ``PAGE_EVENTS`` on this way (badges earned), and the
  LLM transport notes each request it makes (``kind: "request"``, the privacy view's log).
- ``recognise(...)``: OCR through the page, where Tesseract and the canvas live.
- ``transcribe(...)``: a recording's pieces through the page, where WebAudio and Whisper live.
"""

from __future__ import annotations

import json

import js
from pyodide.ffi import JsException, to_js

from quire.browser.idb import js_value
from quire.bus import BADGES_EARNED

# Kinds on the engine's bus (``quire.bus``) that the page hears about through ``notify``.
PAGE_EVENTS = frozenset({BADGES_EARNED})


def emit(call_id: int, event: dict) -> None:
    js.postMessage(js_value({"type": "event", "id": call_id, "event": json.dumps(event)}))


def notify(event: dict) -> None:
    js.postMessage(js_value({"type": "engine-event", "event": json.dumps(event)}))


def from_bus(event: dict) -> None:
    """The engine bus's subscriber in the tab: pass on what the page shows (``PAGE_EVENTS``)."""
    if event.get("kind") in PAGE_EVENTS:
        notify(event)


async def recognise(key: str, data: bytes, page, kind: str, lang: str) -> dict:
    """``quire.ocr.Recognise`` through the page, where Tesseract and the canvas live."""
    from quire.ocr import OCRUnavailable

    args = {"key": key, "data": None, "page": page, "kind": kind, "lang": lang}
    for attempt in range(2):
        try:
            reply = (await js.quirePageCall("ocr", js_value(args))).to_py()
        except JsException as exc:
            if "not included" in str(exc):
                raise OCRUnavailable(str(exc).split(": ", 1)[-1]) from None
            raise
        if not reply.get("needData"):
            return reply
        args["data"] = to_js(data)  # the page did not have this file yet
    raise RuntimeError("the page lost the file it was reading")


async def transcribe(key: str, source_id: str, piece: int, piece_s: float, language: str | None = None) -> dict:
    """``quire.transcripts.Transcribe`` through the page: it decodes the file a few minutes at a
    time, resamples piece ``piece`` to 16 kHz mono and has the voice worker transcribe it in
    ``language`` (None: the page guesses it from this piece and says what it heard).  When the
    page lacks the recording, this worker reads it from the store in JavaScript and sends it: its
    bytes never enter this heap, which WebAssembly can only grow."""
    from quire.extract.base import ExtractError
    from quire.transcripts import MissingOriginal, TranscriptUnavailable

    args = {"key": key, "data": None, "piece": piece, "pieceSeconds": piece_s, "language": language}
    for attempt in range(2):
        try:
            reply = (await js.quirePageCall("transcribe", js_value(args))).to_py()
        except JsException as exc:
            message = str(exc).split(": ", 1)[-1]
            if "not included" in message:
                raise TranscriptUnavailable(message) from None
            raise ExtractError(message) from None  # this recording fails, with the page's reason
        if not reply.get("needData"):
            return reply
        data = await js.QuireStore.library.original(source_id)
        if data is None or data is js.undefined:
            raise MissingOriginal(source_id)
        args["data"] = data  # a JavaScript array: to_js passes it on as it is
    raise RuntimeError("the page lost the recording it was transcribing")
