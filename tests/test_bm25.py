import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from quire.retrieval.bm25 import BM25Index, Postings, stable_order
from quire.retrieval.select import top_k


class LuceneIdfOkapi(BM25Okapi):
    """Slow reference: rank_bm25's Okapi loop with Lucene's never-negative idf."""

    def _calc_idf(self, nd):
        for word, df in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - df + 0.5) / (df + 0.5))


CORPORA = {
    "tiny": [["a", "b"], ["a", "c", "c"], ["d"]],
    # "the" is in every doc: stock Okapi idf would be negative and floored, Lucene's is small and positive.
    "common-terms": [
        ["the", "cat", "sat", "on", "the", "mat"],
        ["the", "dog", "sat"],
        ["the", "cat", "and", "the", "dog", "and", "the", "bird"],
        ["the", "bird", "sang"],
        ["the", "end"],
    ],
    "varied-lengths": [["x"] * 7 + ["y"], ["y", "z"], ["z"] * 3, ["w", "x", "y", "z"], ["q"]],
}
QUERIES = [["a"], ["c", "c"], ["the", "cat"], ["dog", "bird", "missing"], ["x", "y", "z"], ["nothing"]]
PARAMS = [(1.5, 0.75), (1.2, 0.75), (0.9, 0.4), (2.0, 1.0), (1.2, 0.0)]


