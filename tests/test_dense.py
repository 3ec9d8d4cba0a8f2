import numpy as np
import pytest

from quire.retrieval.dense import DenseIndex, cache_key, doc_text, missing_hashes, model_family, query_text


@pytest.mark.parametrize(
    "model,query,doc",
    [
        ("embeddinggemma", "task: search result | query: Q", "title: none | text: D"),
        ("embeddinggemma:300m", "task: search result | query: Q", "title: none | text: D"),
        ("nomic-embed-text:latest", "search_query: Q", "search_document: D"),
        ("hf.co/nomic-ai/nomic-embed-text-v1.5-GGUF:Q8_0", "search_query: Q", "search_document: D"),
        ("mxbai-embed-large", "Represent this sentence for searching relevant passages: Q", "D"),
        ("snowflake-arctic-embed2:568m", "query: Q", "D"),
        ("all-minilm:l6-v2", "Q", "D"),
        ("bge-m3", "Q", "D"),
        ("qwen3-embedding:0.6b", "Instruct: Given a question, retrieve passages that answer it\nQuery:Q", "D"),
        ("unknown-model", "Q", "D"),
    ],
)
def test_prefixes(model, query, doc):
    assert query_text(model, "Q") == query
    assert doc_text(model, "D") == doc


def test_longest_prefix_wins_and_title_fills_gemma_template():
    assert model_family("snowflake-arctic-embed2") == "snowflake-arctic-embed2"
    assert doc_text("embeddinggemma", "D", title="Notes") == "title: Notes | text: D"
    assert query_text("nomic-embed-text", "{text} {task}") == "search_query: {text} {task}"  # user text is not a template


@pytest.mark.parametrize(
    "hashes,model,cached,expected",
    [
        (["a", "b", "c"], "m", set(), ["a", "b", "c"]),
        (["a", "b", "a"], "m", {("a", "m")}, ["b"]),
        (["a", "b"], "m:latest", {("a", "m"), ("b", "m")}, []),  # :latest is the same weights
        (["a", "b"], "other", {("a", "m"), ("b", "m")}, ["a", "b"]),  # another model re-embeds
        ([], "m", set(), []),
    ],
)
def test_missing_hashes(hashes, model, cached, expected):
    keys = {cache_key(h, m) for h, m in cached}
    assert missing_hashes(hashes, model, keys) == expected


def make_index(n=40, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    index = DenseIndex()
    index.add(range(n), vectors)
    return index, vectors


def test_search_is_exact_cosine_order():
    index, vectors = make_index()
    q = vectors[7] + 0.01
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    expected = np.argsort(-(unit @ (q / np.linalg.norm(q))))[:5].tolist()
    hits = index.search(q, k=5)
    assert [d for d, _ in hits] == expected and hits[0][0] == 7
    assert hits[0][1] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("compact_at", [0.05, 1.0])
def test_removed_never_returned(compact_at):
    index, vectors = make_index()
    index.compact_at = compact_at
    index.remove([7, 8, 9])
    assert 7 not in {d for d, _ in index.search(vectors[7], k=40)}
    assert len(index.search(vectors[7], k=40)) == 37


def test_mask_and_min_score():
    index, vectors = make_index()
    mask = np.zeros(40, dtype=bool)
    mask[[3, 4]] = True
    assert {d for d, _ in index.search(vectors[7], k=10, mask=mask)} == {3, 4}
    assert all(s >= 0.5 for _, s in index.search(vectors[7], k=40, min_score=0.5))


def test_growth_keeps_earlier_rows():
    index = DenseIndex()
    for i in range(20):
        index.add([f"c{i}"], [[float(i == j) for j in range(20)]])
    assert index.search([0.0] * 13 + [1.0] + [0.0] * 6, k=1)[0][0] == "c13"


def test_round_trip():
    index, vectors = make_index()
    index.remove([1])
    copy = DenseIndex.from_bytes(index.to_bytes())
    for q in vectors[:5]:
        assert copy.search(q, k=6) == index.search(q, k=6)
    copy.add([100], vectors[:1])
    assert copy.n_live == 40


@pytest.mark.parametrize(
    "ids,vectors,error",
    [([1, 2], [[1.0, 0.0]], "2 ids for 1"), ([1, 1], [[1.0, 0.0], [0.0, 1.0]], "duplicate"), ([1], [[1.0, 0.0, 0.0]], "3 dims")],
)
def test_add_rejects_bad_input(ids, vectors, error):
    index = DenseIndex()
    index.add([0], [[1.0, 0.0]])
    with pytest.raises(ValueError, match=error):
        index.add(ids, vectors)
