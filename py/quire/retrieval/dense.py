"""Exact dense search: L2-normalised float32 rows, cosine = matrix-vector product.

>>> index = DenseIndex()
>>> index.add(["a", "b"], [[1.0, 0.0], [0.6, 0.8]])
>>> [(i, round(s, 2)) for i, s in index.search([1.0, 1.0], k=2)]
[('b', 0.99), ('a', 0.71)]

Instruction prefixes (``query_text`` / ``doc_text``) live in ``prefixes``.  Embeddings
are cached by (chunk hash, model): ``missing_hashes`` says what a re-Train must embed.
"""

from __future__ import annotations

import io
import json

import numpy as np

from .kernels import matvec
from .prefixes import EMBED_PREFIXES, doc_text, model_family, query_text  # noqa: F401  (their old home)
from .select import apply_mask, ranked, top_k

_FORMAT = 1

def cache_key(chunk_hash: str, model: str) -> str:
    """Cache key; a ``:latest`` tag names the same weights as no tag."""
    return f"{model.removesuffix(':latest')}\x00{chunk_hash}"


def missing_hashes(chunk_hashes, model: str, cached_keys) -> list[str]:
    """Chunk hashes that still need embedding with ``model``, in first-seen order, without repeats.

    >>> missing_hashes(["h1", "h2", "h1", "h3"], "m", {cache_key("h2", "m:latest")})
    ['h1', 'h3']
    """
    seen = set()
    out = []
    for h in chunk_hashes:
        if h not in seen and cache_key(h, model) not in cached_keys:
            out.append(h)
        seen.add(h)
    return out


def normalise(vectors) -> np.ndarray:
    """Rows scaled to unit length, float32; zero rows stay zero."""
    m = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1, norms)


class DenseIndex:
    def __init__(self, dim: int | None = None, compact_at: float = 0.25):
        self.dim = dim
        self.compact_at = compact_at
        self._matrix = np.empty((0, dim or 0), dtype=np.float32)  # capacity >= rows; grows by doubling
        self._n = 0
        self._ids = np.empty(0, dtype=np.int64)
        self._alive = np.empty(0, dtype=bool)
        self._row_of: dict = {}

    @property
    def ids(self) -> np.ndarray:
        return self._ids

    @property
    def n_live(self) -> int:
        return len(self._row_of)

    def add(self, ids, vectors) -> None:
        new_ids = np.asarray(list(ids))
        if new_ids.shape[0] == 0:
            return
        m = normalise(vectors)
        if m.shape[0] != new_ids.shape[0]:
            raise ValueError(f"{new_ids.shape[0]} ids for {m.shape[0]} vectors")
        if new_ids.dtype.kind not in "iuU":
            raise ValueError(f"ids must be ints or strs, got {new_ids.dtype}")
        if self.dim is None:
            self.dim = m.shape[1]
            self._matrix = np.empty((0, self.dim), dtype=np.float32)
        if m.shape[1] != self.dim:
            raise ValueError(f"vectors have {m.shape[1]} dims, index has {self.dim}")
        dupes = [i for i in new_ids.tolist() if i in self._row_of]
        if dupes or len(set(new_ids.tolist())) != new_ids.shape[0]:
            raise ValueError(f"duplicate ids: {dupes[:5] or 'within the batch'}")
        need = self._n + m.shape[0]
        if need > self._matrix.shape[0]:
            grown = np.empty((max(need, 2 * self._matrix.shape[0]), self.dim), dtype=np.float32)
            grown[: self._n] = self._matrix[: self._n]
            self._matrix = grown
        self._matrix[self._n : need] = m
        self._ids = np.concatenate((self._ids, new_ids)) if self._n else new_ids
        self._row_of.update(zip(new_ids.tolist(), range(self._n, need)))
        self._alive = np.concatenate((self._alive, np.ones(m.shape[0], dtype=bool)))
        self._n = need

    def remove(self, ids) -> int:
        rows = [self._row_of.pop(i) for i in ids if i in self._row_of]
        if rows:
            self._alive[rows] = False
            if self._n - len(self._row_of) > self.compact_at * self._n:
                self.compact()
        return len(rows)

    def compact(self) -> None:
        keep = np.flatnonzero(self._alive)
        self._matrix = self._matrix[keep]
        self._ids, self._n = self._ids[keep], keep.shape[0]
        self._alive = np.ones(self._n, dtype=bool)
        self._row_of = dict(zip(self._ids.tolist(), range(self._n)))

    def scores(self, query_vector) -> np.ndarray:
        """Cosine of every row (dead rows included) with the query."""
        if self._n == 0:
            return np.zeros(0, dtype=np.float32)
        q = normalise(query_vector)[0]
        if q.shape[0] != self.dim:
            raise ValueError(f"query has {q.shape[0]} dims, index has {self.dim}")
        return matvec(self._matrix[: self._n], np.ascontiguousarray(q, dtype=np.float32))

    def masked_scores(self, query_vector, mask: np.ndarray | None = None) -> np.ndarray:
        """Cosines with dead and out-of-``mask`` rows at -inf (aligned with ``ids``)."""
        return apply_mask(self.scores(query_vector), self._alive, mask)

    def select(self, scores: np.ndarray, k: int = 10, min_score: float = -np.inf) -> list[tuple[object, float]]:
        """Top ``k`` of ``masked_scores`` strictly above ``min_score``, as ``[(id, cosine)]``."""
        return ranked(self._ids, scores, top_k(scores, k, floor=min_score))

    def search(self, query_vector, k: int = 10, mask: np.ndarray | None = None, min_score: float = -np.inf) -> list[tuple[object, float]]:
        return self.select(self.masked_scores(query_vector, mask), k, min_score)

    def row_of(self, doc_id) -> int | None:
        return self._row_of.get(doc_id)

    def vector(self, doc_id):
        """``doc_id``'s vector (a view into the matrix), or None."""
        row = self._row_of.get(doc_id)
        return None if row is None else self._matrix[row]

    def nbytes(self) -> int:
        return self._matrix[: self._n].nbytes + self._ids.nbytes + self._alive.nbytes

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        ids = self._ids
        np.savez(
            buf,
            format=np.array([_FORMAT]),
            params=np.array([self.dim or 0, self.compact_at]),
            matrix=self._matrix[: self._n],
            ids=ids if ids.dtype.kind != "U" else np.frombuffer(json.dumps(ids.tolist()).encode(), dtype=np.uint8),
            ids_are_str=np.array([ids.dtype.kind == "U"]),
            alive=self._alive,
        )
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> DenseIndex:
        z = np.load(io.BytesIO(data), allow_pickle=False)
        if int(z["format"][0]) != _FORMAT:
            raise ValueError(f"dense index format {int(z['format'][0])}, expected {_FORMAT}")
        dim, compact_at = z["params"].tolist()
        self = cls(dim=int(dim) or None, compact_at=compact_at)
        self._matrix = z["matrix"]
        self._n = self._matrix.shape[0]
        self._ids = np.array(json.loads(z["ids"].tobytes())) if z["ids_are_str"][0] else z["ids"]
        self._alive = z["alive"]
        self._row_of = {i: r for r, i in enumerate(self._ids.tolist()) if self._alive[r]}
        return self
