import doctest

import numpy as np
import pytest

import quire.retrieval.fusion as fusion_module
import quire.retrieval.index as index_module
from quire.retrieval.fusion import rrf
from quire.retrieval.index import HybridIndex


@pytest.mark.parametrize("module", [fusion_module, index_module])
def test_docstring_examples(module):
    assert doctest.testmod(module).failed == 0


def ranking(ids, top=1.0, step=0.01):
    return [(d, top - i * step) for i, d in enumerate(ids)]


@pytest.mark.parametrize(
    "bm25,dense,min_cosine,expected",
    [
        # agreement beats a single first place
        (["a", "b", "c"], ["b", "c", "a"], 0.0, ["b", "a", "c"]),
        # no dense side: BM25 order
        (["a", "b"], [], 0.3, ["a", "b"]),
        # no keyword side: dense order
        ([], ["x", "y"], 0.3, ["x", "y"]),
        # disjoint lists interleave by rank, BM25 first on ties
        (["a", "b"], ["x", "y"], 0.0, ["a", "x", "b", "y"]),
    ],
)
def test_rrf_orders(bm25, dense, min_cosine, expected):
    hits = rrf(ranking(bm25, 10.0, 1.0), ranking(dense, 0.9), k=10, min_cosine=min_cosine)
    assert [h.id for h in hits] == expected


def test_rrf_scores_and_details():
    hits = rrf([("a", 7.5), ("b", 3.0)], [("b", 0.8)], k=7)
    b, a = hits
    assert b.to_dict() == {"id": "b", "score": pytest.approx(1 / 62 + 1 / 61), "bm25_rank": 2, "bm25_score": 3.0,
                           "dense_rank": 1, "dense_score": 0.8}
    assert (a.dense_rank, a.dense_score, a.bm25_rank) == (None, None, 1)


def test_keyword_rescue_needs_the_cosine_floor():
    # Query "ISO-9001": only chunk "iso" contains it.  The embedder returns junk (cos ~0.1)
    # that also appears lower in the BM25 list (it shares the word "audit").
    bm25 = [("iso", 12.0)] + [(f"j{i}", 1.0 - i / 100) for i in range(30)]
    dense = [(f"j{i}", 0.15 - i / 1000) for i in range(30)]
    without_floor = [h.id for h in rrf(bm25, dense, k=7, min_cosine=-1.0)]
    with_floor = [h.id for h in rrf(bm25, dense, k=7, min_cosine=0.3)]
    assert "iso" not in without_floor  # junk voted twice and drowned it
    assert with_floor[0] == "iso"


def test_top_k_default_is_seven():
    assert len(rrf(ranking([f"d{i}" for i in range(30)]), [])) == 7


# -- HybridIndex ----------------------------------------------------------
DOCS = {
    "en-1": ("manual", "en", ["Audit checklist for ISO-9001 certification.", "The server answered with error 404B."]),
    "en-2": ("biology", "en", ["Houses of the cell: mitochondria produce energy.", "Running cells divide quickly."]),
    "de-1": ("manual", "de", ["Die Häuser der Stadt wurden geprüft.", "Fehlercode 404B tritt beim Laden auf."]),
}


def build(with_vectors=False):
    index = HybridIndex()
    rng = np.random.default_rng(0)
    for source, (category, language, texts) in DOCS.items():
        ids = [f"{source}#{i}" for i in range(len(texts))]
        vectors = rng.standard_normal((len(texts), 4)) if with_vectors else None
        index.add_chunks(source, ids, texts, category=category, language=language, vectors=vectors)
    return index


@pytest.mark.parametrize(
    "query,scope,expected",
    [
        ("404B", None, {"en-1#1", "de-1#1"}),
        ("404B", ["de-1"], {"de-1#1"}),
        ("404B", "biology", set()),
        ("ISO 9001", "manual", {"en-1#0"}),
        ("houses", None, {"en-2#0"}),  # English stemming on English rows
        ("Haus", None, {"de-1#0"}),  # German stemming on German rows
        ("cell", ["en-2", "nope"], {"en-2#0", "en-2#1"}),
        ("cell", [], set()),
    ],
)
def test_hybrid_search_scopes_and_languages(query, scope, expected):
    assert {h.id for h in build().search(query, scope=scope)} == expected


def test_removed_source_never_returned_and_can_return():
    index = build()
    assert index.remove_source("de-1") == 2
    assert {h.id for h in index.search("404B")} == {"en-1#1"}
    assert index.remove_source("de-1") == 0
    index.add_chunks("de-1", ["de-1#new"], ["Fehlercode 404B"], language="de")
    assert {h.id for h in index.search("404B")} == {"en-1#1", "de-1#new"}
    assert index.source_of("de-1#new") == "de-1"


def test_hybrid_uses_dense_and_scope_applies_to_it():
    index = build(with_vectors=True)
    qv = index.dense._matrix[2]  # the vector of en-2#0
    hits = index.search("unrelated words", query_vector=qv)
    assert hits[0].id == "en-2#0" and hits[0].dense_rank == 1 and hits[0].bm25_rank is None
    assert "en-2#0" not in {h.id for h in index.search("unrelated words", query_vector=qv, scope="manual")}


def test_language_detected_when_not_given():
    index = HybridIndex()
    index.add_chunks("s", ["s#0"], ["Die Zellen wurden im Labor untersucht und die Häuser nicht."])
    assert index._sources[0]["language"] == "de"


def test_duplicate_chunk_ids_rejected():
    index = build()
    with pytest.raises(ValueError, match="duplicate chunk ids"):
        index.add_chunks("x", ["en-1#0"], ["again"])


def test_round_trip_identical_results():
    index = build(with_vectors=True)
    index.remove_source("en-2")
    copy = HybridIndex.from_bytes(index.to_bytes())
    qv = np.ones(4)
    for query in ["404B", "Haus", "ISO-9001 audit", "cell"]:
        for scope in [None, "manual", ["de-1"]]:
            assert copy.search(query, scope=scope, query_vector=qv) == index.search(query, scope=scope, query_vector=qv)
