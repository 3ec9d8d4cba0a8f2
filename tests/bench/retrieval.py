"""Retrieval benchmark on BEIR SciFact: quality, build time, latency, memory.

    python tests/bench/retrieval.py [--data DIR] [--out FILE] [--no-browser]

It measures on CPython, then runs the same retrieval_core.py inside the built
bundle in headless Chromium (Pyodide), and prints both with the ratio.

Data: ``$QUIRE_DATA/scifact`` (default ``../shared/data/scifact`` next to the
repo) with corpus.jsonl, queries.jsonl, qrels/test.tsv.  Hybrid rows need
``OLLAMA_HOST`` serving an embedding model; otherwise they say "skipped".
The measuring itself lives in retrieval_core.py so the browser can run it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import provenance  # noqa: E402
import retrieval_core as core  # noqa: E402

from quire.retrieval.dense import doc_text, model_family, query_text  # noqa: E402

K1, B = 1.5, 0.75  # chosen on SciFact *train* qrels (809 queries), never on test
EMBED_BATCH = 64


def load_scifact(path: Path):
    corpus = {}
    with open(path / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            corpus[d["_id"]] = {"title": d.get("title", ""), "text": d.get("text", "")}
    with open(path / "queries.jsonl", encoding="utf-8") as f:
        queries = {d["_id"]: d["text"] for d in map(json.loads, f)}
    qrels: dict = {}
    with open(path / "qrels" / "test.tsv", encoding="utf-8") as f:
        for line in f:
            q, d, s = line.rstrip("\n").split("\t")
            if s.isdigit():  # skips the header
                qrels.setdefault(q, {})[d] = int(s)
    return corpus, queries, qrels


def ollama(host: str, path: str, body: dict | None = None, timeout: float = 600):
    url = host.rstrip("/") if host.startswith("http") else f"http://{host}"
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def find_embedder(host: str) -> str | None:
    models = ollama(host, "/api/tags", timeout=3)["models"]
    for m in models:
        if "embedding" in m.get("capabilities", []) or model_family(m["name"]):
            return m["name"]
    return None


def hybrid_rows(corpus, queries, qrels) -> dict:
    host = os.environ.get("OLLAMA_HOST")
    if not host:
        return {"skipped": "OLLAMA_HOST not set"}
    try:
        model = find_embedder(host)
    except OSError as e:
        return {"skipped": f"OLLAMA_HOST={host} did not answer: {e}"}
    if not model:
        return {"skipped": f"no embedding model at {host}"}

    def embed(texts):
        out = []
        for i in range(0, len(texts), EMBED_BATCH):
            out += ollama(host, "/api/embed", {"model": model, "input": texts[i : i + EMBED_BATCH], "truncate": True})["embeddings"]
        return out

    ids, texts = core.doc_texts(corpus)
    t0 = time.perf_counter()
    doc_vectors = dict(zip(ids, embed([doc_text(model, t, title=corpus[d]["title"] or None) for d, t in zip(ids, texts)])))
    qids = list(qrels)
    query_vectors = dict(zip(qids, embed([query_text(model, queries[q]) for q in qids])))
    result = core.hybrid(corpus, queries, qrels, doc_vectors, query_vectors, k1=K1, b=B)
    return {"model": model, "embed_s": time.perf_counter() - t0, **result}


BROWSER_RUN = """
import base64, json, sys, time, types
src = base64.b64decode("{core}").decode()
core = types.ModuleType("retrieval_core"); exec(compile(src, "retrieval_core.py", "exec"), core.__dict__)
corpus, queries, qrels = json.loads(base64.b64decode("{data}").decode())
out = {{"lexical_5k": core.lexical(corpus, queries, qrels, k1={k1}, b={b})}}
out["lexical_scaled"] = core.lexical_scaled(corpus, queries, qrels, {scale}, k1={k1}, b={b})
out["dense_scaled"] = core.dense_latency({scale}, 768)
out["python"] = sys.version.split()[0]
json.dumps(out)
"""


def in_browser(corpus, queries, qrels, scale: int) -> dict:
    """The same measurements inside the built bundle (Pyodide in a worker) in Chromium."""
    import base64

    from in_browser import run_json

    return run_json(BROWSER_RUN.format(
        core=base64.b64encode((Path(__file__).parent / "retrieval_core.py").read_bytes()).decode(),
        data=base64.b64encode(json.dumps([corpus, queries, qrels]).encode()).decode(),
        k1=K1, b=B, scale=scale))


ENGINE_RUN = """
import base64, json, types
src = base64.b64decode("{core}").decode()
core = types.ModuleType("retrieval_core"); exec(compile(src, "retrieval_core.py", "exec"), core.__dict__)
corpus, queries, qrels = json.loads(base64.b64decode("{data}").decode())
json.dumps(core.engine_lexical(corpus, queries, qrels, modes=["query-language"]))
"""


def engine_only(args) -> None:
    """SciFact lexical nDCG@10 the way Quire searches a library: one source per abstract, ~1000-char
    passages, ``HybridIndex.search`` top 30 passages -> first 10 distinct documents."""
    import base64

    corpus, queries, qrels = load_scifact(args.data)
    machine, loads = provenance.machine(), [provenance.load()]
    results = {"cpython": core.engine_lexical(corpus, queries, qrels)}
    loads.append(provenance.load())
    if not args.no_browser:
        from in_browser import run_json

        results["browser"] = run_json(ENGINE_RUN.format(
            core=base64.b64encode((Path(__file__).parent / "retrieval_core.py").read_bytes()).decode(),
            data=base64.b64encode(json.dumps([corpus, queries, qrels]).encode()).decode()))
        loads.append(provenance.load())
    for runtime, r in results.items():
        for mode in ("query-language", "all-languages", "row-language"):
            if mode in r:
                print(f"{runtime:<8} {mode:<16} nDCG@10 {r[mode]['ndcg@10']:.4f}  ({r['docs']} docs, {r['passages']} passages, "
                      f"languages {r['languages']})")
    results.update(machine=machine, load=loads)
    out = args.out.with_name("retrieval_engine.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")


def main() -> None:
    data_root = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=data_root / "scifact")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "retrieval.json")
    parser.add_argument("--scale", type=int, default=100_000, help="chunks for the scaled runs")
    parser.add_argument("--no-browser", action="store_true", help="CPython only")
    parser.add_argument("--engine-only", action="store_true",
                        help="only SciFact through HybridIndex.search (passages, query-stopword modes), CPython and browser")
    args = parser.parse_args()
    if args.engine_only:
        return engine_only(args)

    corpus, queries, qrels = load_scifact(args.data)
    started = time.perf_counter()
    loads = [provenance.load()]
    results = {
        "machine": provenance.machine(), "load": loads,
        "env": {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(), "k1": K1, "b": B},
        "lexical_5k": core.lexical(corpus, queries, qrels, k1=K1, b=B),
        "lexical_scaled": core.lexical_scaled(corpus, queries, qrels, args.scale, k1=K1, b=B),
        "dense_scaled": core.dense_latency(args.scale, 768),
        "hybrid_5k": hybrid_rows(corpus, queries, qrels),
    }
    loads.append(provenance.load())
    if not args.no_browser:
        results["browser"] = in_browser(corpus, queries, qrels, args.scale)
        loads.append(provenance.load())
    results["runtime_s"] = time.perf_counter() - started

    lex, big, dense, hyb = (results[k] for k in ("lexical_5k", "lexical_scaled", "dense_scaled", "hybrid_5k"))
    rows = [
        ("lexical nDCG@10 (300 test q)", f"{lex['ndcg@10']:.4f}", ">= 0.69 (bm25s+stem 0.687)"),
        ("lexical Recall@100", f"{lex['recall@100']:.4f}", ""),
        (f"build {lex['docs']} docs: tokenize / index", f"{lex['tokenize_s']:.2f} s / {lex['index_s']:.3f} s", ""),
        (f"lexical query p50 / p95 @ {lex['docs']}", f"{lex['p50_ms']:.2f} / {lex['p95_ms']:.2f} ms", "p50 < 10 ms"),
        (f"index build @ {big['docs']} (tokens given)", f"{big['index_s']:.2f} s", ""),
        (f"lexical query p50 / p95 @ {big['docs']}", f"{big['p50_ms']:.2f} / {big['p95_ms']:.2f} ms", "p50 < 50 ms"),
        (f"BM25 arrays @ {big['docs']}", f"{big['index_bytes'] / 2**20:.1f} MiB", ""),
        (f"dense exact p50 / p95 @ {dense['docs']}x{dense['dim']}", f"{dense['p50_ms']:.2f} / {dense['p95_ms']:.2f} ms", "< 100 ms"),
        (f"dense arrays @ {dense['docs']}x{dense['dim']}", f"{dense['index_bytes'] / 2**20:.1f} MiB", ""),
    ]
    if "skipped" in hyb:
        rows.append(("hybrid nDCG@10", "skipped", hyb["skipped"]))
    else:
        rows.append((f"dense nDCG@10 ({hyb['model']})", f"{hyb['dense']['ndcg@10']:.4f}", ""))
        rows.append(("hybrid RRF nDCG@10", f"{hyb['fused']['ndcg@10']:.4f}", "BM25+BGE RRF anchor 0.744"))
    width = max(len(r[0]) for r in rows)
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:<22} {target}")
    if "browser" in results:
        br = results["browser"]
        print(f"\nsame measurements in Chromium (Pyodide, Python {br['python']}) vs CPython {platform.python_version()}:")
        pairs = [
            ("lexical nDCG@10", br["lexical_5k"]["ndcg@10"], lex["ndcg@10"], "{:.4f}"),
            (f"tokenize {lex['docs']} docs (s)", br["lexical_5k"]["tokenize_s"], lex["tokenize_s"], "{:.2f}"),
            (f"index build {lex['docs']} docs (s)", br["lexical_5k"]["index_s"], lex["index_s"], "{:.3f}"),
            (f"lexical p50 @ {lex['docs']} (ms)", br["lexical_5k"]["p50_ms"], lex["p50_ms"], "{:.2f}"),
            (f"lexical p95 @ {lex['docs']} (ms)", br["lexical_5k"]["p95_ms"], lex["p95_ms"], "{:.2f}"),
            (f"index build @ {big['docs']} (s)", br["lexical_scaled"]["index_s"], big["index_s"], "{:.2f}"),
            (f"lexical p50 @ {big['docs']} (ms)", br["lexical_scaled"]["p50_ms"], big["p50_ms"], "{:.2f}"),
            (f"dense p50 @ {dense['docs']}x768 (ms)", br["dense_scaled"]["p50_ms"], dense["p50_ms"], "{:.2f}"),
            (f"dense p95 @ {dense['docs']}x768 (ms)", br["dense_scaled"]["p95_ms"], dense["p95_ms"], "{:.2f}"),
            (f"BM25 arrays @ {big['docs']} (MiB)", br["lexical_scaled"]["index_bytes"] / 2**20, big["index_bytes"] / 2**20, "{:.1f}"),
        ]
        print(f"{'measure':<{width}}  {'browser':>10} {'CPython':>10} {'ratio':>7}")
        for name, b_val, c_val, fmt in pairs:
            ratio = b_val / c_val if c_val else float("nan")
            print(f"{name:<{width}}  {fmt.format(b_val):>10} {fmt.format(c_val):>10} {ratio:>6.1f}x")
        print("targets in the browser: lexical p50 < 10 ms at 5k and < 50 ms at 100k; dense 100k x 768 < 100 ms; within 3x of CPython")
    print(f"(runtime {results['runtime_s']:.0f} s, Python {platform.python_version()})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
