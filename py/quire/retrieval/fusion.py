"""Fusing a keyword ranking and a dense ranking into one list, by name.

Each method takes two best-first ``[(id, score)]`` lists and returns ``Hit``s:

- ``rrf``: reciprocal rank fusion, fused(d) = sum over lists r holding d of
  w_r / (RRF_K + rank_r(d)), ranks 1-based (the seed's method; weights 1, 1).
- ``zscore``: fused(d) = w_bm25 * z_bm25(d) + w_dense * z_dense(d), each z
  taken over the retriever's scores for *every* passage of the library
  (``Library``; ``HybridIndex`` passes it), so a passage outside one list
  still gets its real score there, and a single keyword match in a small
  library is as decisive as it is.  Without ``Library`` the z-scores are
  over the two lists (a missing document gets the list's lowest z).  A
  decisive keyword match (BM25 24 against 3) stays decisive, where ranks
  forget the margin.
- ``minmax``: the same with scores scaled to 0..1 per list (missing: 0).

Hand-worked RRF: BM25 ranks [x, y], dense ranks [y, z].  y gets 1/62 + 1/61 =
0.03252, x gets 1/61 = 0.01639, z gets 1/62 = 0.01613; order y, x, z.

>>> [(h.id, round(h.score, 5)) for h in rrf([("x", 9.0), ("y", 4.0)], [("y", 0.8), ("z", 0.7)])]
[('y', 0.03252), ('x', 0.01639), ('z', 0.01613)]

The fused score only orders; what a person sees as "relevance" is
``relevance.coverage`` (how much of the query a passage matches).

Dense retrieval always returns *something*, even for a query whose answer is an
exact identifier no embedding understands, and each model has its own cosine
range (e5: 0.82-0.89 for everything; nomic: 0.3-0.7).  ``dense_floor`` therefore
keeps only dense hits that stand out of *this* query's cosine distribution over
the library (``DENSE_MIN_Z`` standard deviations above the mean), not a fixed cosine.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

import numpy as np

RRF_K = 60  # the constant from Cormack et al. (2009); BEIR fusion results use it too
CANDIDATES = 50  # per retriever; RRF needs >= 20 to find agreement lower down
ANSWER_K = 7  # chunks handed to the answer prompt
# A dense hit must beat this query's mean cosine by this many std devs.  With e5 on SciFact (cosines
# 0.75-0.88 for every query, so a fixed 0.3 keeps everything): z >= 1 kept 99.7% of the relevant
# documents and 14% of all (on the 304 documents embedded so far; tests/bench/hybrid.py has the rows).
DENSE_MIN_Z = 1.0
# z-score fusion, by measurement with multilingual-e5-small: the only candidate that keeps a decisive
# keyword match first (test_fusion.py); on the mixed EN/DE benchmark hit@3 0.974 against RRF's 0.947
# (lexical 0.947, e5 alone 0.921; tests/bench/mixed.py --hybrid); on the 1,456 SciFact abstracts embedded so
# far nDCG@10 0.808 against RRF's 0.788 (lexical 0.779, e5 0.757; min-max 0.819 but it buries the quote).  On full SciFact (tests/bench/hybrid.py)
# z-score gives 0.7232 against RRF's 0.7078; tests/test_retrieval_floor.py keeps both from falling.
# RRF stays selectable by name.
FUSION = "zscore"
WEIGHTS = {"rrf": (1.0, 1.0), "zscore": (1.0, 1.0), "minmax": (0.5, 0.5)}  # (bm25, dense)


@dataclass
class Hit:
    """One fused result with the evidence an inspector shows; ranks are 1-based, None = absent.

    ``dense_floor`` is the cosine a dense hit needed for this query (None: no dense search);
    ``dense_score`` is the passage's cosine even when the dense side did not rank it;
    ``relevance`` is the share of the query the passage matches (0..1, see relevance.py)."""

    id: object
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None
    dense_floor: float | None = None
    dense_status: str | None = None  # ranked, below-floor, beyond-top, no-vector, off (set by HybridIndex)
    relevance: float | None = None
    language: str | None = None  # the passage's language, for highlighting with the same tokenizer

    def to_dict(self) -> dict:
        # Every field is a scalar: a flat copy, not asdict's recursive deep copy (2 ms a search in the tab).
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Library:
    """One retriever's scores over the whole library for one query: their mean and spread, and
    the score of any document (``of(id)``; a document it cannot score gets ``mean``, z = 0)."""

    mean: float
    std: float
    of: Callable[[object], float]

    @classmethod
    def of_array(cls, scores: np.ndarray, row_of: Callable[[object], int | None]) -> "Library":
        """From per-row scores where out-of-scope rows are -inf; ``row_of(id)`` -> row or None."""
        finite = scores[np.isfinite(scores)]
        mean = float(finite.mean()) if finite.shape[0] else 0.0
        std = float(finite.std()) if finite.shape[0] else 0.0

        def of(doc) -> float:
            row = row_of(doc)
            value = float(scores[row]) if row is not None else mean
            return value if np.isfinite(value) else mean

        return cls(mean, std, of)

    def z(self, doc) -> float:
        return (self.of(doc) - self.mean) / self.std if self.std > 0 else 0.0


def _collect(bm25_hits, dense_hits) -> dict[object, Hit]:
    """Hits in BM25 order then dense-only order (``sorted`` is stable: ties keep it)."""
    hits: dict[object, Hit] = {}
    for rank, (doc, score) in enumerate(bm25_hits, start=1):
        hits[doc] = Hit(doc, 0.0, bm25_rank=rank, bm25_score=score)
    for rank, (doc, score) in enumerate(dense_hits, start=1):
        hit = hits.setdefault(doc, Hit(doc, 0.0))
        hit.dense_rank, hit.dense_score = rank, score
    return hits


def rrf(bm25_hits, dense_hits, k: int = ANSWER_K, rrf_k: int = RRF_K, weights=WEIGHTS["rrf"]) -> list[Hit]:
    """Fuse two best-first ``[(id, score)]`` lists into the top ``k`` hits by reciprocal rank.

    Either list may be empty (no embedding model: plain BM25 order).  Ties in
    fused score keep the BM25 order, then dense order.
    """
    hits = _collect(bm25_hits, dense_hits)
    for h in hits.values():
        h.score = (weights[0] / (rrf_k + h.bm25_rank) if h.bm25_rank else 0.0) + \
                  (weights[1] / (rrf_k + h.dense_rank) if h.dense_rank else 0.0)
    return sorted(hits.values(), key=lambda h: -h.score)[:k]


def _normalised(scores: list[float], how: str) -> tuple[np.ndarray, float]:
    """(normalised scores, value for a document missing from the list).

    >>> _normalised([24.0, 3.0, 3.0], "minmax")[0].tolist()
    [1.0, 0.0, 0.0]
    """
    s = np.asarray(scores, dtype=np.float64)
    if how == "minmax":
        span = s.max() - s.min()
        return ((s - s.min()) / span if span > 0 else np.ones_like(s)), 0.0
    std = s.std()
    z = (s - s.mean()) / std if std > 0 else np.zeros_like(s)
    return z, float(z.min())


def score_fusion(bm25_hits, dense_hits, k: int = ANSWER_K, weights=WEIGHTS["zscore"], how: str = "zscore",
                 library: tuple[Library | None, Library | None] = (None, None)) -> list[Hit]:
    """Weighted sum of normalised scores (``how``: "zscore" or "minmax"); ``library`` = the
    (bm25, dense) score distributions over every passage, for z-scores over the library.

    >>> bm25 = [("quote", 24.0)] + [(f"b{i}", 3.0 - i / 10) for i in range(5)]
    >>> dense = [("b4", 0.35), ("b3", 0.34), ("quote", 0.2)]
    >>> [h.id for h in score_fusion(bm25, dense, k=3)]
    ['quote', 'b4', 'b3']
    """
    if how not in ("zscore", "minmax"):
        raise ValueError(f"unknown normalisation {how!r}; valid: zscore, minmax")
    hits = _collect(bm25_hits, dense_hits)
    sides = ((weights[0], bm25_hits, "bm25_rank", library[0]), (weights[1], dense_hits, "dense_rank", library[1]))
    for weight, ranking, field, dist in sides:
        if how == "zscore" and dist is not None:
            for h in hits.values():
                h.score += weight * dist.z(h.id)
            continue
        if not ranking:
            continue
        norm, missing = _normalised([s for _, s in ranking], how)
        for h in hits.values():
            rank = getattr(h, field)
            h.score += weight * (norm[rank - 1] if rank else missing)
    return sorted(hits.values(), key=lambda h: -h.score)[:k]


FUSIONS = {
    "rrf": lambda b, d, k=ANSWER_K, weights=WEIGHTS["rrf"], library=None: rrf(b, d, k, weights=weights),
    "zscore": lambda b, d, k=ANSWER_K, weights=WEIGHTS["zscore"], library=(None, None):
        score_fusion(b, d, k, weights, "zscore", library),
    "minmax": lambda b, d, k=ANSWER_K, weights=WEIGHTS["minmax"], library=None: score_fusion(b, d, k, weights, "minmax"),
}


def fuse(method: str, bm25_hits, dense_hits, k: int = ANSWER_K, weights=None, library=(None, None)) -> list[Hit]:
    """Fuse by method name; ``weights`` = (bm25, dense), default per method (``WEIGHTS``);
    ``library`` = (bm25, dense) ``Library`` distributions, used by "zscore".

    >>> fuse("borda", [], [])
    Traceback (most recent call last):
    ValueError: unknown fusion 'borda'; valid: rrf, zscore, minmax
    """
    if method not in FUSIONS:
        raise ValueError(f"unknown fusion {method!r}; valid: {', '.join(FUSIONS)}")
    return FUSIONS[method](bm25_hits, dense_hits, k=k, weights=weights or WEIGHTS[method], library=library)


def dense_floor(cosines: np.ndarray, min_z: float = DENSE_MIN_Z) -> float:
    """The cosine a dense hit must exceed: mean + ``min_z`` std of this query's cosines.

    >>> round(dense_floor(np.array([0.82, 0.83, 0.84, 0.85, 0.89]), 1.0), 3)  # e5-like: all high
    0.87
    """
    finite = cosines[np.isfinite(cosines)]
    if finite.shape[0] < 2 or min_z == -np.inf:  # -inf: no cut-off (and no -inf * 0 = nan)
        return -np.inf
    return float(finite.mean() + min_z * finite.std())
