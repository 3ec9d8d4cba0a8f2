"""The library: stage sources, then Train commits them into the knowledge base in one go
(Train itself lives in ``quire.training``).

Staging only records a file (its bytes and a source record).  ``train()`` extracts,
chunks and indexes every staged source in memory and then writes everything with a
single atomic ``store.commit``: a tab closed mid-Train leaves the library exactly
as it was, with the same sources still staged.

Change detection is by SHA-256 of the content: identical content is skipped
("already known"), a changed file (same name, new content) replaces the old
chunks, anything else is added.  ``train()`` returns the three counts.

>>> import asyncio
>>> from quire.store import MemoryStore
>>> lib = asyncio.run(Library.open(MemoryStore()))
>>> _ = asyncio.run(lib.stage("plan.md", b"# Plan\\nRead chapter 2 before Friday."))
>>> asyncio.run(lib.train())["added"]
1
>>> [h["source"] for h in lib.search("chapter")]
['plan.md']
"""

from __future__ import annotations

import hashlib
import posixpath
import time

from quire import ocr as ocr_pages
from quire import originals
from quire.errors import LibraryError
from quire.extract import MAX_BYTES, MAX_RECORDING_BYTES, ExtractError, Limits, kind_of
from quire.library_index import StoredIndex
from quire.model import location_label, parse_chunk_id
from quire.passages import Passages
from quire.repair import repair_index
from quire.retrieval import segments
from quire.retrieval.index import HybridIndex
from quire.source_table import SourceTable
from quire.store import StoreFullError, full_message
from quire.training import LANGUAGES, Trainer

def _unique_name(name: str, taken: set[str]) -> str:
    """``notes.pdf`` -> ``notes (2).pdf`` when the name is taken by other content."""
    if name not in taken:
        return name
    stem, ext = posixpath.splitext(name)
    n = 2
    while f"{stem} ({n}){ext}" in taken:
        n += 1
    return f"{stem} ({n}){ext}"


