"""Meaning-based search: embed passages with the configured model, cached per (chunk hash, model).

The model is the embedding server's, or with none configured the tab's own multilingual-e5-small
(``LLMService.embed_in_tab``; the page makes the vectors, quire.browser.embedder).

Vectors live once, in the ``vectors`` bucket keyed by model and chunk hash: the cache that
makes re-Train never re-embed unchanged text (even in a changed file), and what opening
attaches to the index (``StoredIndex.attach_vectors``), so reopening needs no model either.
Embedding writes the new vectors and, when the model changed, the index's small manifest;
never the index itself.  With neither, search stays keyword-only and says so.
"""

from __future__ import annotations

import numpy as np

from quire.errors import LibraryError
from quire.model import parse_chunk_id
from quire.training import TrainCancelled
from quire.llm.events import LLMError
from quire.retrieval.dense import cache_key

class Embedder:
    def __init__(self, engine):
        self.engine = engine
        self._query_cache: dict[tuple[str, str], np.ndarray] = {}

    @property
    def index(self):
        return self.engine.library.index

    def status(self) -> dict:
        """``where``: "tab" when the vectors are made in this tab (no server), "server", or None."""
        llm = self.engine.llm
        model = llm.embed_identity
        index = self.index
        total = index.n_chunks
        same = bool(model) and index.dense_model == model
        missing = len(index.missing_vectors()) if same else total
        # Names as the person knows them: the identity's prefix part ("#server") stays inside.
        shown = llm.embed_name if same else (index.dense_model or "").split("#")[0] or None
        where = ("tab" if llm.embed_in_tab else "server") if model else None
        return {"model": llm.embed_name or None, "index_model": shown, "total": total, "missing": missing,
                "active": same and missing < total, "where": where}

    async def _chunk_map(self, chunk_ids) -> dict[str, dict]:
        """The passages of the sources ``chunk_ids`` belong to."""
        wanted = {parse_chunk_id(c)[0] for c in chunk_ids}
        out = {}
        for source in self.engine.library.sources():
            if source["status"] == "trained" and source["id"] in wanted:
                for chunk in await self.engine.library.chunks_of(source["id"]):
                    out[chunk["chunk_id"]] = chunk
        return out

    async def embed_missing(self, emit=None, cancelled=None, limit: int | None = None) -> dict:
        """Embed the passages that have no vector from the current model: all of them, or the first
        ``limit`` (the tab embeds in such steps, so other writes are not held up for minutes);
        ``remaining`` says how many are still missing after this run.

        Progress goes to ``emit``; a cancel keeps what was embedded so far."""
        emit = emit or (lambda e: None)
        model = self.engine.llm.embed_identity
        if not model:
            raise LibraryError("Choose an embedding model in Settings first.")
        await self.engine.library.vectors_ready()
        index = self.index
        todo = index.missing_vectors() if index.dense_model == model else list(index.live_ids())
        chunks = await self._chunk_map(todo)
        todo = [c for c in todo if c in chunks]
        missing = len(todo)
        if limit is not None:
            todo = todo[:max(1, int(limit))]
        llm = self.engine.llm
        store = self.engine.store
        done = embedded = cached = 0
        emit({"stage": "embed", "done": 0, "total": len(todo), "model": model})
        stopped = False
        try:
            batch_size = llm.embed_batch
            for start in range(0, len(todo), batch_size):
                if cancelled and cancelled():
                    stopped = True
                    break
                batch = todo[start:start + batch_size]
                vectors: dict[str, np.ndarray] = {}
                need = []
                for chunk_id in batch:
                    blob = await store.get("vectors", cache_key(chunks[chunk_id]["hash"], model))
                    if blob is not None:
                        vectors[chunk_id] = np.frombuffer(blob, dtype=np.float32)
                        cached += 1
                    else:
                        need.append(chunk_id)
                if need:
                    got = await llm.embed_texts([chunks[c]["text"] for c in need], "passage")
                    puts = []
                    for chunk_id, vec in zip(need, got):
                        v = np.array(vec, dtype=np.float32)  # a copy: normalised in place (the tab's are read-only)
                        v /= max(float(np.linalg.norm(v)), 1e-12)
                        vectors[chunk_id] = v
                        puts.append(("vectors", cache_key(chunks[chunk_id]["hash"], model), v.tobytes()))
                    await store.commit(puts)
                    embedded += len(need)
                ids = list(vectors)
                index.add_vectors(ids, np.stack([vectors[c] for c in ids]), model)
                done += len(batch)
                emit({"stage": "embed", "done": done, "total": len(todo), "model": model})
        finally:
            if done:
                await self.engine.library.save_index()  # the manifest names the model; vectors are in the cache
        result = {"model": model, "embedded": embedded, "cached": cached, "done": done, "total": len(todo),
                  "remaining": missing - done}
        if stopped:
            raise TrainCancelled(f"Embedding stopped after {done} of {len(todo)} passages; those are kept.")
        return result

    def _missing(self, model: str) -> list[str]:
        index = self.index
        return index.missing_vectors() if index.dense_model == model else list(index.live_ids())

    async def next_missing(self, limit: int) -> dict:
        """The next ``limit`` passages without a vector of the current model, for the page to embed
        with no lock held (the tab's embedding takes seconds a step; a rename must not wait for it):
        ``{model, missing, todo: [{chunk_id, hash, text}], cached: [chunk_id]}``, where ``cached``
        have their vector in the cache already.  Reads only: add_vectors checks it all again.

        >>> import asyncio; from quire.app import Quire; from quire.store import MemoryStore
        >>> q = asyncio.run(Quire.open(MemoryStore()))
        >>> asyncio.run(q.embedder.next_missing(8))
        Traceback (most recent call last):
        quire.errors.LibraryError: Choose an embedding model in Settings first.
        """
        model = self.engine.llm.embed_identity
        if not model:
            raise LibraryError("Choose an embedding model in Settings first.")
        await self.engine.library.vectors_ready()
        missing = self._missing(model)
        todo, cached, store = [], [], self.engine.store
        limit = max(1, int(limit))
        for start in range(0, len(missing), limit):  # a window at a time: a removed source's ids are skipped
            window = missing[start:start + limit]
            chunks = await self._chunk_map(window)
            for chunk_id in window:
                chunk = chunks.get(chunk_id)
                if chunk is None or len(todo) + len(cached) >= limit:
                    continue
                if await store.get("vectors", cache_key(chunk["hash"], model)) is not None:
                    cached.append(chunk_id)
                else:
                    todo.append({"chunk_id": chunk_id, "hash": chunk["hash"], "text": chunk["text"]})
            if len(todo) + len(cached) >= limit:
                break
        return {"model": model, "missing": len(missing), "todo": todo, "cached": cached}

    async def add_vectors(self, model: str, chunk_ids: list[str], hashes: list[str], vectors,
                          cached: list[str]) -> dict:
        """Store the vectors the page made for next_missing's passages (a write: under the lock)
        and attach them and the ``cached`` ones to the index.  What changed in between is left
        out: a passage removed or retrained, or another model chosen meanwhile.
        ``{model, done, embedded, cached, remaining}``."""
        if model != self.engine.llm.embed_identity:
            return {"model": model, "done": 0, "embedded": 0, "cached": 0, "remaining": None, "stale": True}
        wanted = set(self._missing(model))
        chunks = await self._chunk_map([c for c in [*chunk_ids, *cached] if c in wanted])
        store, found, puts = self.engine.store, {}, []
        for chunk_id, digest, vec in zip(chunk_ids, hashes, vectors):
            chunk = chunks.get(chunk_id)
            if chunk is None or chunk["hash"] != digest:
                continue
            v = np.array(vec, dtype=np.float32)  # a copy: normalised in place
            v /= max(float(np.linalg.norm(v)), 1e-12)
            found[chunk_id] = v
            puts.append(("vectors", cache_key(digest, model), v.tobytes()))
        n_cached = 0
        for chunk_id in cached:
            chunk = chunks.get(chunk_id)
            blob = None if chunk is None else await store.get("vectors", cache_key(chunk["hash"], model))
            if blob is not None:
                found[chunk_id] = np.frombuffer(blob, dtype=np.float32)
                n_cached += 1
        if puts:
            await store.commit(puts)
        if found:
            ids = list(found)
            self.index.add_vectors(ids, np.stack([found[c] for c in ids]), model)
            await self.engine.library.save_index()
        return {"model": model, "done": len(found), "embedded": len(puts), "cached": n_cached,
                "remaining": len(self._missing(model))}

    async def query_vector(self, query: str):
        """The query's embedding when the index has vectors of the current model; else None.
        ``model_loading`` then says whether it is None because this tab's model is still loading
        (the search answers by keywords at once instead of waiting 1-2 s for 72 MB of weights)."""
        self.model_loading = False
        model = self.engine.llm.embed_identity
        if model:
            await self.engine.library.vectors_ready()
        if not model or self.index.dense_model != model or not self.index.dense.n_live:
            return None
        key = (model, query)
        if key not in self._query_cache:
            try:
                vec = (await self.engine.llm.embed_texts([query], "query"))[0]
            except LLMError as exc:
                self.model_loading = exc.kind == "loading"
                return None  # the server went away, or the tab's model is loading: keyword search still answers
            if len(self._query_cache) > 256:
                self._query_cache.clear()
            self._query_cache[key] = np.asarray(vec, dtype=np.float32)
        return self._query_cache[key]


async def _status(engine, ctx) -> dict:
    await engine.library.vectors_ready()
    return engine.embedder.status()


async def _embed(engine, ctx, limit=None):
    return await engine.embedder.embed_missing(ctx.emit, ctx.cancelled, limit)


async def _next(engine, ctx, limit=8):
    return await engine.embedder.next_missing(limit)


async def _add(engine, ctx, model, chunk_ids, hashes, cached):
    """The vectors arrive as the call's payload: float32, one after another, in chunk_ids' order."""
    flat = np.frombuffer(ctx.payload or b"", dtype=np.float32)
    vectors = flat.reshape(len(chunk_ids), -1) if chunk_ids else []
    return await engine.embedder.add_vectors(model, chunk_ids, hashes, vectors, cached)


METHODS = {
    "embeddingStatus": _status,
    "embed": _embed,
    "embedNext": _next,
    "embedAdd": _add,
}
