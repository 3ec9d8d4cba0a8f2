"""Reciprocal rank fusion of a keyword and a dense ranking.

fused(d) = sum over rankings r containing d of 1 / (RRF_K + rank_r(d)), ranks 1-based.

Hand-worked: BM25 ranks [x, y], dense ranks [y, z].  y gets 1/62 + 1/61 =
0.03252, x gets 1/61 = 0.01639, z gets 1/62 = 0.01613; order y, x, z.

>>> [(h.id, round(h.score, 5)) for h in rrf([("x", 9.0), ("y", 4.0)], [("y", 0.8), ("z", 0.7)])]
[('y', 0.03252), ('x', 0.01639), ('z', 0.01613)]

Dense retrieval always returns *something*, even for a query whose answer
is an exact identifier no embedding understands.  Dense hits below
``min_cosine`` are therefore dropped before fusing, so junk cannot
outvote a strong keyword hit by also appearing low in the BM25 list.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RRF_K = 60  # the constant from Cormack et al. (2009); BEIR fusion results use it too
CANDIDATES = 50  # per retriever; RRF needs >= 20 to find agreement lower down
ANSWER_K = 7  # chunks handed to the answer prompt
MIN_COSINE = 0.3  # below this a dense hit is noise for the usual Ollama embedders; tune per model


@dataclass
class Hit:
    """One fused result with the evidence an inspector shows; ranks are 1-based, None = absent."""

    id: object
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def rrf(bm25_hits, dense_hits, k: int = ANSWER_K, rrf_k: int = RRF_K, min_cosine: float = MIN_COSINE) -> list[Hit]:
    """Fuse two best-first ``[(id, score)]`` lists into the top ``k`` hits.

    Either list may be empty (no embedding model: plain BM25 order).  Ties in
    fused score keep the BM25 order, then dense order.
    """
    hits: dict[object, Hit] = {}
    for rank, (doc, score) in enumerate(bm25_hits, start=1):
        hits[doc] = Hit(doc, 1.0 / (rrf_k + rank), bm25_rank=rank, bm25_score=score)
    for rank, (doc, score) in enumerate(dense_hits, start=1):
        if score < min_cosine:
            continue
        hit = hits.setdefault(doc, Hit(doc, 0.0))
        hit.score += 1.0 / (rrf_k + rank)
        hit.dense_rank, hit.dense_score = rank, score
    # dict order is BM25 order then dense-only order, and sorted() is stable.
    return sorted(hits.values(), key=lambda h: -h.score)[:k]
