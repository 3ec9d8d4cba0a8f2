"""Retrieval measurements over plain Python data, for CPython and Pyodide alike.

Imports only quire, numpy and the standard library, so the browser can run
this file's source text unchanged.  Inputs:
  corpus  {doc_id: {"title": str, "text": str}}
  queries {query_id: str}
  qrels   {query_id: {doc_id: relevance}}
Every function returns a dict of plain numbers.
"""

from __future__ import annotations

import math
import time

import numpy as np

from quire.chunking import spans
from quire.model import chunk_id, parse_chunk_id
from quire.retrieval import BM25Index, DenseIndex, HybridIndex, Tokenizer
from quire.retrieval.fusion import fuse
from quire.retrieval.query import MODES as QUERY_MODES


def ndcg_at_k(ranked: list, rels: dict, k: int = 10) -> float:
    """nDCG@k of a ranking against graded relevances.

    >>> round(ndcg_at_k(["b", "a"], {"a": 1}), 4)  # hit at rank 2: 1/log2(3)
    0.6309
    """
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(rels.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: list, rels: dict, k: int = 100) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def percentiles_ms(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95))}


def doc_texts(corpus: dict) -> tuple[list, list[str]]:
    ids = list(corpus)
    return ids, [f"{corpus[d].get('title', '')}\n{corpus[d].get('text', '')}" for d in ids]


def score_runs(runs: dict, qrels: dict) -> dict:
    """runs {query_id: [doc_id best first]} -> mean nDCG@10 and Recall@100 over qrels' queries."""
    qids = [q for q in qrels if q in runs]
    return {
        "ndcg@10": float(np.mean([ndcg_at_k(runs[q], qrels[q], 10) for q in qids])),
        "recall@100": float(np.mean([recall_at_k(runs[q], qrels[q], 100) for q in qids])),
        "queries": len(qids),
    }


def lexical(corpus: dict, queries: dict, qrels: dict, *, language: str = "en", k1: float = 1.5, b: float = 0.75) -> dict:
    """Build a BM25 index over title+text, run every judged query: quality, build time, latency."""
    tokenizer = Tokenizer(language)
    ids, texts = doc_texts(corpus)
    t0 = time.perf_counter()
    tokens = [tokenizer(t) for t in texts]
    t1 = time.perf_counter()
    index = BM25Index(k1=k1, b=b)
    index.add(ids, tokens)
    index.search(["warm"], 1)  # merges and computes weights: part of the build
    t2 = time.perf_counter()
    warm_up(index, tokenizer, queries, qrels)
    runs, latency = {}, []
    for qid in qrels:
        start = time.perf_counter()
        for _ in range(REPEAT):
            hits = index.search(tokenizer(queries[qid]), 100)
        latency.append((time.perf_counter() - start) / REPEAT)
        runs[qid] = [d for d, _ in hits]
    return {
        **score_runs(runs, qrels), "docs": len(ids), "tokenize_s": t1 - t0, "index_s": t2 - t1,
        **percentiles_ms(latency), "index_bytes": index.nbytes(),
    }


WARM_UP = 300  # queries run before timing: first calls pay one-off costs (Pyodide compiles wasm lazily, then tiers it up)
# A query's latency is the mean of this many back-to-back runs: browsers coarsen
# performance.now() (which Pyodide's clock reads) to 0.1 ms, too coarse for one sub-ms query.
REPEAT = 5


def warm_up(index, tokenizer, queries: dict, qrels: dict) -> None:
    """Run ``WARM_UP`` queries that are *not* measured (outside the test qrels) through the
    timed path, in CPython and in the browser alike, so latency excludes one-off costs."""
    for qid in [q for q in queries if q not in qrels][:WARM_UP]:
        index.search(tokenizer(queries[qid]), 100)


def replicate(token_lists: list[list[str]], n_docs: int, perturb_every: int = 10) -> list[list[str]]:
    """Copies of ``token_lists`` up to ``n_docs``; copy r renames every ``perturb_every``-th
    token to ``token~r`` so the vocabulary and df grow as with new material."""
    out = list(token_lists)
    r = 0
    while len(out) < n_docs:
        r += 1
        for toks in token_lists[: n_docs - len(out)]:
            out.append([t if i % perturb_every else f"{t}~{r}" for i, t in enumerate(toks)])
    return out


def lexical_scaled(corpus: dict, queries: dict, qrels: dict, n_docs: int = 100_000, *, language: str = "en",
                   k1: float = 1.5, b: float = 0.75) -> dict:
    """BM25 build time, latency and array bytes at ``n_docs`` chunks (the corpus replicated)."""
    tokenizer = Tokenizer(language)
    _, texts = doc_texts(corpus)
    tokens = replicate([tokenizer(t) for t in texts], n_docs)
    t0 = time.perf_counter()
    index = BM25Index(k1=k1, b=b)
    index.add(range(len(tokens)), tokens)
    index.search(["warm"], 1)
    build = time.perf_counter() - t0
    warm_up(index, tokenizer, queries, qrels)
    query_tokens = [tokenizer(queries[q]) for q in qrels]
    latency = []
    for qt in query_tokens:
        start = time.perf_counter()
        for _ in range(REPEAT):
            index.search(qt, 100)
        latency.append((time.perf_counter() - start) / REPEAT)
    return {"docs": len(tokens), "index_s": build, **percentiles_ms(latency), "index_bytes": index.nbytes()}


