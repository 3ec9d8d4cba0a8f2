"""Train: read every staged source and commit them all at once (the ``Library.train`` half).

Each file is read, chunked and indexed on its own: whatever goes wrong with one
(a damaged file, a reader bug, ``MemoryError``, a missing original) fails that
file with the reason, and the others train.  Only a Cancel, or the final save,
stops the whole Train; then nothing is changed.  Reading yields every
``YIELD_EVERY`` seconds so that the worker hears a Cancel inside a long PDF.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from typing import Callable

from quire import ocr as ocr_pages
from quire import originals
from quire import transcripts
from quire.chunking import chunk_units
from quire.errors import QuireError, traceback_of
from quire.extract import ExtractCancelled, ExtractError, read_steps
from quire.extract.audio import extract_audio
from quire.retrieval.lang import detect_language

Progress = Callable[[dict], None]
LANGUAGES = ("en", "de", "other")
YIELD_EVERY = 0.05  # seconds of reading between chances for the worker to hear a Cancel
STEADY_FROM = 50  # a Train of more files than this reports each file's steps at most every STEADY_S
STEADY_S = 0.1
# A source's passages are one stored value; Chromium refuses values over 133,169,152 bytes,
# and a refused value would sink the whole Train's commit.  (A 100 MB text file hits this.)
MAX_CHUNKS_VALUE = 120 * 1024 * 1024
_log = logging.getLogger("quire.library")


class TrainCancelled(QuireError):
    """Train was cancelled; nothing was committed."""


class Trainer:
    """``Library.train``: the library owns one and lends it its store, stored index, source
    table, passages and reading settings (chunk size, limits, OCR), all through public names."""

    def __init__(self, library):
        self.library = library
        self._searchable: set[str] = set()  # recordings indexed piece by piece during this Train

    async def train(self, progress: Progress | None = None,
                    cancelled: Callable[[], bool] | None = None) -> dict:
        """Commit every staged source.  Returns counts and per-file outcomes.

        Each file is read, chunked and indexed on its own: whatever goes wrong with
        one (a damaged file, a reader bug, MemoryError, a missing original) fails
        that file with the reason, and the others train.  Only a Cancel, or the
        final save, stops the whole Train; then nothing is changed."""
        lib = self.library
        await lib.fresh_index()
        self._searchable = set()
        staged = lib.pending()
        report = _steady(progress or (lambda event: None), len(staged))
        by_sha = {s["sha256"]: s for s in lib.table.values() if s["status"] == "trained" and s["sha256"]}
        by_name = {s["name"]: s for s in lib.table.values() if s["status"] == "trained"}
        counts = {"added": 0, "changed": 0, "skipped": 0, "failed": 0, "files": []}
        puts, deletes, replaced = [], [], []
        indexed: dict[str, tuple[dict, list[dict]]] = {}  # source id -> (trained record, chunks) now in the index
        ahead: dict[str, bytes] = {}  # originals of the next small files, read together
        total = len(staged)
        try:
            for i, record in enumerate(staged, 1):
                if cancelled and cancelled():
                    raise TrainCancelled("Train was cancelled; nothing was changed")
                name = record["name"]
                if record["sha256"] in by_sha:
                    known = by_sha[record["sha256"]]
                    counts["skipped"] += 1
                    counts["files"].append({"name": name, "outcome": "skipped", "note": f"already known as {known['name']}"})
                    deletes += [("sources", record["id"]), *originals.deletes(record["id"], record.get("size"))]
                    report({"stage": "skip", "file": name, "file_index": i, "files": total})
                    continue
                report({"stage": "extract", "file": name, "file_index": i, "files": total})
                await _pause()  # let the worker hear a cancel between files
                step = lambda e: report({**e, "file_index": i, "files": total})  # noqa: E731
                try:
                    data = await _prefetched(lib.store, staged, i - 1, ahead)
                    trained, chunk_dicts = await self._train_one(record, step, cancelled, indexed, data)
                except (TrainCancelled, ExtractCancelled, ocr_pages.OCRStopped, transcripts.TranscriptStopped) as exc:
                    raise TrainCancelled(f"Train was cancelled; nothing was changed ({exc})") from exc
                except Exception as exc:  # MemoryError and reader bugs included: this file fails, the rest train
                    reason = str(exc) if isinstance(exc, ExtractError) else _unexpected(name, exc)
                    counts["failed"] += 1
                    row = {"name": name, "outcome": "failed", "error": reason}
                    detail = exc.detail if isinstance(exc, ExtractError) else None if isinstance(exc, MemoryError) else traceback_of(exc)
                    counts["files"].append({**row, "detail": detail} if detail else row)
                    puts.append(("sources", record["id"], {**record, "status": "failed", "error": reason}))
                    deletes.extend(originals.deletes(record["id"], record.get("size")))
                    if record.get("trained"):  # read again (OCR) and failed: its old passages go too
                        lib.index.remove_source(record["id"])
                        deletes.append(("chunks", record["id"]))
                    elif record["id"] in self._searchable:  # the pieces indexed while it was heard
                        lib.index.remove_source(record["id"])
                        lib.passages.drop(record["id"])
                    report({"stage": "failed", "file": name, "file_index": i, "files": total, "error": reason})
                    continue
                outcome = "changed" if record.get("trained") else "added"  # trained before: read again (OCR)
                old = by_name.get(name)
                if old is not None and old["id"] != record["id"]:
                    outcome = "changed"
                    replaced.append(old)
                trained["replaces"] = old["id"] if old else None
                indexed[record["id"]] = (trained, chunk_dicts)
                puts.append(("sources", record["id"], trained))
                puts.append(("chunks", record["id"], chunk_dicts))
                if not lib.keep_originals:
                    deletes.extend(originals.deletes(record["id"], record.get("size")))
                counts[outcome] += 1
                counts["files"].append({"name": name, "outcome": outcome, "chunks": len(chunk_dicts)})
                report({"stage": "chunked", "file": name, "file_index": i, "files": total, "chunks": len(chunk_dicts)})

            if cancelled and cancelled():
                raise TrainCancelled("Train was cancelled; nothing was changed")
            report({"stage": "index", "files": total, "chunks": sum(len(c) for _, c in indexed.values())})
            await asyncio.sleep(0)
            for old in replaced:
                lib.index.remove_source(old["id"])
                deletes += [("sources", old["id"]), ("chunks", old["id"]), *originals.deletes(old["id"], old.get("size"))]
            report({"stage": "save", "files": total})
            await lib.stored.save(puts, deletes, reload=False)  # the new rows as one segment, with everything else: one commit
        except BaseException:
            await lib.stored.reload()  # the in-memory index must match what is stored
            for source_id in self._searchable:  # and no recording heard in part stays readable
                lib.passages.drop(source_id)
            raise
        for bucket, key in deletes:
            if bucket == "sources":
                lib.table.pop(key, None)
                lib.passages.drop(key)
        for bucket, key, value in puts:
            if bucket == "sources":
                lib.table[key] = value
        for source_id, (_, chunks) in indexed.items():
            lib.passages.keep(source_id, chunks)
        report({"stage": "done", "files": total, **{k: v for k, v in counts.items() if k != "files"}})
        return counts

    async def _read(self, record: dict, data: bytes | None, cancelled) -> tuple[bytes, "Extraction"]:
        """A source's original (read from the store unless given) and what it says."""
        name, lib = record["name"], self.library
        if data is None:
            data = await originals.read(lib.store, record["id"])
        if data is None:
            raise ExtractError(transcripts.missing_original(name))
        steps = read_steps(name, data, max_bytes=lib.max_bytes, limits=lib.limits, cancelled=cancelled)
        paused = time.monotonic()
        while True:
            try:
                next(steps)
            except StopIteration as finished:
                return data, finished.value
            if time.monotonic() - paused > YIELD_EVERY:
                await asyncio.sleep(0)  # a long PDF: let the worker hear a Cancel
                paused = time.monotonic()

    async def _train_one(self, record: dict, report: Progress, cancelled, done: dict[str, tuple[dict, list[dict]]],
                         data: bytes | None = None):
        """Read, OCR or transcribe, chunk and index one staged source: ``(trained record, chunk dicts)``.

        Raises whatever went wrong; the index is then left without this source's
        passages (``done``: the sources this Train has already indexed).  ``data``: its
        original, if already read."""
        name, lib = record["name"], self.library
        if record.get("kind") == "audio":
            # The page reads a recording's original from the store itself (quire.transcripts): a
            # lecture video of hundreds of MB never enters the engine's heap.
            data, extraction = None, extract_audio(b"", name)
        else:
            data, extraction = await self._read(record, data, cancelled)
        ocr_done, ocr_note = {}, None
        if extraction.kind in ("pdf", "image"):
            lang = ocr_pages.tesseract_language(record["language"], lib.ocr_language)
            try:
                ocr_done = await ocr_pages.read_pages(
                    extraction, record, data, lib.recognise, lib.store, lang=lang,
                    force=bool(record.get("force_ocr")), cancelled=cancelled, report=report)
            except ocr_pages.OCRUnavailable as exc:
                ocr_note = f"{exc}: scanned pages stay unsearchable"
            except ocr_pages.OCRStopped:
                raise
            except Exception as exc:  # one unreadable scan must not sink the file
                _log.warning("OCR of %s failed", name, exc_info=True)
                ocr_note = f"OCR failed ({exc}); scanned pages stay unsearchable"
        if extraction.kind == "audio":
            # A recording not trained before is searchable piece by piece while it is transcribed
            # (in this tab's index only; the Train's commit saves it as usual).
            early = None if record.get("trained") else _Searchable(lib, record)
            if early:
                self._searchable.add(record["id"])
            extraction.units, heard = await transcripts.read_recording(
                record, lib.transcribe, lib.store, report=report, cancelled=cancelled,
                heard=early.add if early else None)
            extraction.warnings += heard.pop("warnings", [])
            extraction.meta.update(heard)
        del data
        report({"stage": "chunk", "file": name, "units": len(extraction.units)})
        chunks = chunk_units(record["id"], extraction.units, lib.chunk_size, lib.overlap)
        # A recording's language is the one it was heard in (a short clip has too few words to tell)
        spoken = extraction.meta.get("language") if extraction.kind == "audio" else None
        language = record["language"] or spoken or detect_language(" ".join(c.text for c in chunks[:20]))
        if language not in LANGUAGES:
            language = "other"
        chunk_dicts = [c.to_dict() for c in chunks]
        del chunks
        stored = sum(len(json.dumps(c["text"])) + 200 for c in chunk_dicts)  # as IDBStore will write them
        if stored > MAX_CHUNKS_VALUE:
            raise ExtractError(f"{name} makes {stored / 2**20:.0f} MB of passages, more than the browser stores for "
                               f"one file ({MAX_CHUNKS_VALUE / 2**20:.0f} MB); split it into smaller files")
        await _pause()
        try:
            lib.index.remove_source(record["id"])  # a source read again replaces its own passages
            lib.index.add_chunks(record["id"], [c["chunk_id"] for c in chunk_dicts], [c["text"] for c in chunk_dicts],
                                  category=record["category"], language=language)
        except BaseException:
            await self._rebuild_index(done)  # a half-added source must not stay in the index
            raise
        needs_ocr = [u.location.get("page") for u in extraction.units if "needs_ocr" in u.flags]
        if ocr_note:
            extraction.warnings.append(ocr_note)
        trained = {**record, "status": "trained", "kind": extraction.kind, "language": language,
                   "units": _unit_count(extraction), "unit_label": _unit_label(extraction.kind),
                   "chunks": len(chunk_dicts), "title": extraction.meta.get("title"),
                   "needs_ocr_pages": [p for p in needs_ocr if p], "ocr_pages": {str(p): c for p, c in ocr_done.items()},
                   "warnings": record["warnings"] + extraction.warnings, "trained": time.time(), "error": None}
        return trained, chunk_dicts

    async def _rebuild_index(self, done: dict[str, tuple[dict, list[dict]]]) -> None:
        """The stored index plus the sources this Train has indexed so far."""
        await self.library.stored.reload()
        index = self.library.index
        for source_id, (record, chunk_dicts) in done.items():
            index.remove_source(source_id)
            index.add_chunks(source_id, [c["chunk_id"] for c in chunk_dicts], [c["text"] for c in chunk_dicts],
                                  category=record["category"], language=record["language"])

