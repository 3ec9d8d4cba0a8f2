"""quire.retrieval.relevance: a relevance that means the same for every query."""

import pytest

from quire.retrieval.index import HybridIndex
from quire.retrieval.relevance import WEAK, coverage, is_weak


@pytest.mark.parametrize(
    "weights,found,expected",
    [
        ({"a": 3.0, "b": 1.0}, {"a"}, 0.75),  # the rare word carries the weight
        ({"a": 3.0, "b": 1.0}, {"b"}, 0.25),
        ({"a": 3.0, "b": 1.0}, {"a", "b", "c"}, 1.0),
        ({"a": 3.0}, set(), 0.0),
        ({}, {"a"}, 0.0),
    ],
)
def test_coverage(weights, found, expected):
    assert coverage(weights, found) == expected


def test_same_scale_across_queries_unlike_the_fused_score():
    index = HybridIndex()
    index.add_chunks("s", ["s:0", "s:1"], ["Basalt forms when lava cools quickly.", "Granite cools slowly underground."],
                     language="en")
    full = index.search("basalt lava")[0]
    half = index.search("basalt volcano")[0]  # "volcano" is nowhere: the best hit covers only part of the query
    assert full.relevance == 1.0 and 0 < half.relevance < 1.0
    assert full.score == pytest.approx(half.score, rel=0.5)  # the fused score alone cannot tell them apart
    assert not is_weak(full.relevance)
    weak = index.search("Which volcano eruption produced magma that cools?")[0]  # only "cools" is there
    assert weak.relevance < WEAK and is_weak(weak.relevance)
