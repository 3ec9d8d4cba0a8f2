import numpy as np
import pytest

from quire.model import chunk_id
from quire.retrieval.fusion import FUSION, FUSIONS, dense_floor, fuse, rrf
from quire.retrieval.index import HybridIndex


def ranking(ids, top=1.0, step=0.01):
    return [(d, top - i * step) for i, d in enumerate(ids)]


@pytest.mark.parametrize(
    "bm25,dense,expected",
    [
        # agreement beats a single first place
        (["a", "b", "c"], ["b", "c", "a"], ["b", "a", "c"]),
        # no dense side: BM25 order
        (["a", "b"], [], ["a", "b"]),
        # no keyword side: dense order
        ([], ["x", "y"], ["x", "y"]),
        # disjoint lists interleave by rank, BM25 first on ties
        (["a", "b"], ["x", "y"], ["a", "x", "b", "y"]),
    ],
)
def test_rrf_orders(bm25, dense, expected):
    hits = rrf(ranking(bm25, 10.0, 1.0), ranking(dense, 0.9), k=10)
    assert [h.id for h in hits] == expected


@pytest.mark.parametrize("method", list(FUSIONS))
@pytest.mark.parametrize(
    "bm25,dense,expected",
    [
        (["a", "b"], [], ["a", "b"]),  # one retriever alone keeps its order, whatever the method
        ([], ["x", "y"], ["x", "y"]),
        (["a", "b", "c"], ["c", "b", "a"], None),  # every id once, nothing invented
    ],
)
def test_every_method_keeps_single_lists_and_ids(method, bm25, dense, expected):
    hits = fuse(method, ranking(bm25, 10.0, 1.0), ranking(dense, 0.9), k=10)
    if expected is not None:
        assert [h.id for h in hits] == expected
    assert sorted(h.id for h in hits) == sorted(set(bm25) | set(dense))


def test_rrf_scores_and_details():
    hits = rrf([("a", 7.5), ("b", 3.0)], [("b", 0.8)], k=7)
    b, a = hits
    assert b.to_dict() == {"id": "b", "score": pytest.approx(1 / 62 + 1 / 61), "bm25_rank": 2, "bm25_score": 3.0,
                           "dense_rank": 1, "dense_score": 0.8, "dense_floor": None, "dense_status": None,
                           "relevance": None, "language": None}
    assert (a.dense_rank, a.dense_score, a.bm25_rank) == (None, None, 1)


def buried_quote():
    """The case from the issue: an exact quote is BM25 #1 by a wide margin (24 against ~3),
    while the dense top 3 are passages that are BM25 #27-#42 with cosines 0.31-0.35."""
    bm25 = [("quote", 24.0)] + [(f"p{i}", 3.0 - i * 0.05) for i in range(2, 51)]  # ranks 2..50
    dense = [("p27", 0.35), ("p35", 0.33), ("p42", 0.31)] + [(f"d{i}", 0.30 - i * 0.001) for i in range(40)]
    return bm25, dense  # the quote is outside the dense top 43


@pytest.mark.parametrize("method,quote_first", [("rrf", False), ("zscore", True), ("minmax", False)])
def test_decisive_lexical_match_is_not_buried(method, quote_first):
    hits = [h.id for h in fuse(method, *buried_quote(), k=5)]
    assert (hits[0] == "quote") is quote_first, hits
    if method == "rrf":  # the seed's behaviour, kept selectable: the quote falls to 4th
        assert hits.index("quote") == 3


def test_default_fusion_is_the_measured_one_and_names_are_checked():
    assert FUSION in FUSIONS
    with pytest.raises(ValueError, match="valid: rrf, zscore, minmax"):
        fuse("borda", [], [])
    with pytest.raises(ValueError, match="unknown fusion"):
        HybridIndex(fusion="borda")