class _Searchable:
    """A recording's passages in the tab's index as its pieces are heard, so a search during its
    Train finds them (issue 28: a 90-minute lecture trains for most of an hour).  They are
    numbered on from the pieces before; the Train replaces them with the recording's passages
    when it has them all, and drops them if the recording fails or the Train stops."""

    def __init__(self, library, record: dict):
        self.library, self.record, self.held = library, record, []

    def add(self, units) -> None:
        lib, sid = self.library, self.record["id"]
        chunks = [dataclasses.replace(c, n=c.n + len(self.held))
                  for c in chunk_units(sid, units, lib.chunk_size, lib.overlap)]
        if not chunks:
            return
        dicts = [c.to_dict() for c in chunks]
        try:
            lib.index.add_chunks(sid, [c["chunk_id"] for c in dicts], [c["text"] for c in dicts],
                                 category=self.record["category"], language=self.record["language"])
        except ValueError:  # never expected: the Train goes on, and indexes it whole at the end
            _log.warning("a piece of %s could not be indexed early", self.record["name"], exc_info=True)
            return
        self.held += dicts
        lib.passages.keep(sid, self.held)


def _unexpected(name: str, exc: BaseException) -> str:
    """The reason shown for an exception nobody expected; the traceback goes to the console
    (and, as ``detail``, into the file's row of the Train result)."""
    _log.error("training %s failed", name, exc_info=exc)
    if isinstance(exc, MemoryError):
        return f"{name} needs more memory than the browser tab has; split it into smaller files and add those"
    return (f"could not train {name}: {type(exc).__name__}: {str(exc)[:200]} (this is a bug in Quire; "
            "the browser console has the details)")


