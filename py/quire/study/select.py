"""Representative retrieval: a few chunks that cover a whole scope.

A quiz over "chapter 3" or "these two PDFs" cannot send every chunk to a
model, and the top BM25 hits for one query would all say the same thing.
Maximal Marginal Relevance over TF-IDF vectors picks chunks that are close to
what the scope is about (its centroid, or a topic if one is given) and far
from the chunks already picked:

    mmr(c) = lam * sim(c, target) - (1 - lam) * max(sim(c, s) for s in picked)

Worked example: three chunks "cats purr", "cats purr loudly", "dogs bark".
The first pick is the one nearest the centroid ("cats purr": it shares both
words with another chunk and has nothing else); the second is "dogs bark",
because "cats purr loudly" nearly duplicates the first pick.
"""

from __future__ import annotations

from quire.model import Chunk

MAX_CHUNKS = 15  # enough to cover a chapter, small enough for an 8k context
LAMBDA = 0.6  # weight of relevance against novelty


def study_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Chunks worth studying: not empty, not a table of contents.

    Extraction marks TOC passages with ``location["toc"]`` (see
    ``quire.extract.toc``); they stay searchable, but as chapters, cards or
    questions they would only repeat the real headings.

    >>> [c.text for c in study_chunks([Chunk("s", {"page": 4, "toc": True}, 0, 1, "1 Intro . . . 2"),
    ...                                Chunk("s", {"page": 5}, 0, 1, "Text."), Chunk("s", {}, 0, 1, " ")])]
    ['Text.']
    """
    return [c for c in chunks if c.text.strip() and not c.location.get("toc")]


def tfidf_matrix(texts: list[str]):
    """L2-normalised TF-IDF rows (scipy sparse), or None if there are no words."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # lazy: heavy in the browser

    try:
        return TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(texts)
    except ValueError:
        return None


def mmr(similarity_to_target, pairwise, k: int, lam: float = LAMBDA) -> list[int]:
    """Indices picked by MMR, in pick order.  Pure numpy; ties go to the lower index.

    >>> import numpy as np
    >>> pairwise = np.array([[1, .9, 0], [.9, 1, 0], [0, 0, 1]])
    >>> mmr(np.array([.8, .9, .3]), pairwise, 2)
    [1, 2]
    """
    import numpy as np

    n = len(similarity_to_target)
    picked: list[int] = []
    closest = np.zeros(n)  # max similarity to anything picked so far
    available = np.ones(n, dtype=bool)
    for _ in range(min(k, n)):
        score = lam * similarity_to_target - (1 - lam) * closest
        score = np.where(available, score, -np.inf)
        best = int(np.argmax(score))
        picked.append(best)
        available[best] = False
        closest = np.maximum(closest, pairwise[best])
    return picked


def select_chunks(
    chunks: list[Chunk],
    k: int = MAX_CHUNKS,
    *,
    topic: str = "",
    lam: float = LAMBDA,
    max_chars: int = 24_000,
) -> list[Chunk]:
    """Up to ``k`` diverse chunks covering ``chunks``, returned in reading order.

    ``topic`` (optional) steers relevance toward a subject instead of the
    scope's centroid.  Picking stops early once ``max_chars`` of text is
    chosen, so the prompt fits a small model's context.
    """
    import numpy as np

    chunks = study_chunks(chunks)
    if len(chunks) <= 1:
        return chunks
    texts = [c.text for c in chunks] + ([topic] if topic else [])
    matrix = tfidf_matrix(texts)
    if matrix is None:
        return chunks[:k]
    docs = matrix[: len(chunks)]
    pairwise = (docs @ docs.T).toarray()
    if topic:
        target = matrix[len(chunks)].toarray().ravel()
    else:
        target = np.asarray(docs.mean(axis=0)).ravel()
    norm = np.linalg.norm(target)
    to_target = docs @ (target / norm) if norm else np.zeros(len(chunks))
    order = mmr(np.asarray(to_target, dtype=float).ravel(), pairwise, k, lam)
    chosen, total = [], 0
    for index in order:
        if chosen and total + len(chunks[index].text) > max_chars:
            continue
        chosen.append(index)
        total += len(chunks[index].text)
    return [chunks[i] for i in sorted(chosen)]