@pytest.mark.parametrize(
    "cosines,min_z,kept",
    [
        # e5-like: everything between 0.82 and 0.89; a fixed 0.3 would keep all of it
        ([0.82, 0.83, 0.83, 0.84, 0.84, 0.85, 0.89], 1.0, [0.89]),
        # nomic-like range, same shape: the same rows are kept
        ([0.30, 0.35, 0.35, 0.40, 0.40, 0.45, 0.65], 1.0, [0.65]),
        ([0.5], 1.0, [0.5]),  # one row: no distribution, nothing cut
        ([0.8, 0.8, 0.8], -np.inf, [0.8, 0.8, 0.8]),  # no cut-off, even when every cosine is equal
    ],
)
def test_dense_floor_follows_the_models_distribution(cosines, min_z, kept):
    c = np.array(cosines)
    assert c[c > dense_floor(c, min_z)].tolist() == kept


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
        ids = [chunk_id(source, n) for n in range(len(texts))]
        vectors = rng.standard_normal((len(texts), 4)) if with_vectors else None
        index.add_chunks(source, ids, texts, category=category, language=language, vectors=vectors)
    return index


@pytest.mark.parametrize(
    "query,scope,expected",
    [
        ("404B", None, {"en-1:1", "de-1:1"}),
        ("404B", ["de-1"], {"de-1:1"}),
        ("404B", "biology", set()),
        ("ISO 9001", "manual", {"en-1:0"}),
        ("houses", None, {"en-2:0"}),  # English stemming on English rows
        ("Haus", None, {"de-1:0"}),  # German stemming on German rows
        ("cell", ["en-2", "nope"], {"en-2:0", "en-2:1"}),
        ("cell", [], set()),
    ],
)
def test_hybrid_search_scopes_and_languages(query, scope, expected):
    assert {h.id for h in build().search(query, scope=scope)} == expected


def test_removed_source_never_returned_and_can_return():
    index = build()
    assert index.remove_source("de-1") == 2
    assert {h.id for h in index.search("404B")} == {"en-1:1"}
    assert index.remove_source("de-1") == 0
    index.add_chunks("de-1", ["de-1:0"], ["Fehlercode 404B"], language="de")  # read again: its ids come back
    assert {h.id for h in index.search("404B")} == {"en-1:1", "de-1:0"}
    assert index.source_of("de-1:0") == "de-1"


def test_hybrid_uses_dense_and_scope_applies_to_it():
    index = build(with_vectors=True)
    qv = index.dense._matrix[2]  # the vector of en-2:0
    hits = index.search("unrelated words", query_vector=qv)
    assert hits[0].id == "en-2:0" and hits[0].dense_rank == 1 and hits[0].bm25_rank is None
    assert "en-2:0" not in {h.id for h in index.search("unrelated words", query_vector=qv, scope="manual")}


def test_language_detected_when_not_given():
    index = HybridIndex()
    index.add_chunks("s", ["s:0"], ["Die Zellen wurden im Labor untersucht und die Häuser nicht."])
    assert index.by_code[0]["language"] == "de"


def test_duplicate_chunk_ids_rejected():
    index = build()
    with pytest.raises(ValueError, match="duplicate chunk ids"):
        index.add_chunks("x", ["en-1:0"], ["again"])


def test_round_trip_identical_results():
    index = build(with_vectors=True)
    index.remove_source("en-2")
    copy = HybridIndex.from_bytes(index.to_bytes())
    qv = np.ones(4)
    for query in ["404B", "Haus", "ISO-9001 audit", "cell"]:
        for scope in [None, "manual", ["de-1"]]:
            assert copy.search(query, scope=scope, query_vector=qv) == index.search(query, scope=scope, query_vector=qv)