@pytest.mark.parametrize("k1,b", PARAMS)
@pytest.mark.parametrize("name", CORPORA)
def test_scores_match_rank_bm25_with_lucene_idf(name, k1, b):
    corpus = CORPORA[name]
    index = BM25Index(k1=k1, b=b)
    index.add(range(len(corpus)), corpus)
    oracle = LuceneIdfOkapi(corpus, k1=k1, b=b)
    for q in QUERIES:
        np.testing.assert_allclose(index.scores(q), oracle.get_scores(q), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("k1,b", PARAMS)
def test_ranks_match_bm25s_lucene(k1, b):
    # bm25s "lucene" drops the constant (k1 + 1) factor; otherwise the same formula.
    bm25s = pytest.importorskip("bm25s")
    corpus = CORPORA["common-terms"] + CORPORA["varied-lengths"]
    index = BM25Index(k1=k1, b=b)
    index.add(range(len(corpus)), corpus)
    ref = bm25s.BM25(method="lucene", k1=k1, b=b)
    ref.index(corpus, show_progress=False)
    for q in [["the", "cat"], ["x", "z"], ["bird", "dog"]]:
        np.testing.assert_allclose(index.scores(q) / (k1 + 1), ref.get_scores(q), rtol=1e-5, atol=1e-6)


def test_oracle_is_sensitive_to_the_idf_formula():
    # Stock Okapi floors "the"'s negative idf; if our scores matched it too, the oracle proved nothing.
    corpus = CORPORA["common-terms"]
    index = BM25Index()
    index.add(range(len(corpus)), corpus)
    assert not np.allclose(index.scores(["the", "cat"]), BM25Okapi(corpus).get_scores(["the", "cat"]))


@pytest.mark.parametrize("removed", [[0], [1, 3], [0, 2, 4]])
def test_removed_docs_leave_statistics_as_if_never_added(removed):
    corpus = CORPORA["common-terms"]
    index = BM25Index(compact_at=1.0)  # keep tombstones: test the live-only idf/avgdl
    index.add(range(len(corpus)), corpus)
    index.remove(removed)
    kept = [i for i in range(len(corpus)) if i not in removed]
    oracle = LuceneIdfOkapi([corpus[i] for i in kept])
    for q in QUERIES:
        np.testing.assert_allclose(index.scores(q)[kept], oracle.get_scores(q), rtol=1e-6)
        assert not {d for d, _ in index.search(q, k=10)} & set(removed)


@pytest.mark.parametrize("compact_at", [0.1, 0.5, 1.0])
def test_removed_never_returned_across_compaction_and_readd(compact_at):
    rng = np.random.default_rng(1)
    docs = [[f"t{j}" for j in rng.integers(0, 30, 12)] for _ in range(200)]
    index = BM25Index(compact_at=compact_at)
    index.add(range(200), docs)
    gone = set(range(0, 200, 3))
    index.remove(sorted(gone))
    for j in range(30):
        ids = {d for d, _ in index.search([f"t{j}"], k=200)}
        assert ids and not ids & gone
    index.add([0], [["fresh"]])  # an id may come back after removal
    assert index.search(["fresh"], k=5)[0][0] == 0
    assert index.n_live == 200 - len(gone) + 1


def test_incremental_adds_equal_one_batch():
    corpus = CORPORA["common-terms"] + CORPORA["varied-lengths"]
    batch = BM25Index()
    batch.add(range(len(corpus)), corpus)
    steps = BM25Index()
    steps.add(range(3), corpus[:3])
    steps.search(["the"], 1)  # forces a merge between the adds
    steps.add(range(3, len(corpus)), corpus[3:])
    for q in QUERIES:
        np.testing.assert_allclose(steps.scores(q), batch.scores(q), rtol=1e-6)


def test_mask_applies_before_top_k():
    corpus = [["a"] * (i + 1) + ["b"] * 5 for i in range(10)]
    index = BM25Index()
    index.add(range(10), corpus)
    mask = np.zeros(10, dtype=bool)
    mask[[1, 2]] = True
    assert [d for d, _ in index.search(["a"], k=2, mask=mask)] == [2, 1]
    with pytest.raises(ValueError, match="mask has 3 rows"):
        index.search(["a"], k=2, mask=np.ones(3, dtype=bool))


@pytest.mark.parametrize(
    "scores,k,expected",
    [
        ([0, 0, 5, 0, 0, 3, 0, 0], 4, [2, 5]),  # fewer nonzero than k, k < n: the argpartition path
        ([0, 0, 5, 0, 0, 3, 0, 0], 1, [2]),
        ([1, 2, 3], 10, [2, 1, 0]),  # k >= n
        ([0, 0, 0], 2, []),
        ([2, 2, 1, 2], 3, [0, 1, 3]),  # ties order by row
        ([], 3, []),
    ],
)
def test_top_k_with_zero_floor(scores, k, expected):
    assert top_k(np.array(scores, dtype=float), k, floor=0.0).tolist()[: len(expected)] == expected
    assert len(top_k(np.array(scores, dtype=float), k, floor=0.0)) == len(expected)


def test_search_returns_fewer_than_k_when_few_match():
    index = BM25Index()
    index.add(range(50), [["common"]] * 48 + [["rare"], ["rare", "rare"]])
    assert [d for d, _ in index.search(["rare"], k=10)] == [49, 48]


@pytest.mark.parametrize("ids", [list(range(5)), ["c1", "c2", "ünï", "c4", "c5"]])
def test_serialisation_round_trip_gives_identical_results(ids):
    corpus = CORPORA["common-terms"]
    index = BM25Index(k1=1.3, b=0.6)
    index.add(ids, corpus)
    index.remove([ids[1]])
    copy = BM25Index.from_bytes(index.to_bytes())
    assert (copy.k1, copy.b) == (1.3, 0.6)
    for q in QUERIES:
        assert copy.search(q, k=5) == index.search(q, k=5)
    copy.add(["new"] if isinstance(ids[0], str) else [99], [["cat", "cat"]])
    assert copy.search(["cat"], k=1)[0][0] in ("new", 99)


@pytest.mark.parametrize(
    "ids,tokens,error",
    [([1, 1], [["a"], ["b"]], "duplicate"), ([1], [["a"], ["b"]], "1 ids for 2"), ([1.5], [["a"]], "ints or strs")],
)
def test_add_rejects_bad_input(ids, tokens, error):
    with pytest.raises(ValueError, match=error):
        BM25Index().add(ids, tokens)


def test_empty_index_searches_to_nothing():
    index = BM25Index()
    assert index.search(["a"], k=3) == []
    index.add([1], [["a"]])
    index.remove([1])
    assert index.search(["a"], k=3) == []


@pytest.mark.parametrize("top", [1, 300, 70_000, 5_000_000_000])
def test_stable_order_is_a_stable_argsort(top):
    values = np.random.default_rng(top).integers(0, top + 1, 5000)
    assert np.array_equal(stable_order(values), np.argsort(values, kind="stable"))


def test_stable_order_refuses_negative_numbers():
    with pytest.raises(ValueError):
        stable_order(np.array([3, -1]))


@pytest.mark.parametrize("shuffled", [False, True])
def test_postings_sum_duplicates_whatever_the_input_order(shuffled):
    """Rows ascending inside each column (the usual append) and an arbitrary order give the same CSC."""
    rng = np.random.default_rng(5)
    rows = np.sort(rng.integers(0, 400, 20_000))
    cols = rng.integers(0, 90_000, 20_000)
    counts = rng.integers(1, 4, 20_000)
    if shuffled:
        perm = rng.permutation(20_000)
        rows, cols, counts = rows[perm], cols[perm], counts[perm]
    p = Postings.from_pairs(rows, cols, counts, 400, 90_000)
    dense = np.zeros((400, 90_000), dtype=np.int64)
    np.add.at(dense, (rows, cols), counts)
    got = np.zeros_like(dense)
    r, c, d = p.pairs()
    got[r, c] = d
    assert np.array_equal(got, dense)
    for col in range(0, 90_000, 997):  # rows ascend inside every column
        seg = p.indices[p.indptr[col]:p.indptr[col + 1]]
        assert np.all(np.diff(seg) > 0)


def _weighed_columns(index, monkeypatch):
    seen = []
    original = BM25Index._column_weights

    def spy(self, c):
        seen.append(c)
        return original(self, c)
    monkeypatch.setattr(BM25Index, "_column_weights", spy)
    return seen


@pytest.mark.parametrize("edit", ["add", "remove"])
def test_a_search_after_an_edit_weighs_only_the_query_terms_postings(edit, monkeypatch):
    """The first search after a Train or a removal must not walk every posting of the library
    (16M at 100k passages): only the query terms' columns are weighed, and the scores equal the
    whole-index computation that the stored format keeps."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(300)]
    docs = [list(rng.choice(words, size=40)) for _ in range(500)]
    index = BM25Index()
    index.add(range(500), docs)
    index.search(["w1"])
    if edit == "add":
        index.add([500, 501], [["w3", "w3", "w9"], ["w9", "w299"]])
    else:
        index.remove([0, 17, 250])
    seen = _weighed_columns(index, monkeypatch)
    scores = index.scores(["w3", "w9", "w3", "unknown"])
    assert sorted(set(seen)) == sorted({index.vocab["w3"], index.vocab["w9"]})
    weights, _ = index._all_weights()
    c = index._counts
    cols = np.repeat(np.arange(c.n_cols), np.diff(c.indptr))
    full = np.zeros(index.ids.shape[0])
    for term, times in (("w3", 2), ("w9", 1)):
        on = cols == index.vocab[term]
        np.add.at(full, c.indices[on], weights[on] * times)
    np.testing.assert_allclose(scores, full, rtol=1e-6)
    if edit == "remove":
        assert scores[[0, 17, 250]].tolist() == [0, 0, 0]
