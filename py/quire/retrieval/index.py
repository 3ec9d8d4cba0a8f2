"""HybridIndex: BM25 + optional dense vectors over chunks, with scopes.

Languages: there is one BM25 vocabulary, and each source's chunks are
tokenized with that source's language (German stems for German sources).
A query is tokenized once per language present and each row is scored with
the tokens of its own language, so "Häuser" finds German "Haus" and
"houses" finds English "house" in the same library.  Function words of the
query's language carry no weight in any row (query.py: "is" must not find a
German math script).  One shared matrix keeps one idf table and one top-k; the
cost is one postings gather per language.  Cross-language matches (German
query, English text) are the dense side's job.

Every hit carries ``relevance`` (relevance.py: the share of the query's words it
contains) and, with vectors, why the dense side did or did not rank it
(``dense_status``: ranked, below-floor, beyond-top, no-vector, off).

>>> index = HybridIndex()
>>> index.add_chunks("s1", ["s1:0", "s1:1"], ["Error 404B means the page moved.", "Cats sleep a lot."], language="en")
>>> index.add_chunks("s2", ["s2:0"], ["Die Häuser stehen am Fluss."], language="de", category="notes")
>>> [h.id for h in index.search("404B")], [h.id for h in index.search("Haus")]
(['s1:0'], ['s2:0'])
>>> index.search("error", scope="notes")
[]
"""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np

from .bm25 import B, K1, BM25Index
from .definition import defined_terms, field, focus
from .dense import DenseIndex
from .grow import Grown
from .fusion import ANSWER_K, CANDIDATES, DENSE_MIN_Z, FUSION, FUSIONS, Hit, Library, dense_floor, fuse
from .lang import detect_language
from .query import MODES, query_terms
from .relevance import coverage
from .tokenize import Tokenizer

_FORMAT = 1
_DETECT_SAMPLE = 20  # chunks joined to guess a source's language


