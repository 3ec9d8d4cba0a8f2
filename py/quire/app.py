"""``Quire``: the engine, as the page (through the worker) and CPython scripts both use it.

The page's calls arrive by name (``window.quire.search`` sends ``"search"``, ``ask`` sends
``"ask"``, ...) and run the handlers in ``quire.services`` (their ``METHODS`` tables);
``Quire.call(name, ...)`` runs the same handlers with the same arguments on CPython.  The
coroutines here are the snake_case conveniences for scripts and tests (``q.train()``,
``q.search(...)``, ``q.generate(...)``), each a thin call into the library or a handler.

>>> import asyncio
>>> from quire.store import MemoryStore
>>> async def demo():
...     q = await Quire.open(MemoryStore())
...     await q.stage("notes.md", b"# Cells\\nMitochondria make ATP.")
...     counts = await q.train()
...     return counts["added"], [h["source"] for h in await q.search("ATP")]
>>> asyncio.run(demo())
(1, ['notes.md'])
"""

from __future__ import annotations

from typing import Callable

from quire import originals
from quire.bus import EventBus
from quire.highlight import highlight_spans
from quire.errors import LibraryError
from quire.library import Library
from quire.training import TrainCancelled
from quire.model import location_label, parse_chunk_id
from quire.llm.events import LLMError
from quire.services.embeddings import Embedder
from quire.services import Methods
from quire.services.llm import LLMService

Emit = Callable[[dict], None]
_METHODS = Methods()  # the services' handlers by the page's name, imported on first use


class Quire:
    """The engine: the library and its search, the model server settings, embeddings, and
    the services (chat, study, progress, vault) that ``call`` reaches by name."""

    def __init__(self, store, library: Library, llm: LLMService):
        from quire.services import progress  # lazy: the services import the engine's helpers

        self.store, self.library, self.llm = store, library, llm
        # Erase all and replacing imports so far: work that began before one (an answer, a study
        # set) saves nothing after it, so nothing of the erased library comes back.
        self.wipes = 0
        self.embedder = Embedder(self)
        self.events = EventBus()  # this engine's study actions; progress listens from the start
        self._owned: dict = {}
        progress.service(self)

    def own(self, name: str, make):
        """What a service keeps for this engine (its service object, a lock), made by ``make()``
        on first use: services hold no state of their own, so each engine has its own."""
        held = self._owned.get(name)
        if held is None:
            held = self._owned[name] = make()
        return held

    @classmethod
    async def open(cls, store, *, transport=None, probe=None, origin=None, platform=None, warm: bool = True,
                   secrets=None, **options) -> "Quire":
        """``transport`` reaches the model server (``FetchTransport`` in the tab; on CPython
        ``quire.llm.transport.BlockingAsyncTransport()``); None means no model server.
        ``secrets`` keeps API keys apart from the library (``quire.browser.secrets`` in the tab;
        in memory by default).  ``warm=False`` leaves reading every passage to the caller (the tab does it after ready:
        searches read what they hit meanwhile)."""
        library = await Library.open(store, **options)
        if warm:
            await library.load_chunks()
        if transport is None:
            from quire.llm.transport import BlockingAsyncTransport
            transport = BlockingAsyncTransport()
        llm = LLMService(store, transport, probe, origin, platform, secrets)
        await llm.load()
        return cls(store, library, llm)

    # -- library ------------------------------------------------------------
    async def stage(self, name: str, data: bytes, category: str | None = None, language: str | None = None) -> dict:
        """Add a file to the staging area; nothing is searchable until ``train()``."""
        return await self.library.stage(name, data, category=category, language=language)

    async def stage_many(self, files, category: str | None = None, language: str | None = None) -> list[dict]:
        """``stage`` for ``[(name, data), ...]`` in one commit (a folder of notes, a batch at a time)."""
        return await self.library.stage_many(files, category=category, language=language)

    async def stage_text(self, name: str, text: str, category: str | None = None) -> dict:
        """Pasted text becomes a Markdown source (headings in it still become sections)."""
        name = name if "." in name else f"{name}.md"
        return await self.library.stage(name, text.encode("utf-8"), category=category)

    async def reject(self, name: str, size: int, reason: str) -> dict:
        """List a file refused before reading (e.g. over the size limit) as failed, with the reason."""
        return await self.library.reject(name, size, reason)

    async def train(self, progress: Emit | None = None, cancelled: Callable[[], bool] | None = None) -> dict:
        """Commit every staged source; returns ``{"added", "changed", "skipped", "failed", "files"}``.

        With an embedding model chosen, new passages are then embedded too (cached per chunk
        hash); if the server is unreachable the Train still stands, keyword search only."""
        counts = await self.library.train(progress, cancelled)
        for f in counts["files"]:
            if f["outcome"] == "added":  # progress checks the source badges now, not at the next question
                self.events.emit({"kind": "source_added", "item": f["name"]})
        # A server's embeddings only: in the tab the page embeds after Train, in the background.
        if self.llm.embed_model and (counts["added"] or counts["changed"] or self.embedder.status()["missing"]):
            try:
                counts["embeddings"] = await self.embedder.embed_missing(progress, cancelled)
            except (LLMError, TrainCancelled) as exc:
                counts["embeddings"] = {"skipped": str(exc)}
        return counts

    def sources(self) -> list[dict]:
        return self.library.sources()

    def categories(self) -> list[str]:
        return self.library.categories()

    async def set_category(self, source_id: str, category: str | None) -> dict:
        return await self.library.set_category(source_id, category)

    async def set_language(self, source_id: str, language: str) -> dict:
        """Override the detected language ("en", "de" or "other"); the source is re-tokenized."""
        return await self.library.set_language(source_id, language)

    async def set_keep_originals(self, keep: bool) -> dict:
        return await self.library.set_keep_originals(keep)

    async def remove(self, source_id: str) -> dict:
        return await self.library.remove(source_id)

    async def erase_all(self) -> None:
        self.wipes += 1
        await self.library.erase_all()

    async def original(self, source_id: str) -> bytes | None:
        """The source's bytes as added (reassembled if it was stored in pieces), or None."""
        return await originals.read(self.store, source_id)

    async def chunks(self, source_id: str) -> list[dict]:
        return await self.library.chunks_of(source_id)

    # -- search -------------------------------------------------------------
    async def search(self, query: str, k: int = 7, scope=None) -> list[dict]:
        """Ranked passages: source, location, text, and each retriever's rank and score."""
        if not query.strip():
            return []
        vector = await self.embedder.query_vector(query)
        hits = await self.library.find(query, k=k, scope=scope, query_vector=vector)
        loading = vector is None and getattr(self.embedder, "model_loading", False)
        for hit in hits:
            if loading:  # by keywords now; the page searches again once the tab's model is in
                hit["dense_status"] = "loading"
            language = self.library.table.get(hit["source_id"], {}).get("language") or "en"
            hit["highlights"] = highlight_spans(hit["text"], query, self.library.index.tokenizer(language))
            if language == "other" and hit.get("relevance") is not None:
                hit["relevance"] = max(hit["relevance"], unstemmed_relevance(query, hit["text"]))
        return hits

    async def passage(self, chunk_id: str, query: str = "") -> dict:
        """A passage in context: its source, location, and the whole page (or slide, section)
        it sits on, with the passage's span in that text."""
        source_id, n = parse_chunk_id(chunk_id)
        chunks = await self.library.chunks_of(source_id)
        if not chunks or n is None or n >= len(chunks):
            raise LibraryError("that passage is no longer in the library (its source was removed or retrained)")
        chunk = chunks[n]
        source = self.library.source(source_id)
        same = [c for c in chunks if c["location"] == chunk["location"]]
        text, offset = stitch(same, chunk)
        language = source.get("language") or "en"
        tokenizer = self.library.index.tokenizer(language)
        return {"chunk": chunk, "source": source, "location_label": location_label(chunk["location"]),
                "context": text, "span": [offset, offset + len(_body(chunk))],
                "highlights": highlight_spans(text, query, tokenizer) if query else []}

    async def usage(self) -> dict:
        return await self.store.usage()

    # -- every other engine method, by its window.quire name ------------------
    async def call(self, method: str, *args, emit: Emit | None = None, cancelled=None, payload: bytes | None = None):
        """Run an engine method by the name the page uses, with the same arguments.

        >>> # await q.call("ask", "What makes ATP?", {"scope": {"category": "Biology"}})
        >>> # await q.call("studyGenerate", "quiz", {"count": 5, "difficulty": "easy"})
        """
        from quire.services import Context

        handler = _METHODS.get(method)
        if handler is None:
            raise LibraryError(f"unknown method {method!r}")
        result = handler(self, Context(emit, cancelled, payload), *args)
        return await result if hasattr(result, "__await__") else result

    async def ask(self, question: str, scope=None, session: str | None = None, emit: Emit | None = None) -> dict:
        """A cited answer (or, with no model, the best passages); see ``window.quire.ask``."""
        return await self.call("ask", question, {"scope": scope, "session": session}, emit=emit)

    async def generate(self, kind: str, scope=None, count: int = 10, difficulty: str = "medium", **opts) -> dict:
        """A quiz, flashcard deck, workshop or mind map from the scope; see ``window.quire.generate``."""
        return await self.call("studyGenerate", kind, {"scope": scope, "count": count, "difficulty": difficulty, **opts})

    async def review(self, deck_id: str) -> dict:
        return await self.call("review", deck_id)

    async def progress(self, tz: int | None = None) -> dict:
        return await self.call("progress", tz)

    async def export_vault(self) -> dict:
        return await self.call("exportVault")

    async def import_vault(self, data: bytes, mode: str = "merge") -> dict:
        return await self.call("importVault", mode, payload=data)