def test_inspector_evidence_says_why_dense_did_not_rank_a_passage():
    index = HybridIndex(candidates=3, dense_min_z=-np.inf)
    a, b, c, d, e = ids = [chunk_id("s", n) for n in range(5)]
    index.add_chunks("s", ids, ["alpha alpha", "alpha alpha beta", "alpha gamma words more", "alpha alpha delta",
                                "epsilon"], language="en")
    index.add_vectors([a, b, c, e], np.array([[1.0, 0.0], [0.5, 0.5], [0.9, 0.1], [0.95, 0.05]]), "m")
    assert {h.dense_status for h in index.search("alpha")} == {"off"}  # no query vector: dense is off
    hits = {h.id: h for h in index.search("alpha", k=6, query_vector=[1.0, 0.0])}
    assert hits[a].dense_status == "ranked" and hits[a].dense_rank == 1
    assert hits[b].dense_status == "beyond-top" and hits[b].dense_score == pytest.approx(0.7071, abs=1e-4)
    assert hits[d].dense_status == "no-vector" and hits[d].dense_score is None
    index.dense_min_z = 0.5  # b's cosine 0.71 is far below this query's other cosines (0.99-1.0)
    hits = {h.id: h for h in index.search("alpha", k=6, query_vector=[1.0, 0.0])}
    assert hits[b].dense_status == "below-floor" and hits[b].dense_score < hits[b].dense_floor


def test_dense_cut_off_follows_the_distribution_not_a_fixed_cosine():
    # e5-like cosines (all within 0.82-0.89): only the passage that stands out survives the cut-off.
    index = HybridIndex()
    rng = np.random.default_rng(1)
    base = rng.standard_normal(8)
    texts = [f"passage {i}" for i in range(20)]
    vectors = [base + 0.35 * rng.standard_normal(8) for _ in range(19)] + [base + 0.05 * rng.standard_normal(8)]
    index.add_chunks("s", [chunk_id("s", n) for n in range(20)], texts, language="en", vectors=vectors)
    hits = index.search("unrelated", query_vector=base)
    cosines = index.dense.scores(base)
    assert cosines.min() > 0.5  # a fixed 0.3 floor would keep every one of them
    assert [h.id for h in hits][:1] == ["s:19"] and len(hits) < 7


def test_a_single_keyword_match_in_a_small_library_is_not_outvoted():
    # Found in the browser: "404B" matches one passage by keyword, while the (bag-of-words stub)
    # embedder ranks a rocks passage first.  z-scores over the two short lists made the lone
    # keyword hit z = 0; over the whole library it stands out as it should.
    from ollama_server import embed_text

    texts = {"cells:0": "The powerhouse of the cell: mitochondria make ATP.",
             "rocks:0": "Basalt forms when lava cools quickly at the surface.",
             "rocks:1": "Granite cools slowly underground.",
             "iso:0": "ISO-9001 audits check the quality system; error 404B means the page moved."}
    index = HybridIndex()
    for source in ("cells", "rocks", "iso"):
        ids = [c for c in texts if c.startswith(source)]
        index.add_chunks(source, ids, [texts[c] for c in ids], language="en",
                         vectors=[embed_text(texts[c], 768) for c in ids])
    q = embed_text("404B", 768)
    assert index.search("404B", query_vector=q)[0].id == "iso:0"
    bm25 = [("iso:0", 1.0)]
    dense = [("rocks:0", 0.2), ("iso:0", 0.1)]  # the same shape, as bare lists: the lone keyword hit gets z = 0
    assert fuse("zscore", bm25, dense)[0].id == "rocks:0"


def test_an_index_saved_before_fusion_was_selectable_still_opens():
    import io
    import json

    index = build(with_vectors=True)
    z = dict(np.load(io.BytesIO(index.to_bytes()), allow_pickle=False))
    meta = json.loads(z["meta"].tobytes())
    for key in ("fusion", "dense_min_z", "query_stopwords", "fusion_weights"):
        meta.pop(key)
    meta["min_cosine"] = 0.3  # what the seed wrote
    z["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **z)
    old = HybridIndex.from_bytes(buf.getvalue())
    assert (old.fusion, old.query_stopwords) == (FUSION, "query-language")
    assert [h.id for h in old.search("404B")] == [h.id for h in index.search("404B")]