class HybridIndex:
    """Chunks of many sources; BM25 always, dense when vectors are given.

    ``tokenizers`` maps language -> Tokenizer; languages not in it get a
    default ``Tokenizer(language)`` on first use.
    """

    # serial -> source code, serial -> text hash: grown by add_chunks without a copy per source (grow.py)
    row_source, row_hashes = Grown(), Grown()

    def __init__(self, tokenizers: dict[str, Tokenizer] | None = None, *, k1: float = K1, b: float = B,
                 fusion: str = FUSION, dense_min_z: float = DENSE_MIN_Z, candidates: int = CANDIDATES,
                 query_stopwords: str = MODES[0], fusion_weights: tuple[float, float] | None = None):
        if fusion not in FUSIONS:
            raise ValueError(f"unknown fusion {fusion!r}; valid: {', '.join(FUSIONS)}")
        if query_stopwords not in MODES:
            raise ValueError(f"unknown query stopword mode {query_stopwords!r}; valid: {', '.join(MODES)}")
        self.tokenizers = dict(tokenizers or {})
        self._query_tokenizers: dict[tuple[str, frozenset], Tokenizer] = {}
        self.fusion, self.dense_min_z, self.candidates = fusion, dense_min_z, candidates
        self.fusion_weights = fusion_weights  # (bm25, dense); None = the method's default (fusion.WEIGHTS)
        self.query_stopwords = query_stopwords
        self.bm25 = BM25Index(k1=k1, b=b)
        self.bm25.added = []
        self.dense = DenseIndex()
        self.dense_model: str | None = None  # the embedding model the dense vectors came from
        # The rows and sources below are public for quire.retrieval.segments, the index's stored
        # form, which reads them to save and sets them to load; nothing else changes them.
        self.row_ids: list[str] = []  # serial -> chunk id; retrievers store serials
        self.serial_of: dict[str, int] = {}
        self.row_source = np.empty(0, dtype=np.int32)  # serial -> source code
        # serial -> sha256 of the chunk's text (zeros: not known, an index saved before them):
        # the embedding cache's key, so opening attaches vectors without reading any passage.
        self.row_hashes = np.empty((0, 32), dtype=np.uint8)
        self.by_code: list[dict] = []  # code -> {"id", "category", "language", "live"}
        self.code_of: dict[str, int] = {}
        # Rows added since the last save, as (code, chunk ids, token counts, term columns, hashes):
        # the next save writes them as one segment (quire.retrieval.segments).
        self.unsaved_rows: list[tuple[int, list[str], np.ndarray, np.ndarray, np.ndarray]] = []
        self.stored = None  # segments.Stored: what the store holds, to write only the difference
        # Source codes changed since the last save (None: unknown, every source is compared):
        # a save of one rename among 20,000 sources compares one record, not 20,000.
        self.touched: set[int] | None = None

    def tokenizer(self, language: str) -> Tokenizer:
        if language not in self.tokenizers:
            self.tokenizers[language] = Tokenizer(language)
        return self.tokenizers[language]

    def query_tokenizer(self, language: str, extra: frozenset = frozenset()) -> Tokenizer:
        """The row language's tokenizer, with ``extra`` stopwords dropped too (cached)."""
        if not extra:
            return self.tokenizer(language)
        key = (language, extra)
        if key not in self._query_tokenizers:
            own = self.tokenizer(language)
            self._query_tokenizers[key] = Tokenizer(language, stopwords=own.stopwords | extra,
                                                    stem=own.stems)
        return self._query_tokenizers[key]

    def query_terms(self, query: str) -> dict[str, list[str]]:
        """``{language: terms}`` the query is scored with, per language in the library."""
        present = sorted({s["language"] for s in self.by_code if s["live"]})
        return query_terms(query, present, self.query_tokenizer, self.query_stopwords)

    # -- building -------------------------------------------------------
    def add_chunks(self, source_id: str, chunk_ids, texts, *, category: str | None = None,
                   language: str | None = None, vectors=None) -> None:
        """Index chunks of one source.  ``language=None`` detects it from the text;
        ``vectors`` (one per chunk, any scale) enables dense search for them."""
        chunk_ids, texts = list(chunk_ids), list(texts)
        if len(chunk_ids) != len(texts):
            raise ValueError(f"{len(chunk_ids)} chunk ids for {len(texts)} texts")
        clash = [c for c in chunk_ids if c in self.serial_of]
        if clash or len(set(chunk_ids)) != len(chunk_ids):
            raise ValueError(f"duplicate chunk ids: {clash[:5] or 'within the batch'}")
        code = self.code_of.get(source_id)
        if code is None:
            language = language or detect_language(" ".join(texts[:_DETECT_SAMPLE]))
            code = self.code_of[source_id] = len(self.by_code)
            self.by_code.append({"id": source_id, "category": category, "language": language, "live": True,
                                  "gens": []})
        elif category is not None:
            self.by_code[code]["category"] = category
        self._touch(code)
        tokenize = self.tokenizer(self.by_code[code]["language"])
        serials = list(range(len(self.row_ids), len(self.row_ids) + len(chunk_ids)))
        if vectors is not None:
            self.dense.add(serials, vectors)  # first: it validates shapes before anything is committed
        self.bm25.add(serials, [tokenize(t) + defined_terms(t, tokenize) for t in texts])
        digests = text_hashes(texts)
        if chunk_ids:
            lengths, cols = self.bm25.added.pop()
            self.unsaved_rows.append((code, chunk_ids, lengths, cols, digests))
        self.row_ids.extend(chunk_ids)
        self.serial_of.update(zip(chunk_ids, serials))
        Grown.append(self, "row_source", np.full(len(serials), code, dtype=np.int32))
        Grown.append(self, "row_hashes", digests)

    def text_hash(self, chunk_id: str) -> str | None:
        """sha256 (hex) of the indexed chunk's text, as ``Chunk.hash``; None if not known."""
        serial = self.serial_of.get(chunk_id)
        if serial is None or serial >= len(self.row_hashes) or not self.row_hashes[serial].any():
            return None
        return self.row_hashes[serial].tobytes().hex()

    # -- dense vectors, added after the fact (embedding needs a model server) --
    def add_vectors(self, chunk_ids, vectors, model: str) -> None:
        """Attach embeddings from ``model`` to indexed chunks (replacing older ones).

        Vectors of another model are dropped first: cosines across models mean nothing."""
        if self.dense_model not in (None, model):
            self.clear_vectors()
        self.dense_model = model
        serials = [self.serial_of[c] for c in chunk_ids]
        self.dense.remove(serials)
        self.dense.add(serials, vectors)

    def clear_vectors(self) -> None:
        self.dense, self.dense_model = DenseIndex(), None

    def missing_vectors(self) -> list[str]:
        """Live chunk ids without a vector."""
        have = self.dense.row_of
        return [c for c, s in self.serial_of.items() if have(s) is None]

    def live_ids(self):
        """The chunk ids of every live passage (a view: do not change the index while walking it)."""
        return self.serial_of.keys()

    def vector_of(self, chunk_id: str):
        """The vector attached to a live passage, or None."""
        serial = self.serial_of.get(chunk_id)
        return None if serial is None else self.dense.vector(serial)

    @property
    def n_chunks(self) -> int:
        return len(self.serial_of)

    def set_category(self, source_id: str, category: str | None) -> None:
        """Re-file a source under another category (scopes follow at once)."""
        code = self.code_of.get(source_id)
        if code is not None:
            self.by_code[code]["category"] = category
            self._touch(code)

    def _touch(self, code: int) -> None:
        if self.touched is not None:
            self.touched.add(code)

    def remove_source(self, source_id: str) -> int:
        """Forget every chunk of a source; returns how many were removed."""
        code = self.code_of.pop(source_id, None)
        if code is None:
            return 0
        self.by_code[code]["live"] = False
        self._touch(code)
        serials = np.flatnonzero(self.row_source == code).tolist()
        for s in serials:
            self.serial_of.pop(self.row_ids[s], None)
        self.dense.remove(serials)
        return self.bm25.remove(serials)

    # -- searching ------------------------------------------------------
    def _allowed(self, scope) -> np.ndarray | None:
        """Bool per source code, or None for everything.  A str scope is a category."""
        if scope is None:
            return None
        if isinstance(scope, str):
            return np.array([s["category"] == scope for s in self.by_code], dtype=bool)
        wanted = set(scope)
        return np.array([s["id"] in wanted for s in self.by_code], dtype=bool)

    def search(self, query: str, k: int = ANSWER_K, scope=None, query_vector=None) -> list[Hit]:
        """Top ``k`` chunks for ``query``; ``scope`` is None, a category, or source ids.

        Without ``query_vector`` (or without indexed vectors) this is BM25 order."""
        allowed = self._allowed(scope)
        src = self.row_source[self.bm25.ids]
        mask = None if allowed is None else allowed[src]
        languages = np.array([s["language"] for s in self.by_code], dtype=object)
        terms = self.query_terms(query)
        scored = dict(terms)
        if (term := focus(query)) is not None:  # "What is X?": passages defining X count too (definition.py)
            # X's words that count in the question itself: "Was bedeutet es, ...?" has X = "es", none.
            scored = {lang: tokens + field(t for t in self.query_terms(term).get(lang, []) if t in tokens)
                      for lang, tokens in terms.items()}
        if len(scored) == 1:
            scores = self.bm25.scores(next(iter(scored.values())))
        else:
            row_lang = languages[src] if src.size else np.empty(0, dtype=object)
            scores = np.zeros(src.shape[0])
            for lang, tokens in scored.items():
                rows = row_lang == lang
                scores[rows] = self.bm25.scores(tokens)[rows]
        bm25_hits = self.bm25.select(scores, self.candidates, mask)
        dense_hits, cosines, floor = [], None, None
        if query_vector is not None and self.dense.n_live:
            dmask = None if allowed is None else allowed[self.row_source[self.dense.ids]]
            cosines = self.dense.masked_scores(query_vector, dmask)
            floor = dense_floor(cosines, self.dense_min_z)
            dense_hits = self.dense.select(cosines, self.candidates, floor)
        library = (None, None)
        if cosines is not None:  # z-scores over every in-scope passage, not just the two short lists
            library = (Library.of_array(self.bm25.masked(scores, mask), self.bm25.row_of),
                       Library.of_array(cosines, self.dense.row_of))
        hits = fuse(self.fusion, bm25_hits, dense_hits, k=k, weights=self.fusion_weights, library=library)
        self._explain(hits, terms, languages, cosines, floor)
        for h in hits:
            h.id = self.row_ids[h.id]
        return hits

    def _explain(self, hits: list[Hit], terms: dict, languages: np.ndarray, cosines, floor) -> None:
        """Fill each hit's relevance (share of the query's words it holds) and dense evidence."""
        by_lang: dict[str, list[Hit]] = {}
        for h in hits:
            by_lang.setdefault(languages[self.row_source[h.id]], []).append(h)
        for lang, group in by_lang.items():
            tokens = terms.get(lang, [])
            weights = self.bm25.term_weights(tokens)
            for h, found in zip(group, self.bm25.terms_in(tokens, [h.id for h in group])):
                h.relevance, h.language = round(coverage(weights, found), 3), lang
        for h in hits:
            if cosines is None:
                h.dense_status = "off"
                continue
            h.dense_floor = round(floor, 4) if np.isfinite(floor) else None
            row = self.dense.row_of(h.id)
            if row is None:
                h.dense_status = "no-vector"
            elif h.dense_rank:
                h.dense_status = "ranked"
            else:
                h.dense_score = float(cosines[row])
                h.dense_status = "below-floor" if h.dense_score <= floor else "beyond-top"

    def source_of(self, chunk_id: str) -> str:
        return self.by_code[self.row_source[self.serial_of[chunk_id]]]["id"]

    # -- serialisation ---------------------------------------------------
    def to_bytes(self) -> bytes:
        meta = {
            "format": _FORMAT, "chunk_ids": self.row_ids, "sources": self.by_code,
            "fusion": self.fusion, "dense_min_z": self.dense_min_z, "candidates": self.candidates,
            "query_stopwords": self.query_stopwords, "fusion_weights": self.fusion_weights,
            "dense_model": self.dense_model,
        }
        buf = io.BytesIO()
        np.savez(
            buf,
            meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            source_of=self.row_source,
            bm25=np.frombuffer(self.bm25.to_bytes(), dtype=np.uint8),
            dense=np.frombuffer(self.dense.to_bytes(), dtype=np.uint8),
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, tokenizers: dict[str, Tokenizer] | None = None) -> HybridIndex:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        meta = json.loads(z["meta"].tobytes())
        if meta["format"] != _FORMAT:
            raise ValueError(f"index format {meta['format']}, expected {_FORMAT}")
        # Indexes saved before fusion was selectable carry "min_cosine" instead: they get today's defaults.
        self = cls(tokenizers, fusion=meta.get("fusion", FUSION), dense_min_z=meta.get("dense_min_z", DENSE_MIN_Z),
                   candidates=meta["candidates"], query_stopwords=meta.get("query_stopwords", MODES[0]),
                   fusion_weights=meta.get("fusion_weights"))
        self.bm25 = BM25Index.from_bytes(z["bm25"].tobytes())
        self.bm25.added = []
        self.dense = DenseIndex.from_bytes(z["dense"].tobytes())
        self.row_ids, self.by_code = meta["chunk_ids"], meta["sources"]
        self.dense_model = meta.get("dense_model")
        self.row_source = z["source_of"]
        self.row_hashes = np.zeros((len(self.row_ids), 32), dtype=np.uint8)  # this format kept none
        self.code_of = {s["id"]: c for c, s in enumerate(self.by_code) if s["live"]}
        live = set(self.code_of.values())
        self.serial_of = {c: i for i, c in enumerate(self.row_ids) if int(self.row_source[i]) in live}
        return self


def text_hashes(texts) -> np.ndarray:
    """sha256 of each text, one row of 32 bytes each (``quire.model.sha256_hex`` in binary).

    >>> text_hashes(["a"])[0].tobytes().hex()[:12]
    'ca978112ca1b'
    """
    return np.frombuffer(b"".join(hashlib.sha256(t.encode()).digest() for t in texts),
                         dtype=np.uint8).reshape(-1, 32)
