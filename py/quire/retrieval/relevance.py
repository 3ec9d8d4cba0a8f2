"""Relevance a person can read: how much of the query a passage matches, 0..1.

The fused score only orders hits (an RRF value is ~0.016 for the first hit of
every query), so a number shown to people has to be something else.  Coverage
is the idf-weighted share of the query's distinct terms that occur in the
passage: rare words weigh more than common ones, and a word that occurs
nowhere in the library weighs most (the passage certainly lacks it).  It
means the same across queries: 100% = every searched word is there.

Hand-worked: query terms a (idf 3), b (idf 1); a passage with only "a"
covers 3 / (3 + 1) = 0.75.

>>> coverage({"a": 3.0, "b": 1.0}, {"a"})
0.75
>>> coverage({}, {"a"})  # nothing searchable in the query
0.0
"""

from __future__ import annotations

WEAK = 0.35  # below this share of the query's weight: "no passage matches these words well". On tests/bench/mixed.py
# every unanswerable question's best hit is below it (max 0.29) and 4 of 38 answerable ones are (all German
# questions over English pages, whose German words are indeed not there).
WEAK_MESSAGE = "No passage matches these words well; the closest ones are below."


def coverage(term_weights: dict[str, float], passage_terms) -> float:
    """Share of ``term_weights`` (term -> idf) whose terms are in ``passage_terms``."""
    total = sum(term_weights.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in term_weights.items() if t in passage_terms) / total


def is_weak(relevance: float | None) -> bool:
    """True when the best hit's relevance says the words were not really found.

    >>> is_weak(0.2), is_weak(0.8), is_weak(None)
    (True, False, True)
    """
    return relevance is None or relevance < WEAK
