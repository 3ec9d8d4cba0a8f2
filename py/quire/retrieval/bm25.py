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
a query touches only its terms' postings; BM25 weights are precomputed per
(term, doc) into a parallel float32 array sharing the same structure, making
a query a column sum (gather + ``np.bincount``).  New documents wait in a
tail of (row, term) pairs and are merged, and weights refreshed, on the next
search.  The CSC arrays are built with numpy alone, not scipy.sparse: scipy
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

from .select import apply_mask, ranked, top_k

_TF_MAX = np.iinfo(np.uint16).max  # term counts are stored as uint16; a chunk never repeats a word 65k times
_FORMAT = 1  # bumped when the to_bytes layout changes
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


class _Postings:
    """CSC without scipy: rows of term ``c`` are ``indices[indptr[c]:indptr[c + 1]]``, sorted.

    >>> p = _Postings.from_pairs(np.array([0, 1, 1, 0]), np.array([1, 0, 0, 1]), np.array([1, 1, 1, 1]), 2, 2)
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
    def empty(cls) -> "_Postings":
        return cls(np.empty(0, np.uint16), np.empty(0, np.int32), np.zeros(1, np.int64), 0)

    @classmethod
    def from_pairs(cls, rows, cols, counts, n_rows: int, n_cols: int) -> "_Postings":
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

    def pairs(self):
        cols = np.repeat(np.arange(self.n_cols, dtype=np.int32), np.diff(self.indptr).astype(np.intp))
        return self.indices, cols, self.data


class BM25Index:
    def __init__(self, k1: float = K1, b: float = B, compact_at: float = 0.25):
        if k1 < 0 or not 0 <= b <= 1 or not 0 < compact_at <= 1:
            raise ValueError("need k1 >= 0, 0 <= b <= 1, 0 < compact_at <= 1")
        self.k1, self.b, self.compact_at = float(k1), float(b), float(compact_at)
        self._vocab: defaultdict[str, int] = defaultdict()
        self._vocab.default_factory = self._vocab.__len__  # unseen term -> next column, at C speed
        self._ids = np.empty(0, dtype=np.int64)
        self._row_of: dict = {}
        self._alive = np.empty(0, dtype=bool)
        self._dl = np.empty(0, dtype=np.int32)
        self._counts = _Postings.empty()
        self._tail: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, cols) of added documents
        self._weights = np.empty(0, dtype=np.float32)  # parallel to self._counts.data
        self._idf = np.empty(0, dtype=np.float32)
        self._stale = False

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
        cols = np.fromiter(map(self._vocab.__getitem__, chain.from_iterable(token_lists)), dtype=np.int32, count=int(lengths.sum()))
        start = self._ids.shape[0]
        rows = np.repeat(np.arange(start, start + len(token_lists), dtype=np.int64), lengths.astype(np.intp))
        self._ids = np.concatenate((self._ids, new_ids)) if start else new_ids
        self._row_of.update(zip(new_ids.tolist(), range(start, start + len(token_lists))))
        self._alive = np.concatenate((self._alive, np.ones(len(token_lists), dtype=bool)))
        self._dl = np.concatenate((self._dl, lengths.astype(np.int32)))
        self._tail.append((rows, cols))
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
        self._counts = _Postings.from_pairs(new_row[rows[live]], cols[live], counts[live], keep.shape[0], len(self._vocab))
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
        cols = [(self._vocab.get(t), m) for t, m in counts.items()]
        cols = [(c, m) for c, m in cols if c is not None and c < self._idf.shape[0]]
        if not cols or n == 0:
            return np.zeros(n)
        indptr, rows = self._counts.indptr, self._counts.indices
        spans = [(indptr[c], indptr[c + 1], m) for c, m in cols]
        hit_rows = np.concatenate([rows[a:z] for a, z, _ in spans])
        hit_w = np.concatenate([self._weights[a:z] * m if m != 1 else self._weights[a:z] for a, z, m in spans])
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
            c = self._vocab.get(t)
            out[t] = float(self._idf[c]) if c is not None and c < self._idf.shape[0] else unseen
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
            c = self._vocab.get(t)
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
        rows, cols, counts = self._counts.pairs()
        rows = np.concatenate([rows.astype(np.int64)] + [r for r, _ in self._tail])
        cols = np.concatenate([cols] + [c for _, c in self._tail])
        counts = np.concatenate([counts.astype(np.int64)] + [np.ones(r.shape[0], np.int64) for r, _ in self._tail])
        self._counts = _Postings.from_pairs(rows, cols, counts, self._ids.shape[0], len(self._vocab))
        self._tail = []

    def _refresh(self) -> None:
        """Recompute idf and per-posting weights over live rows (vectorised, O(nnz))."""
        if not self._stale:
            return
        self._merge_tail()
        c = self._counts
        n_live = len(self._row_of)
        live_posting = self._alive[c.indices]
        col_of_posting = np.repeat(np.arange(c.n_cols, dtype=np.int32), np.diff(c.indptr).astype(np.intp))
        df = np.bincount(col_of_posting[live_posting], minlength=c.n_cols)
        self._idf = np.log1p((n_live - df + 0.5) / (df + 0.5)).astype(np.float32)
        avgdl = float(self._dl[self._alive].mean()) if n_live else 1.0
        norm = self.k1 * (1.0 - self.b + self.b * self._dl / max(avgdl, 1e-9))
        tf = c.data.astype(np.float64)
        w = self._idf[col_of_posting] * tf * (self.k1 + 1.0) / (tf + norm[c.indices])
        self._weights = np.where(live_posting, w, 0.0).astype(np.float32)
        self._stale = False

    def nbytes(self) -> int:
        """Bytes held in arrays (vocabulary strings and id dict not counted)."""
        self._refresh()
        c = self._counts
        return sum(a.nbytes for a in (c.data, c.indices, c.indptr, self._weights, self._idf, self._ids, self._alive, self._dl))

    # -- serialisation ---------------------------------------------------
    def to_bytes(self) -> bytes:
        """Everything, derived weights included, so ``from_bytes`` needs no recomputation."""
        self._refresh()
        c = self._counts
        ids = self._ids
        buf = io.BytesIO()
        np.savez(
            buf,
            format=np.array([_FORMAT]),
            params=np.array([self.k1, self.b, self.compact_at]),
            vocab=np.frombuffer(json.dumps(list(self._vocab)).encode(), dtype=np.uint8),
            ids=ids if ids.dtype.kind != "U" else np.frombuffer(json.dumps(ids.tolist()).encode(), dtype=np.uint8),
            ids_are_str=np.array([ids.dtype.kind == "U"]),
            alive=self._alive, dl=self._dl, indptr=c.indptr, indices=c.indices, data=c.data,
            weights=self._weights, idf=self._idf,
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
        self._vocab.update(zip(terms, range(len(terms))))
        self._ids = np.array(json.loads(z["ids"].tobytes())) if z["ids_are_str"][0] else z["ids"]
        self._alive, self._dl = z["alive"], z["dl"]
        self._row_of = {i: r for r, i in enumerate(self._ids.tolist()) if self._alive[r]}
        self._counts = _Postings(z["data"], z["indices"], z["indptr"], self._ids.shape[0])
        self._weights, self._idf = z["weights"], z["idf"]
        return self
