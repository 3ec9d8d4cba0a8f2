"""BM25 over a term-major sparse matrix (numpy only), incremental and serialisable.

score(q, d) = sum over query terms t of
    idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))
with Lucene's idf(t) = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5)), which is
never negative (rank_bm25's Okapi idf goes negative for common terms).

Hand-worked, k1=1.5, b=0.75, three docs ["a b", "a c c", "d"]: N=3, avgdl=2.
For query "c": df=1, idf = ln(1 + 2.5/1.5) = ln(2.6667) = 0.98083.  Doc 2 has
tf=2, |d|=3: 0.98083 * 2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 1.5)) =
0.98083 * 5 / 4.0625 = 1.20717; docs 1 and 3 score 0 and are not returned.

>>> index = BM25Index(k1=1.5, b=0.75)
>>> index.add([1, 2, 3], [["a", "b"], ["a", "c", "c"], ["d"]])
>>> [(i, round(s, 5)) for i, s in index.search(["c"], k=3)]
[(2, 1.20717)]

Layout: counts live in CSC arrays (one column per term, row = document) so
a query touches only its terms' postings; a query computes the BM25 weights of
just those postings and sums them per row (gather + ``np.bincount``).  Nothing
is precomputed per posting: after an edit only N, avgdl and each row's length
norm are refreshed (O(rows)), so the first search after a Train does not walk
every posting of the library (16M at 100k passages).  New documents wait in a
tail of (row, term) pairs and are merged on the next search.  The CSC arrays are built with numpy alone, not scipy.sparse: scipy
(13 MB) loads in the background in the browser, and search must work before.  Removed
documents are tombstoned (never returned, excluded from N, df and avgdl) and
physically dropped once they exceed ``compact_at`` of the rows.
"""

from __future__ import annotations

import io
import json
from collections import Counter, defaultdict
from itertools import chain

import numpy as np

from .grow import Grown
from .select import apply_mask, ranked, top_k

_TF_MAX = np.iinfo(np.uint16).max  # term counts are stored as uint16; a chunk never repeats a word 65k times
_FORMAT = 1  # bumped when the to_bytes layout changes
CACHE_MIN, CACHE_POSTINGS = 2048, 4_000_000  # cache a column's weights from this length; 16 MB at most
K1, B = 1.5, 0.75  # rank_bm25/bm25s defaults; also best of a small grid on SciFact *train* queries


def stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` for non-negative integers, as 16-bit radix passes.

    numpy radix-sorts 16-bit keys; wider keys fall back to timsort, which in Pyodide
    (no SIMD) took 18 s for the 16.6M postings of 100k chunks against 2 s this way.

    >>> stable_order(np.array([70000, 3, 70000, 2, 3])).tolist()
    [3, 1, 4, 0, 2]
    """
    values = np.asarray(values)
    if values.shape[0] == 0:
        return np.empty(0, dtype=np.intp)
    wide = values.astype(np.int64, copy=False)
    top = int(wide.max())
    if int(wide.min()) < 0:
        raise ValueError("stable_order sorts non-negative integers")
    order, shift = None, 0
    while True:
        digits = (((wide if order is None else wide[order]) >> shift) & 0xFFFF).astype(np.uint16)
        step = np.argsort(digits, kind="stable")
        order = step if order is None else order[step]
        shift += 16
        if top >> shift == 0:
            return order


class Postings:
    """CSC without scipy: rows of term ``c`` are ``indices[indptr[c]:indptr[c + 1]]``, sorted.

    >>> p = Postings.from_pairs(np.array([0, 1, 1, 0]), np.array([1, 0, 0, 1]), np.array([1, 1, 1, 1]), 2, 2)
    >>> p.indptr.tolist(), p.indices.tolist(), p.data.tolist()
    ([0, 1, 2], [1, 0], [2, 2])
    """

    __slots__ = ("data", "indices", "indptr", "n_rows")

    def __init__(self, data, indices, indptr, n_rows: int):
        self.data, self.indices, self.indptr, self.n_rows = data, indices, indptr, int(n_rows)

    @property
    def n_cols(self) -> int:
        return self.indptr.shape[0] - 1

    @classmethod
    def empty(cls) -> "Postings":
        return cls(np.empty(0, np.uint16), np.empty(0, np.int32), np.zeros(1, np.int64), 0)

    @classmethod
    def from_pairs(cls, rows, cols, counts, n_rows: int, n_cols: int) -> "Postings":
        """Sum duplicate (row, col) pairs and lay them out column-major.

        Sorting is by 16-bit radix passes (:func:`stable_order`): by column only when rows
        already ascend inside each column (documents are appended in row order), else by
        row and then column.
        """
        rows, cols, counts = np.asarray(rows), np.asarray(cols), np.asarray(counts)
        order = stable_order(cols)
        rows, cols, counts = rows[order], cols[order], counts[order]
        if rows.shape[0] > 1 and np.any((cols[1:] == cols[:-1]) & (rows[1:] < rows[:-1])):
            order = stable_order(rows)
            order = order[stable_order(cols[order])]
            rows, cols, counts = rows[order], cols[order], counts[order]
        if rows.shape[0]:
            first = np.empty(rows.shape[0], dtype=bool)
            first[0] = True
            np.not_equal(cols[1:], cols[:-1], out=first[1:])
            first[1:] |= rows[1:] != rows[:-1]
            starts = np.flatnonzero(first)
            rows, cols = rows[starts], cols[starts]
            counts = np.add.reduceat(counts.astype(np.int64), starts)
        indptr = np.concatenate(([0], np.cumsum(np.bincount(cols.astype(np.intp), minlength=n_cols)))).astype(np.int64)
        return cls(np.minimum(counts, _TF_MAX).astype(np.uint16), rows.astype(np.int32), indptr, n_rows)

    def appended(self, rows, cols, counts, n_rows: int, n_cols: int) -> "Postings":
        """These postings plus new ones whose rows all come after the existing rows.

        No sort of the whole: each column keeps its old postings and gets the new ones
        after them, placed by a counting scatter (O(postings)).  Adding a 10-page PDF
        to 100k chunks re-sorted all 16.6M postings before.

        >>> p = Postings.from_pairs(np.array([0, 1]), np.array([1, 0]), np.array([1, 1]), 2, 2)
        >>> q = p.appended(np.array([2, 2, 3]), np.array([1, 2, 1]), np.array([1, 1, 1]), 4, 3)
        >>> q.indptr.tolist(), q.indices.tolist()
        ([0, 1, 4, 5], [1, 0, 2, 3, 2])
        """
        new = Postings.from_pairs(rows, cols, counts, n_rows, n_cols)
        old_counts = np.zeros(n_cols, dtype=np.int64)
        old_counts[: self.n_cols] = np.diff(self.indptr)
        new_counts = np.diff(new.indptr)
        indptr = np.zeros(n_cols + 1, dtype=np.int64)
        np.cumsum(old_counts + new_counts, out=indptr[1:])
        nnz = int(indptr[-1])
        data, indices = np.empty(nnz, dtype=np.uint16), np.empty(nnz, dtype=np.int32)
        # old posting j of column c moves by (indptr[c] - old indptr[c]); new ones follow the old.
        shift_old = (indptr[:-1] - np.concatenate((self.indptr[:-1], np.full(n_cols - self.n_cols, self.indptr[-1]))))
        dest = np.arange(self.indices.shape[0], dtype=np.int64) + np.repeat(shift_old, old_counts.astype(np.intp))
        data[dest], indices[dest] = self.data, self.indices
        shift_new = indptr[:-1] + old_counts - new.indptr[:-1]
        dest = np.arange(new.indices.shape[0], dtype=np.int64) + np.repeat(shift_new, new_counts.astype(np.intp))
        data[dest], indices[dest] = new.data, new.indices
        return Postings(data, indices, indptr, n_rows)

    def pairs(self):
        cols = np.repeat(np.arange(self.n_cols, dtype=np.int32), np.diff(self.indptr).astype(np.intp))
        return self.indices, cols, self.data


class BM25Index:
    # Per row, grown by add() without a copy per add (grow.py).
    _ids, _alive, _dl = Grown(), Grown(), Grown()

    def __init__(self, k1: float = K1, b: float = B, compact_at: float = 0.25):
        if k1 < 0 or not 0 <= b <= 1 or not 0 < compact_at <= 1:
            raise ValueError("need k1 >= 0, 0 <= b <= 1, 0 < compact_at <= 1")
        self.k1, self.b, self.compact_at = float(k1), float(b), float(compact_at)
        self.vocab: defaultdict[str, int] = defaultdict()
        self.vocab.default_factory = self.vocab.__len__  # unseen term -> next column, at C speed
        self._ids = np.empty(0, dtype=np.int64)
        self._row_of: dict = {}
        self._alive = np.empty(0, dtype=bool)
        self._dl = np.empty(0, dtype=np.int32)
        self._counts = Postings.empty()
        self._tail: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, cols) of added documents
        self._norm = np.empty(0, dtype=np.float64)  # per row: k1 * (1 - b + b * |d| / avgdl)
        self._n_live = 0  # N as of the last refresh
        self._cache: dict[int, np.ndarray] = {}  # weights of long columns, until the next refresh
        self._cached = 0  # postings held in _cache
        self._stale = False
        # When a list: (token counts, term columns) of every add, for an owner that saves
        # them as a segment without tokenizing again (HybridIndex takes each entry at once).
        self.added: list[tuple[np.ndarray, np.ndarray]] | None = None

    # -- building -------------------------------------------------------
    def add(self, ids, token_lists) -> None:
        """Append documents.  ``ids`` are ints or strs, unique among live documents."""
        token_lists = list(token_lists)
        new_ids = np.asarray(list(ids))
        if new_ids.shape[0] != len(token_lists):
            raise ValueError(f"{new_ids.shape[0]} ids for {len(token_lists)} token lists")
        if not token_lists:
            return
        if new_ids.dtype.kind not in "iuU":
            raise ValueError(f"ids must be ints or strs, got {new_ids.dtype}")
        dupes = [i for i in new_ids.tolist() if i in self._row_of]
        if dupes or len(set(new_ids.tolist())) != len(token_lists):
            raise ValueError(f"duplicate ids: {dupes[:5] or 'within the batch'}")
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
        cols = np.fromiter(map(self.vocab.__getitem__, chain.from_iterable(token_lists)), dtype=np.int32, count=int(lengths.sum()))
        start = Grown.size(self, "_ids")
        rows = np.repeat(np.arange(start, start + len(token_lists), dtype=np.int64), lengths.astype(np.intp))
        if start:
            Grown.append(self, "_ids", new_ids)
        else:
            self._ids = new_ids
        self._row_of.update(zip(new_ids.tolist(), range(start, start + len(token_lists))))
        Grown.append(self, "_alive", np.ones(len(token_lists), dtype=bool))
        Grown.append(self, "_dl", lengths.astype(np.int32))
        self._tail.append((rows, cols))
        if self.added is not None:
            self.added.append((lengths, cols))
        self._stale = True

    def remove(self, ids) -> int:
        """Tombstone documents by id; unknown ids are ignored.  Returns how many were removed."""
        rows = [self._row_of.pop(i) for i in ids if i in self._row_of]
        if rows:
            self._alive[rows] = False
            self._stale = True
            if self.n_dead > self.compact_at * self._alive.shape[0]:
                self.compact()
        return len(rows)

    def compact(self) -> None:
        """Drop tombstoned rows now (terms no longer used keep their column)."""
        self._merge_tail()
        keep = np.flatnonzero(self._alive)
        new_row = np.cumsum(self._alive) - 1
        rows, cols, counts = self._counts.pairs()
        live = self._alive[rows]
        self._counts = Postings.from_pairs(new_row[rows[live]], cols[live], counts[live], keep.shape[0], len(self.vocab))
        self._ids, self._dl = self._ids[keep], self._dl[keep]
        self._alive = np.ones(keep.shape[0], dtype=bool)
        self._row_of = dict(zip(self._ids.tolist(), range(keep.shape[0])))
        self._stale = True

    # -- searching ------------------------------------------------------
    @property
    def ids(self) -> np.ndarray:
        """Id of every row, dead ones included; masks are aligned with this."""
        return self._ids

    @property
    def n_live(self) -> int:
        return len(self._row_of)

    @property
    def n_dead(self) -> int:
        return self._alive.shape[0] - len(self._row_of)

    def scores(self, query_tokens) -> np.ndarray:
        """BM25 score of every row (dead rows score 0).  Repeated query terms count repeatedly."""
        self._refresh()
        n = self._alive.shape[0]
        counts = Counter(query_tokens)
        cols = [(self.vocab.get(t), m) for t, m in counts.items()]
        cols = [(c, m) for c, m in cols if c is not None and c < self._counts.n_cols]
        if not cols or n == 0:
            return np.zeros(n)
        indptr, rows = self._counts.indptr, self._counts.indices
        hit_rows = np.concatenate([rows[indptr[c]:indptr[c + 1]] for c, _ in cols])
        hit_w = np.concatenate([self._column_weights(c) * m if m != 1 else self._column_weights(c) for c, m in cols])
        return np.bincount(hit_rows, weights=hit_w, minlength=n)

    def search(self, query_tokens, k: int = 10, mask: np.ndarray | None = None) -> list[tuple[object, float]]:
        """Best ``k`` live rows with score > 0, restricted to ``mask`` (bool per row of ``ids``)."""
        return self.select(self.scores(query_tokens), k, mask)

    def select(self, scores: np.ndarray, k: int = 10, mask: np.ndarray | None = None) -> list[tuple[object, float]]:
        """Top ``k`` of per-row ``scores`` (e.g. summed from several ``scores`` calls), live and > 0 only."""
        scores = apply_mask(scores, self._alive, mask)
        return ranked(self._ids, scores, top_k(scores, k, floor=0.0))

    def masked(self, scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """``scores`` with dead and out-of-``mask`` rows at -inf."""
        return apply_mask(scores, self._alive, mask)

    def row_of(self, doc_id) -> int | None:
        return self._row_of.get(doc_id)

    def term_weights(self, query_tokens) -> dict[str, float]:
        """idf of each distinct query term; a term no live row holds gets the idf of df = 0.

        >>> index = BM25Index()
        >>> index.add([1, 2, 3], [["a", "b"], ["a", "c", "c"], ["d"]])
        >>> {t: round(w, 3) for t, w in index.term_weights(["c", "zebra"]).items()}
        {'c': 0.981, 'zebra': 2.079}
        """
        self._refresh()
        unseen = float(np.log1p((len(self._row_of) + 0.5) / 0.5))
        out = {}
        for t in dict.fromkeys(query_tokens):
            c = self.vocab.get(t)
            out[t] = float(self._column_idf(c)) if c is not None and c < self._counts.n_cols else unseen
        return out

    def terms_in(self, query_tokens, ids) -> list[set[str]]:
        """For each id, the query terms its row contains (postings are sorted by row: a binary search each).

        >>> index = BM25Index()
        >>> index.add([1, 2], [["a", "b"], ["b", "c"]])
        >>> [sorted(s) for s in index.terms_in(["a", "b", "x"], [2, 1, 9])]
        [['b'], ['a', 'b'], []]
        """
        self._refresh()
        rows = np.array([self._row_of.get(i, -1) for i in ids], dtype=np.int64)
        out: list[set[str]] = [set() for _ in rows]
        indptr, indices = self._counts.indptr, self._counts.indices
        for t in dict.fromkeys(query_tokens):
            c = self.vocab.get(t)
            if c is None or c >= indptr.shape[0] - 1:
                continue
            postings = indices[indptr[c]:indptr[c + 1]]
            pos = np.minimum(np.searchsorted(postings, rows), max(postings.shape[0] - 1, 0))
            found = (postings[pos] == rows) if postings.shape[0] else np.zeros(rows.shape[0], bool)
            for j in np.flatnonzero(found & (rows >= 0)).tolist():
                out[j].add(t)
        return out

    # -- derived state --------------------------------------------------
    def _merge_tail(self) -> None:
        if not self._tail:
            return
        rows = np.concatenate([r for r, _ in self._tail])
        cols = np.concatenate([c for _, c in self._tail])
        self._counts = self._counts.appended(rows, cols, np.ones(rows.shape[0], np.int64),
                                             self._ids.shape[0], len(self.vocab))
        self._tail = []

    def _refresh(self) -> None:
        """After an edit: merge added rows, then N, avgdl and each row's length norm (O(rows))."""
        if not self._stale:
            return
        self._merge_tail()
        self._n_live = len(self._row_of)
        avgdl = float(self._dl[self._alive].mean()) if self._n_live else 1.0
        self._norm = self.k1 * (1.0 - self.b + self.b * self._dl / max(avgdl, 1e-9))
        self._cache, self._cached = {}, 0
        self._stale = False

    def _column_idf(self, c: int) -> np.float32:
        """idf of term column ``c`` over live rows (its df counted from its own postings)."""
        a, z = self._counts.indptr[c], self._counts.indptr[c + 1]
        df = z - a if self._n_live == self._alive.shape[0] else int(np.count_nonzero(self._alive[self._counts.indices[a:z]]))
        return np.float32(np.log1p((self._n_live - df + 0.5) / (df + 0.5)))

    def _column_weights(self, c: int) -> np.ndarray:
        """BM25 weight of each posting of term column ``c`` (0 for dead rows), float32.  Common
        terms' columns are kept until the next edit (at most CACHE_POSTINGS postings in all)."""
        hit = self._cache.get(c)
        if hit is not None:
            return hit
        a, z = self._counts.indptr[c], self._counts.indptr[c + 1]
        rows = self._counts.indices[a:z]
        tf = self._counts.data[a:z].astype(np.float64)
        w = self._column_idf(c) * tf * (self.k1 + 1.0) / (tf + self._norm[rows])
        if self._n_live != self._alive.shape[0]:
            w[~self._alive[rows]] = 0.0
        w = w.astype(np.float32)
        if z - a >= CACHE_MIN and self._cached + (z - a) <= CACHE_POSTINGS:
            self._cache[c], self._cached = w, self._cached + (z - a)
        return w

    def _all_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights per posting, idf per term) of the whole index, vectorised over every posting:
        only ``to_bytes`` stores them (the format has them); searching never needs them all."""
        self._refresh()
        c = self._counts
        col = np.repeat(np.arange(c.n_cols, dtype=np.int32), np.diff(c.indptr).astype(np.intp))
        live = self._alive[c.indices]
        df = np.bincount(col[live], minlength=c.n_cols)
        idf = np.log1p((self._n_live - df + 0.5) / (df + 0.5)).astype(np.float32)
        tf = c.data.astype(np.float64)
        w = idf[col] * tf * (self.k1 + 1.0) / (tf + self._norm[c.indices])
        return np.where(live, w, 0.0).astype(np.float32), idf

    def nbytes(self) -> int:
        """Bytes held in arrays (vocabulary strings and id dict not counted)."""
        self._refresh()
        c = self._counts
        return sum(a.nbytes for a in (c.data, c.indices, c.indptr, self._norm, self._ids, self._alive, self._dl))

    # -- serialisation ---------------------------------------------------
    def to_bytes(self) -> bytes:
        """Everything, derived weights included (the stored format has them; ``from_bytes`` recomputes)."""
        weights, idf = self._all_weights()
        c = self._counts
        ids = self._ids
        buf = io.BytesIO()
        np.savez(
            buf,
            format=np.array([_FORMAT]),
            params=np.array([self.k1, self.b, self.compact_at]),
            vocab=np.frombuffer(json.dumps(list(self.vocab)).encode(), dtype=np.uint8),
            ids=ids if ids.dtype.kind != "U" else np.frombuffer(json.dumps(ids.tolist()).encode(), dtype=np.uint8),
            ids_are_str=np.array([ids.dtype.kind == "U"]),
            alive=self._alive, dl=self._dl, indptr=c.indptr, indices=c.indices, data=c.data,
            weights=weights, idf=idf,
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> BM25Index:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        if int(z["format"][0]) != _FORMAT:
            raise ValueError(f"BM25 index format {int(z['format'][0])}, expected {_FORMAT}")
        k1, b, compact_at = z["params"].tolist()
        self = cls(k1=k1, b=b, compact_at=compact_at)
        terms = json.loads(z["vocab"].tobytes())
        self.vocab.update(zip(terms, range(len(terms))))
        self._ids = np.array(json.loads(z["ids"].tobytes())) if z["ids_are_str"][0] else z["ids"]
        self._alive, self._dl = z["alive"], z["dl"]
        self._row_of = {i: r for r, i in enumerate(self._ids.tolist()) if self._alive[r]}
        self._counts = Postings(z["data"], z["indices"], z["indptr"], self._ids.shape[0])
        self._stale = True  # N, avgdl and the norms: O(rows) on the first search
        return self

    @classmethod
    def from_parts(cls, terms: list[str], ids: np.ndarray, alive: np.ndarray, dl: np.ndarray, postings: Postings,
                   k1: float = K1, b: float = B) -> BM25Index:
        """A BM25Index over stored postings (``quire.retrieval.segments``): nothing re-tokenized or
        re-sorted; the first search refreshes N, avgdl and the row norms (O(rows))."""
        self = cls(k1=k1, b=b)
        self.vocab.update(zip(terms, range(len(terms))))
        self._ids, self._alive, self._dl, self._counts = ids, alive, dl, postings
        self._row_of = dict(zip(ids[alive].tolist(), np.flatnonzero(alive).tolist()))
        self._stale = True
        return self

    def live_postings(self) -> tuple[np.ndarray, np.ndarray, Postings]:
        """``(ids, dl, postings)`` of the live rows only, renumbered (what a merged segment stores)."""
        self._merge_tail()
        keep = np.flatnonzero(self._alive)
        if keep.shape[0] == self._alive.shape[0]:
            return self._ids, self._dl, self._counts
        new_row = np.cumsum(self._alive) - 1
        c = self._counts
        live = self._alive[c.indices]
        cols = np.repeat(np.arange(c.n_cols, dtype=np.int64), np.diff(c.indptr).astype(np.intp))[live]
        indptr = np.zeros(c.n_cols + 1, dtype=np.int64)
        np.cumsum(np.bincount(cols.astype(np.intp), minlength=c.n_cols), out=indptr[1:])
        postings = Postings(c.data[live], new_row[c.indices[live]].astype(np.int32), indptr, keep.shape[0])
        return self._ids[keep], self._dl[keep], postings
