"""Top-k selection shared by the retrievers.

>>> top_k(np.array([0.0, 3.0, 0.0, 1.0, 2.0]), 2)
array([1, 4])
>>> top_k(np.array([0.0, 3.0, 0.0, 1.0]), 3, floor=0.0)  # only two beat the floor
array([1, 3])
"""

from __future__ import annotations

import numpy as np


def top_k(scores: np.ndarray, k: int, floor: float = -np.inf) -> np.ndarray:
    """Indices of the ``k`` highest scores strictly above ``floor``, best first.

    Within the selected k, ties order by lower index; which of several tied
    scores at the cut gets in is up to argpartition (same input, same pick).  Only
    rows above the floor are partitioned: BM25 scores are mostly zero, and
    ``argpartition(-scores, k)`` over the candidates alone is ~3x cheaper in
    Pyodide (``argpartition(scores, -k)`` over everything is ~15x dearer still).
    """
    if k <= 0 or scores.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    idx = np.flatnonzero(scores > floor)
    if idx.shape[0] > k:
        idx = idx[np.argpartition(-scores[idx], k - 1)[:k]]
    return idx[np.lexsort((idx, -scores[idx]))]


def ranked(ids: np.ndarray, scores: np.ndarray, rows: np.ndarray) -> list[tuple[object, float]]:
    """``[(id, score), ...]`` for ``rows``, as Python values, in one step (no per-hit numpy scalars).

    >>> ranked(np.array([10, 20, 30]), np.array([0.5, 2.0, 1.0]), np.array([1, 2]))
    [(20, 2.0), (30, 1.0)]
    """
    return list(zip(ids[rows].tolist(), scores[rows].tolist()))


def apply_mask(scores: np.ndarray, alive: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Scores with dead or out-of-scope rows set to -inf (a copy, or ``scores`` itself when
    every row is live and in scope)."""
    if mask is None and alive.all():
        return scores
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != alive.shape:
            raise ValueError(f"mask has {mask.shape[0]} rows, index has {alive.shape[0]}")
        alive = alive & mask
    return np.where(alive, scores, -np.inf)