def _unit_count(extraction) -> int:
    """Pages, slides, sheets or chapters: what a person would count."""
    meta = extraction.meta
    for key in ("pages", "slides", "sheets", "chapters"):
        if key in meta:
            value = meta[key]
            return len(value) if isinstance(value, (list, tuple)) else int(value)
    return len(extraction.units)


def _unit_label(kind: str) -> str:
    return {"pdf": "pages", "pptx": "slides", "xlsx": "sheets", "epub": "chapters", "audio": "pieces"}.get(kind, "sections")


PREFETCH, PREFETCH_BYTES, PREFETCH_FILE = 200, 8 * 2**20, 256 * 2**10


async def _prefetched(store, staged: list[dict], at: int, ahead: dict[str, bytes]) -> bytes | None:
    """The original of ``staged[at]`` if it is small: small files are read up to PREFETCH at a
    time in one store call (``get_many``), not one transaction each (5,000 notes: ~1 ms each in
    the tab).  ``None``: read it the usual way (a large file, a store without ``get_many``)."""
    record = staged[at]
    if record["id"] not in ahead:
        if (record.get("size") or 0) > PREFETCH_FILE or not hasattr(store, "get_many") or record.get("kind") == "audio":
            return None
        ahead.clear()
        batch, total = [], 0
        for r in staged[at:at + 4 * PREFETCH]:
            size = r.get("size") or 0
            if size > PREFETCH_FILE or r.get("kind") == "audio":  # the page reads recordings
                continue
            if len(batch) == PREFETCH or total + size > PREFETCH_BYTES:
                break
            batch.append(r["id"])
            total += size
        found = await store.get_many(originals.BUCKET, batch)
        ahead.update({k: bytes(v) for k, v in found.items() if isinstance(v, (bytes, bytearray, memoryview))})
    return ahead.pop(record["id"], None)


_last_pause = [0.0]


async def _pause() -> None:
    """Give the worker's other tasks (a Cancel) a turn, once per YIELD_EVERY: a turn per small
    file cost as much as reading it (5,000 notes)."""
    if time.monotonic() - _last_pause[0] >= YIELD_EVERY:
        await asyncio.sleep(0)
        _last_pause[0] = time.monotonic()


def _steady(report: Progress, files: int) -> Progress:
    """``report``, but with more than STEADY_FROM files a file's own steps (reading, cutting,
    done, skipped as known) at most every STEADY_S: a Train of 5,000 notes sent 15,000 events
    to the page.  Failures, OCR pages, the last file's steps and the Train's own stages always pass."""
    if files <= STEADY_FROM:
        return report
    last = [0.0]

    def steady(event: dict) -> None:
        if event.get("stage") in ("extract", "chunk", "chunked", "skip") and event.get("file_index") != files:
            now = time.monotonic()
            if now - last[0] < STEADY_S:
                return
            last[0] = now
        report(event)
    return steady
