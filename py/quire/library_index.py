"""The library's stored search index: read, saved by what changed, merged, migrated.

The index lives in the ``index`` bucket as segments (``quire.retrieval.segments``); its
vectors live once, in the embedding cache.  Every library write commits its own records
and the index's changes in one transaction (``save``); a failed commit reloads the index
so that memory matches the store again.  ``Library`` owns one ``StoredIndex`` and calls it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Awaitable, Callable

import numpy as np

from quire.model import parse_chunk_id
from quire.passages import Passages
from quire.retrieval import segments
from quire.retrieval.dense import cache_key
from quire.retrieval.index import HybridIndex

INDEX_KEY = "hybrid"  # the whole index as one blob, before segments (read once, to migrate)
_log = logging.getLogger("quire.library")


class StoredIndex:
    """The ``HybridIndex`` in memory and its stored form.  ``trained()`` gives the library's
    trained source records, ``commit(puts, deletes)`` writes in one transaction (turning a
    full disk into the library's message)."""

    def __init__(self, store, passages: Passages, trained: Callable[[], list[dict]],
                 commit: Callable[..., Awaitable[None]], *, defer_vectors: bool = False):
        self.store, self.passages, self.trained, self.commit = store, passages, trained, commit
        self.index = HybridIndex()
        self.defer_vectors = defer_vectors  # read() leaves attaching the cached vectors for later (the tab)
        self.stale = False  # a failed write could not reload the index (``fresh`` does)
        self._unsaved: list = []  # source records a repair changed (and vectors a migration moved), until a save
        # The stored index must be rewritten whole (old single-blob format, unreadable): these keys go.
        self._rewrite: list[str] | None = None
        self.vectors_task = None
        self._vectors_pending = None  # (source ids, index) whose vectors no one has read yet

    @property
    def rewrite_due(self) -> bool:
        """The stored index is in an old format or unreadable: the next save rewrites it whole."""
        return self._rewrite is not None

    @property
    def merge_due(self) -> bool:
        """Dead rows or segments have piled up: ``merge`` would pay off (the page runs it idle)."""
        return segments.merge_due(self.index)

    def hold(self, puts: list) -> None:
        """Records to write with the next save (a repair's changed source records)."""
        self._unsaved += puts

    async def read(self, values: dict | None = None) -> None:
        """Load the stored segments (``quire.retrieval.segments``); an index in the old
        single-blob format is loaded and marked for rewriting as segments, its vectors
        moved into the embedding cache, their only home now.  An unreadable index is
        logged and rebuilt from the stored passages (``Library.repair_index``)."""
        values = await self.store.all("index") if values is None else values
        self._rewrite = None
        try:
            index = segments.load(values)
        except Exception:
            _log.warning("the stored index could not be read; it is rebuilt from the stored passages", exc_info=True)
            index = None
        if index is None:
            index = HybridIndex()
            if values.get(INDEX_KEY) is not None:
                try:
                    index = HybridIndex.from_bytes(values[INDEX_KEY])
                except Exception:
                    _log.warning("the stored index (old format) could not be read; it is rebuilt", exc_info=True)
            if values:
                self._rewrite = list(values)
        self.index = index
        trained = [s["id"] for s in self.trained()]
        if self._rewrite is not None and index.dense.n_live:
            await self.passages.load(trained)
            self._unsaved += await self._cache_puts(index)
        elif index.dense_model:
            if self.defer_vectors:  # read when first needed, or when the tab is quiet (start_vectors)
                self.vectors_task, self._vectors_pending = None, (trained, index)
            else:
                await self.attach_vectors(trained, index)

    def start_vectors(self):
        """Start attaching the deferred cached vectors (``defer_vectors``) if nothing started
        it yet; the task, or None when nothing is deferred."""
        if self._vectors_pending is not None:
            (trained, index), self._vectors_pending = self._vectors_pending, None
            self.vectors_task = asyncio.ensure_future(self.attach_vectors(trained, index))
        return self.vectors_task

    async def vectors_ready(self) -> None:
        """Wait for the deferred cached vectors, starting their read if it has not started."""
        task = self.start_vectors()
        if task is not None:
            try:
                await asyncio.shield(task)  # a cancelled caller does not cancel the read
            except OSError:  # the store could not be read (a full disk): they stay missing, Search says so
                pass

    async def _cache_puts(self, index: HybridIndex) -> list:
        """The vectors an old-format index held that the embedding cache lacks."""
        have = set(await self.store.keys("vectors"))
        puts = []
        for chunk_id in index.live_ids():
            vector = index.vector_of(chunk_id)
            if vector is None:
                continue
            sid, n = parse_chunk_id(chunk_id)
            chunks = self.passages.get(sid) or []
            if n is not None and n < len(chunks):
                key = cache_key(chunks[n]["hash"], index.dense_model)
                if key not in have:
                    puts.append(("vectors", key, vector.tobytes()))
        return puts

    async def attach_vectors(self, source_ids: list[str], index: HybridIndex) -> None:
        """Give these sources' passages their cached vectors of the index's model: one read of
        that model's vectors, joined into one matrix (per-vector arrays took most of a reopen)."""
        model = index.dense_model
        if not model:
            return
        cached = await self.store.prefixed("vectors", cache_key("", model))
        if index is not self.index:  # reloaded meanwhile (another tab's change): that load attaches its own
            return
        wanted = set(source_ids)
        found, unknown = [], set()
        for chunk_id in index.live_ids():  # their text hashes came with the segments
            sid = parse_chunk_id(chunk_id)[0]
            if sid not in wanted:
                continue
            digest = index.text_hash(chunk_id)
            if digest is None:
                unknown.add(sid)  # a segment saved before hashes were kept
            else:
                blob = cached.get(cache_key(digest, model))
                if blob is not None:
                    found.append((chunk_id, blob))
        live = index.live_ids()
        for sid in unknown:
            for c in await self.passages.of(sid):
                blob = cached.get(cache_key(c["hash"], model))
                if blob is not None and c["chunk_id"] in live:
                    found.append((c["chunk_id"], blob))
        if not found:
            return
        usual = Counter(len(b) for _, b in found).most_common(1)[0][0]  # another length: not this model's
        found = [(i, b) for i, b in found if len(b) == usual and usual % 4 == 0]
        if found:
            matrix = np.frombuffer(b"".join(b for _, b in found), dtype=np.float32).reshape(len(found), -1)
            index.add_vectors([i for i, _ in found], matrix, model)

    def _plan(self, merge: bool = False) -> segments.Plan:
        if merge or self._rewrite is not None:
            return segments.snapshot(self.index, self._rewrite or ())
        return segments.plan(self.index)

    async def save(self, puts=(), deletes=(), merge: bool = False, reload: bool = True) -> None:
        """Commit ``puts``/``deletes`` with what changed in the index, in one transaction.
        A failed commit reloads the index, so memory matches the store again."""
        p = self._plan(merge)  # callers that change the index first call fresh()
        pending = self._unsaved  # a repair's source records, a migration's vectors: they go with any save
        try:
            await self.commit([*pending, *puts, *p.puts], [*deletes, *p.deletes])
        except BaseException:
            if reload:
                await self.reload()
            raise
        segments.apply(p, self.index)
        self._rewrite, self._unsaved = None, []

    async def merge(self) -> dict:
        """Rewrite the index as one segment without dead rows (a background job)."""
        await self.fresh()
        before = self.index.stored.rows if self.index.stored else 0
        await self.save(merge=True)
        return {"rows_before": before, "rows": self.index.stored.rows}

    async def reload(self) -> None:
        """Make the index in memory what is stored again (after a write failed).  When the
        store cannot be read right now (a full disk closes the browser's connection), this
        is left for the next search or save, so that the write's own error is what the
        person reads."""
        try:
            values = await self.store.all("index")
        except OSError:  # StoreError: the connection is reopening
            self.stale = True
            return
        self.stale = False
        trained = self.trained()
        if not values and trained:
            # The stored index is gone while this library holds trained sources: the browser
            # recreated the database after a failed write.  Rebuild it from the passages in memory.
            self.index = HybridIndex()
            for s in trained:
                chunks = self.passages.get(s["id"]) or []
                if chunks:
                    self.index.add_chunks(s["id"], [c["chunk_id"] for c in chunks], [c["text"] for c in chunks],
                                          category=s.get("category"), language=s.get("language"))
            return
        try:
            await self.read(values)
        except OSError:
            self.stale = True

    async def fresh(self, vectors: bool = True) -> None:
        """Reload the index if a failed write left it unlike the store and reading failed then;
        with ``vectors``, first let vectors attached in the background land (every change of
        the index waits for them, so they never meet an index that moved on)."""
        if vectors:
            await self.vectors_ready()
        if self.stale:
            await self.reload()