class Library:
    """Sources, their passages and the search index, over a ``quire.store`` store.

    It owns its collaborators and calls them: ``table`` (the source records by id),
    ``passages`` (each trained source's chunk records, read once), ``stored`` (the index
    and its stored form) and a ``Trainer`` (``train``)."""

    def __init__(self, store, sources: dict[str, dict] | None = None, *,
                 chunk_size: int = 1000, overlap: int = 100, max_bytes: int = MAX_BYTES,
                 keep_originals: bool = True, recognise=None, ocr_language: str = "auto",
                 defer_vectors: bool = False, transcribe=None):
        self.store = store
        self.table = sources or {}
        self.recognise = recognise  # the OCR engine (quire.ocr.Recognise), or None: scans stay "needs OCR"
        self.ocr_language = ocr_language
        self.transcribe = transcribe  # the speech engine (quire.transcripts.Transcribe), or None: recordings fail saying so
        self.chunk_size, self.overlap, self.max_bytes = chunk_size, overlap, max_bytes
        self.keep_originals = keep_originals
        self.limits = Limits()  # per-file caps for reading (unzip budget, PDF pages, seconds)
        self.repaired: list[str] = []  # sources whose index entries open() had to rebuild
        self.passages = Passages(store)
        self.stored = StoredIndex(store, self.passages, self.trained, self._commit, defer_vectors=defer_vectors)
        self.trainer = Trainer(self)
        self._listing: tuple | None = None  # ((epoch, revision), records): a whole list sent in pages

    @property
    def table(self) -> SourceTable:
        """The source records by id.  A record is replaced, never changed in place."""
        return self._table

    @table.setter
    def table(self, records: dict[str, dict]) -> None:
        self._table = records if isinstance(records, SourceTable) else SourceTable(records)
        self._listing = None  # pages of the old table's list would mix two libraries

    @property
    def index(self) -> HybridIndex:
        return self.stored.index

    def trained(self) -> list[dict]:
        """The trained source records."""
        return [s for s in self._table.values() if s["status"] == "trained"]

    LIST_PAGE = 500  # records per answer of a whole list (sources_since): 15-25 ms of the tab's engine

    def sources_since(self, epoch: str | None = None, revision: int = 0, offset: int = 0) -> dict:
        """What changed in the source list since ``(epoch, revision)``, for a caller keeping
        its own copy: ``{"epoch", "revision", "changed", "removed"}``, with ``"all": true``
        and every record in ``changed`` when it must start over.

        More than ``LIST_PAGE`` records come in pages, so that other calls are answered between
        them (20,000 notes are 10 MB of JSON: half a second of the tab's engine in one piece; a
        Train of 5,000 changes 5,000 records).  An answer with ``"more": n`` has more to come:
        ask again with its epoch and revision and ``offset=n``.  The pages are cut from the
        answer as it was at the first one; what changed meanwhile is then asked for as usual,
        since that first answer's revision.  A page asked of an answer that is gone (the library
        was reloaded, or another answer was paged since) starts over with ``"all": true``."""
        listing = self._listing
        if offset and listing and listing[0] == (epoch, revision):
            return self._page(listing, offset, False, [])
        diff = None if offset else self._table.since(epoch, revision)
        whole = diff is None
        listing = ((self._table.epoch, self._table.revision), list(self._table.values()) if whole else diff["changed"])
        self._listing = listing if len(listing[1]) > self.LIST_PAGE else None
        return self._page(listing, 0, whole, [] if whole else diff["removed"])

    def _page(self, listing: tuple, offset: int, whole: bool, removed: list) -> dict:
        (epoch, revision), records = listing
        end = offset + self.LIST_PAGE
        more = end if end < len(records) else None
        if more is None and self._listing is listing:
            self._listing = None
        return {"epoch": epoch, "revision": revision, "all": whole, "changed": records[offset:end],
                "removed": removed, "more": more}

    @classmethod
    async def open(cls, store, *, repair: str = "save", defer_vectors: bool = False, **options) -> "Library":
        """Load the source list and the saved index, repairing the index if it does not
        match the stored passages (``repair_index``); otherwise no recomputation.
        ``repair="memory"`` leaves saving the repair to ``save_index()`` (the browser
        does that once it holds the one-writer lock).  ``defer_vectors`` attaches the
        cached vectors for later (100k of them: 2-3 s in the tab): ``start_vectors()`` starts the
        read, ``vectors_ready()`` starts it if needed and waits.  Keyword search answers
        meanwhile; query vectors, the embedding status and every change wait for them."""
        saved = await store.get("settings", "library") or {}
        options.setdefault("keep_originals", saved.get("keep_originals", True))
        options.setdefault("ocr_language", saved.get("ocr_language", "auto"))
        sources = await store.all("sources")
        library = cls(store, sources, defer_vectors=defer_vectors, **options)
        await library.stored.read()
        library.repaired = await library.repair_index(save=False)
        if repair == "save" and library.needs_save:
            try:
                await library.save_index()
            except (OSError, LibraryError):  # a full disk: the index in memory still serves this session
                pass
        return library

    # --------------------------------------------------------------- the index
    @property
    def needs_save(self) -> bool:
        """A repair or a migration changed the index in memory only (``save_index`` stores it)."""
        return bool(self.repaired) or self.stored.rewrite_due

    @property
    def merge_due(self) -> bool:
        return self.stored.merge_due

    async def repair_index(self, save: bool = True) -> list[str]:
        """Make the index hold exactly the trained sources' passages (``quire.repair``):
        the names of what it fixed.  With ``save`` the repair is stored at once; otherwise
        ``save_index()`` stores it later."""
        fixed, puts = await repair_index(self.index, self._table, self.store)
        self.stored.hold(puts)
        if fixed and save:
            try:
                await self.save_index()
            except (OSError, LibraryError):  # a full disk: the repaired index still serves this session
                pass
        return fixed

    async def fresh_index(self, vectors: bool = True) -> None:
        await self.stored.fresh(vectors)

    def start_vectors(self):
        return self.stored.start_vectors()

    async def vectors_ready(self) -> None:
        await self.stored.vectors_ready()

    async def save_index(self) -> None:
        """Store what changed in the index in memory, with source records a repair changed."""
        await self.stored.fresh()
        await self.stored.save()

    async def merge_index(self) -> dict:
        return await self.stored.merge()

    async def train(self, progress=None, cancelled=None) -> dict:
        """Commit every staged source (``quire.training``): counts and per-file outcomes."""
        return await self.trainer.train(progress, cancelled)

    def pending(self) -> list[dict]:
        return [s for s in self.sources() if s["status"] == "staged"]

    # ------------------------------------------------------------------ staging
    def sources(self) -> list[dict]:
        return sorted(self._table.values(), key=lambda s: (s["added"], s["name"]))

    def source(self, source_id: str) -> dict:
        if source_id not in self._table:
            raise LibraryError(f"no source with id {source_id!r}")
        return self._table[source_id]

    def categories(self) -> list[str]:
        return sorted({s["category"] for s in self._table.values() if s.get("category")})

    async def stage(self, name: str, data: bytes, *, category: str | None = None,
                    language: str | None = None, force_ocr: bool = False, now: float | None = None) -> dict:
        """Record a file for the next Train.  Problems visible now (empty, too large,
        unsupported type) give a ``failed`` record with the reason; nothing else is lost."""
        return (await self.stage_many([(name, data)], category=category, language=language,
                                      force_ocr=force_ocr, now=now))[0]

    async def stage_many(self, files, *, category: str | None = None, language: str | None = None,
                         force_ocr: bool = False, now: float | None = None) -> list[dict]:
        """``stage`` for ``[(name, data), ...]`` in one commit, a record each: a folder of
        5,000 notes is a few transactions, not 5,000 (the caller bounds a batch's bytes).
        A full disk stages none of the batch and says so."""
        if language is not None and language not in LANGUAGES:
            raise LibraryError(f"unknown language {language!r}; choose one of {', '.join(LANGUAGES)}")
        added = now if now is not None else time.time()
        staged = {s["sha256"]: s for s in self._table.values() if s["status"] == "staged" and s.get("sha256")}
        names = {s["name"] for s in self._table.values() if s["status"] == "staged"}
        records, fresh, puts = [], {}, []
        for i, (name, data) in enumerate(files):
            record = self._new_record(name, data, category, language, force_ocr, added, i, staged, names)
            if record.get("note"):
                records.append(record)
                continue
            if record["status"] == "staged":
                if record["id"] in self._table or record["id"] in fresh:  # identical content, already trained:
                    record["id"] = f"{record['sha256'][:16]}-again"  # Train will skip it
                staged[record["sha256"]] = record
                names.add(record["name"])
                puts += [("sources", record["id"], record), *originals.puts(record["id"], data)]
            else:
                puts.append(("sources", record["id"], record))
            fresh[record["id"]] = record
            records.append(record)
        await self._commit(puts)
        self._table.update(fresh)
        return records

    def _new_record(self, name, data, category, language, force_ocr, added, i, staged, names) -> dict:
        name = posixpath.basename(name.replace("\\", "/")) or "untitled"
        digest = originals.sha256(data)
        if digest in staged:
            return {**staged[digest], "note": "already staged"}
        record = {
            "id": digest[:16], "name": _unique_name(name, names), "original_name": name,
            "kind": None, "size": len(data), "sha256": digest, "category": (category or "").strip() or None,
            "language": language, "status": "staged", "error": None, "units": 0, "chunks": 0,
            "unit_label": None, "needs_ocr_pages": [], "ocr_pages": {}, "force_ocr": bool(force_ocr), "warnings": [],
            "added": added, "trained": None,
        }
        if record["name"] != name:
            record["warnings"].append(f"another staged file is already called {name}; this one is {record['name']}")
        try:
            record["kind"] = kind_of(name, data)
            limit = max(self.max_bytes, MAX_RECORDING_BYTES) if record["kind"] == "audio" else self.max_bytes
            if len(data) > limit:
                what = " for recordings" if record["kind"] == "audio" else ""
                raise ExtractError(f"{name} is too large ({len(data) / 2**20:.0f} MB; the limit{what} is "
                                   f"{limit / 2**20:.0f} MB)")
            if not data:
                raise ExtractError(f"{name} is empty")
        except ExtractError as exc:
            record.update(status="failed", error=str(exc))
            record["id"] = f"failed-{digest[:10]}-{(int(added * 1000) + i) % 10**6}"
        return record

    async def reject(self, name: str, size: int, reason: str, now: float | None = None) -> dict:
        """A file refused before its bytes were read (say, over the size limit): listed as failed."""
        added = now if now is not None else time.time()
        record = {"id": f"failed-{hashlib.sha256(f'{name}{added}'.encode()).hexdigest()[:12]}", "name": name,
                  "original_name": name, "kind": None, "size": size, "sha256": None, "category": None,
                  "language": None, "status": "failed", "error": reason, "units": 0, "chunks": 0,
                  "unit_label": None, "needs_ocr_pages": [], "warnings": [], "added": added, "trained": None}
        await self._commit([("sources", record["id"], record)])
        self._table[record["id"]] = record
        return record

    async def set_keep_originals(self, keep: bool) -> dict:
        """Keeping originals lets citations show the source later; turning it off frees their
        space now (staged files keep theirs until Train, which needs them)."""
        self.keep_originals = bool(keep)
        dropped = [] if keep else [s for s in self._table.values() if s["status"] != "staged"]
        deletes = [d for s in dropped for d in originals.deletes(s["id"], s.get("size"))]
        await self._commit([("settings", "library", self.settings())], deletes)
        return {"keep_originals": self.keep_originals, "removed": len(dropped)}

    def settings(self) -> dict:
        """The library's stored settings."""
        return {"keep_originals": self.keep_originals, "ocr_language": self.ocr_language}

    async def set_ocr_language(self, choice: str) -> dict:
        if choice not in ocr_pages.CHOICES:
            raise LibraryError(f"OCR language must be one of {', '.join(ocr_pages.CHOICES)}")
        self.ocr_language = choice
        await self._commit([("settings", "library", self.settings())])
        return self.settings()

    async def set_force_ocr(self, source_id: str, force: bool) -> dict:
        """Read every page of a PDF with OCR (for a bad text layer); it trains again on the next Train."""
        record = self.source(source_id)
        if record.get("kind") != "pdf":
            raise LibraryError("Only PDFs can be read again with OCR.")
        if record["status"] == "trained" and await self.store.get("originals", source_id) is None:
            raise LibraryError(f"The original of {record['name']} is no longer kept; add the file again to read it with OCR.")
        record = {**record, "force_ocr": bool(force)}
        if record["status"] == "trained":
            record["status"] = "staged"  # its old passages stay searchable until that Train
        await self._commit([("sources", source_id, record)])
        self._table[source_id] = record
        return record

    async def set_language(self, source_id: str, language: str) -> dict:
        """Override a source's detected language: its passages are re-tokenized at once."""
        if language not in LANGUAGES:
            raise LibraryError(f"unknown language {language!r}; choose one of {', '.join(LANGUAGES)}")
        await self.fresh_index()
        record = {**self.source(source_id), "language": language}
        puts = [("sources", source_id, record)]
        if record["status"] == "trained":
            chunks = await self.chunks_of(source_id)
            self.index.remove_source(source_id)
            # Its vectors go too; the embedding cache restores them without calling the model.
            self.index.add_chunks(source_id, [c["chunk_id"] for c in chunks], [c["text"] for c in chunks],
                                  category=record["category"], language=language)
        await self.stored.save(puts)
        self._table[source_id] = record
        if record["status"] == "trained":
            await self.stored.attach_vectors([source_id], self.index)  # from the embedding cache, no model needed
        return record

    async def set_category(self, source_id: str, category: str | None) -> dict:
        # A category moves no row and no vector, and its save writes no segment: it need not wait
        # for the cached vectors read after opening (a rename after a reload waited 235 ms for
        # 11,158 of them; tests/bench/call_waits.py).  Changes to rows still wait.
        await self.fresh_index(vectors=False)
        record = {**self.source(source_id), "category": (category or "").strip() or None}
        if record["status"] == "trained":
            self.index.set_category(source_id, record["category"])
        await self.stored.save([("sources", source_id, record)])
        self._table[source_id] = record
        return record

    async def remove(self, source_id: str) -> dict:
        """Remove a source.  A staged one costs nothing; a trained one leaves the index."""
        await self.fresh_index()
        record = self.source(source_id)
        deletes = [("sources", source_id), ("chunks", source_id), *originals.deletes(source_id, record.get("size"))]
        if record["status"] == "trained":
            self.index.remove_source(source_id)
        await self.stored.save((), deletes)
        del self._table[source_id]
        self.passages.drop(source_id)
        return record

    async def erase_all(self) -> None:
        await self.store.clear()
        self.table, self.stored.index = {}, HybridIndex()
        self.passages.clear()

    # ------------------------------------------------------------------- search
    async def chunks_of(self, source_id: str) -> list[dict]:
        return await self.passages.of(source_id)

    async def load_chunks(self) -> None:
        """Warm the chunk cache for every trained source (one read per source).  Once done it
        stays complete (Train and removals keep it so), and later calls return at once: every
        search calls this, and walking thousands of sources cost more than the search."""
        await self.fresh_index()
        if not self.passages.complete:
            await self.passages.load([s["id"] for s in self.sources() if s["status"] == "trained"])

    def search(self, query: str, k: int = 7, scope=None, query_vector=None) -> list[dict]:
        """Ranked passages with source, location and the retrievers' details.

        Needs the chunks of hit sources in the cache (``await load_chunks()`` once, or use ``find``)."""
        return self._present(self.index.search(query, k=k, scope=self._scope(scope), query_vector=query_vector))

    async def find(self, query: str, k: int = 7, scope=None, query_vector=None) -> list[dict]:
        """``search``, reading the passages of just the sources it hit (a large library opens
        without reading all of them).  Without a query vector it does not wait for vectors."""
        await self.fresh_index(vectors=query_vector is not None)
        hits = self.index.search(query, k=k, scope=self._scope(scope), query_vector=query_vector)
        for source_id in dict.fromkeys(parse_chunk_id(h.id)[0] for h in hits):
            await self.passages.of(source_id)
        return self._present(hits)

    def _present(self, hits) -> list[dict]:
        out = []
        for rank, hit in enumerate(hits, 1):
            source_id, n = parse_chunk_id(hit.id)
            held = self.passages.get(source_id)
            chunk = held[n] if held and n is not None and n < len(held) else None
            source = self._table.get(source_id, {})
            evidence = hit.to_dict()
            del evidence["id"]  # the hit names its passage by "chunk_id" alone
            out.append({"rank": rank, "chunk_id": hit.id, "source_id": source_id, "source": source.get("name"),
                        "location": chunk["location"] if chunk else {}, "location_label":
                        location_label(chunk["location"]) if chunk else "", "text": chunk["text"] if chunk else "",
                        **evidence})
        return out

    def _scope(self, scope):
        """``None``, a category name, or a list of source ids."""
        if scope is None or scope == "" or scope == []:
            return None
        if isinstance(scope, dict):
            if scope.get("category"):
                return scope["category"]
            return list(scope.get("sources") or []) or None
        return scope

    async def restore(self, extra_puts=()) -> int:
        """Write what this library holds into a store the browser recreated empty (after a
        failed write on a full disk): trained sources whose passages are held, those passages,
        the index and the settings, with ``extra_puts``, in one commit.  Trained sources whose
        passages were never read are gone with the database.  Returns how many sources stay."""
        kept = [s for s in self.trained() if self.passages.get(s["id"]) or not s.get("chunks")]
        held = {s["id"] for s in kept}
        for s in self.trained():
            if s["id"] not in held:
                self.index.remove_source(s["id"])
        puts = [*extra_puts, *(("sources", s["id"], s) for s in kept),
                *(("chunks", s["id"], self.passages.get(s["id"]) or []) for s in kept)]
        self.index.stored = None  # the store holds none of it now
        plan = segments.snapshot(self.index)
        await self.store.commit([*puts, *plan.puts, ("settings", "library", self.settings())])
        segments.apply(plan, self.index)
        self.table = {s["id"]: s for s in kept}
        return len(kept)

    # ----------------------------------------------------------------- helpers
    async def _commit(self, puts=(), deletes=()) -> None:
        try:
            await self.store.commit(puts, deletes)
        except StoreFullError as exc:
            raise LibraryError(full_message(exc, self.largest())) from exc

    def largest(self, n: int = 3) -> list[tuple[str, int]]:
        """(name, bytes) of the biggest sources: what to remove when the disk is full."""
        return sorted(((s["name"], int(s.get("size") or 0)) for s in self._table.values()),
                      key=lambda r: -r[1])[:n]


__all__ = ["Library"]