def _body(chunk: dict) -> str:
    """A chunk's text without its breadcrumb prefix."""
    return chunk["text"][len(chunk["text"]) - (chunk["end"] - chunk["start"]):]


def stitch(chunks: list[dict], target: dict) -> tuple[str, int]:
    """Rebuild a unit's text from its overlapping chunks; return it and ``target``'s offset.

    >>> a = {"text": "[S] ab cd", "start": 0, "end": 5}
    >>> b = {"text": "[S] cd ef", "start": 3, "end": 8}
    >>> stitch([a, b], b)
    ('ab cd ef', 3)
    """
    out, covered, offset = "", 0, 0
    for c in sorted(chunks, key=lambda c: c["start"]):
        body = _body(c)
        if c is target:
            offset = c["start"]
        if c["end"] <= covered:
            continue
        if c["start"] > covered:
            out += " " * (c["start"] - covered)
            covered = c["start"]
        out += body[covered - c["start"]:]
        covered = c["end"]
    return out, offset


def unstemmed_relevance(query: str, text: str) -> float:
    """A source in no detected language (a short note, say) is indexed without stemming, so
    its passage says "forms" where the question says "form"; its relevance is the best
    plain share of the question's words under the English or the German stemmer.

    >>> unstemmed_relevance("How does basalt form?", "Basalt forms when lava cools.")
    1.0
    """
    from quire.retrieval.tokenize import Tokenizer

    best = 0.0
    for language in ("en", "de"):
        tokenize = Tokenizer(language)
        terms = set(tokenize(query))
        if terms:
            best = max(best, len(terms & set(tokenize(text))) / len(terms))
    return round(best, 3)


__all__ = ["Quire"]