def dense_latency(n_docs: int = 100_000, dim: int = 768, n_queries: int = 50, k: int = 50, seed: int = 0) -> dict:
    """Exact search over random unit vectors (the cost does not depend on the values)."""
    rng = np.random.default_rng(seed)
    index = DenseIndex()
    index.add(range(n_docs), rng.standard_normal((n_docs, dim), dtype=np.float32))
    queries = rng.standard_normal((n_queries, dim), dtype=np.float32)
    for q in rng.standard_normal((WARM_UP // 10, dim), dtype=np.float32):
        index.search(q, k)
    latency = []
    for q in queries:
        start = time.perf_counter()
        index.search(q, k)
        latency.append(time.perf_counter() - start)
    return {"docs": n_docs, "dim": dim, **percentiles_ms(latency), "index_bytes": index.nbytes()}


def hybrid(corpus: dict, queries: dict, qrels: dict, doc_vectors: dict, query_vectors: dict, *,
           language: str = "en", k1: float = 1.5, b: float = 0.75, candidates: int = 100, method: str = "rrf") -> dict:
    """nDCG of dense alone and of BM25+dense fused by ``method``, given precomputed vectors keyed by id."""
    tokenizer = Tokenizer(language)
    ids, texts = doc_texts(corpus)
    bm25 = BM25Index(k1=k1, b=b)
    bm25.add(ids, [tokenizer(t) for t in texts])
    dense = DenseIndex()
    dense.add(ids, [doc_vectors[d] for d in ids])
    dense_runs, fused_runs = {}, {}
    for qid in qrels:
        d_hits = dense.search(query_vectors[qid], candidates)
        b_hits = bm25.search(tokenizer(queries[qid]), candidates)
        dense_runs[qid] = [d for d, _ in d_hits]
        fused_runs[qid] = [h.id for h in fuse(method, b_hits, d_hits, k=candidates)]
    return {"dense": score_runs(dense_runs, qrels), "fused": score_runs(fused_runs, qrels)}


def doc_of(passage_id: str) -> str:
    """The document a passage belongs to: each document is one source, so its chunk id's source.

    >>> doc_of("4983:2")
    '4983'
    """
    return parse_chunk_id(passage_id)[0]


def distinct_docs(chunk_ids: list[str], k: int = 10) -> list[str]:
    """First ``k`` distinct documents of a passage ranking.

    >>> distinct_docs(["a:0", "a:1", "b:0", "c:2"], 2)
    ['a', 'b']
    """
    return list(dict.fromkeys(doc_of(c) for c in chunk_ids))[:k]


def engine_index(corpus: dict, *, chunked: bool = True, doc_vectors: dict | None = None, **options) -> HybridIndex:
    """SciFact as Quire indexes a library: one source per document, its language detected, split
    into ~1000-character passages like ``quire.chunking`` does (or one passage per document, to use
    document vectors).  ``options`` go to ``HybridIndex`` (fusion, query_stopwords, ...)."""
    index = HybridIndex(**options)
    ids, texts = doc_texts(corpus)
    for doc, text in zip(ids, texts):
        parts = [text[a:z] for a, z in spans(text)] if chunked else [text]
        vectors = [doc_vectors[doc]] if doc_vectors is not None else None
        index.add_chunks(doc, [chunk_id(doc, n) for n in range(len(parts))], parts, vectors=vectors)
    return index


def engine_lexical(corpus: dict, queries: dict, qrels: dict, modes=QUERY_MODES, passages: int = 30) -> dict:
    """nDCG@10 through ``HybridIndex.search`` (what ``window.quire.search`` runs): the first 10 distinct
    documents among the top ``passages`` passages, per query-stopword mode."""
    index = engine_index(corpus)
    languages = {}
    for s in index.by_code:
        languages[s["language"]] = languages.get(s["language"], 0) + 1
    out = {"docs": len(corpus), "passages": index.n_chunks, "languages": languages}
    for mode in modes:
        index.query_stopwords = mode
        runs = {q: distinct_docs([h.id for h in index.search(queries[q], k=passages)]) for q in qrels}
        out[mode] = score_runs(runs, qrels)
    return out


# Rows of ``fusion_runs``: (label, HybridIndex fusion, or which side alone).  Fused rows keep the
# engine's other defaults (50 candidates per side, dense cut-off z >= 1).
FUSION_ROWS = [("lexical (BM25)", "lexical"), ("dense (e5)", "dense"),
               ("z-score 1:1 (engine default)", "zscore"), ("RRF k=60", "rrf")]


def fusion_runs(corpus: dict, queries: dict, doc_vectors: dict, query_vectors: dict, k: int = 10) -> dict:
    """Top-``k`` document ids per row of ``FUSION_ROWS`` and query, through ``engine_index`` (one passage
    per document, engine defaults but the fusion method): {label: {query_id: [doc_id best first]}}.
    The same function runs on CPython and in the tab, so their lists can be compared one by one."""
    index = engine_index(corpus, chunked=False, doc_vectors=doc_vectors)
    out = {}
    for label, how in FUSION_ROWS:
        if how == "lexical":
            run = lambda q: [h.id for h in index.search(queries[q], k=k)]  # noqa: E731
        elif how == "dense":
            run = lambda q: [index.row_ids[i] for i, _ in index.dense.search(query_vectors[q], k)]  # noqa: E731
        else:
            index.fusion = how
            run = lambda q: [h.id for h in index.search(queries[q], k=k, query_vector=query_vectors[q])]  # noqa: E731
        out[label] = {q: [doc_of(c) for c in run(q)] for q in query_vectors}
    return out
