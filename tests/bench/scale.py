"""Storage that scales with the change: edits, reopening, search and storage on a large library.

    python3 tests/bench/scale.py [--sizes 5000,100000] [--no-browser] [--no-cpython] [--dim 384] [--embedder]

The library is real text: SciFact's 5,183 abstracts and PubMedQA's 1,000 contexts
(``$QUIRE_DATA``, default ``../shared/data``), 40 abstracts per Markdown source (one section
each).  Past the corpus's own ~13k passages, later rounds use the same abstracts with their
sentences rotated (copy 2 starts at the second sentence, ...), so every passage is distinct
text with real words.  Vectors are random unit vectors of ``--dim`` (multilingual-e5-small
has 384) written into the embedding cache, as embedding would write them: this measures
storage and time, not search quality.

Each engine (CPython on a SQLite file; the built bundle in headless Chromium through
``window.quire``) builds the library with one Train, fills the vectors, then measures:
rename a category, remove one source, Train one more PDF (the 13-page SPECTER paper from
tests/fixtures/pdfs, no embedding model), reopen until the first search answers, search
p50 over 200 SciFact queries (page API, and inside the engine: ``Quire.search``,
``Library.search``, ``HybridIndex.search``), stored bytes against the raw parts (passage
text + BM25 postings at 6 bytes each + vectors), peak memory.  "written" is what the edit's
commits put (``store.commit`` metered).  The page's own embedder is off ("None (keywords only)",
as before it existed, so the figures stay comparable); ``--embedder`` keeps it on.  Prints a table;
JSON (with the machine, the commit and the load) goes to tests/bench/results/scale.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import provenance  # noqa: E402

PDF = ROOT / "tests" / "fixtures" / "pdfs" / "acl-papers" / "2020.acl-main.207.pdf"
PER_SOURCE = 40  # abstracts per source: a ~60 KB document of ~80 passages
MODEL = "bench-e5"
_SENT = re.compile(r"(?<=[.!?])\s+")


def corpus(data: Path) -> list[tuple[str, str]]:
    docs = []
    for path in (data / "scifact" / "corpus.jsonl", data / "pubmedqa" / "beir" / "corpus.jsonl"):
        for line in path.read_text().splitlines():
            d = json.loads(line)
            docs.append(((d.get("title") or d["_id"])[:100], d["text"]))
    return docs


def queries(data: Path, n: int = 200) -> list[str]:
    lines = (data / "scifact" / "queries.jsonl").read_text().splitlines()
    return [json.loads(x)["text"] for x in lines[:n]]


def sources(docs: list[tuple[str, str]], passages: int) -> list[tuple[str, str]]:
    """Markdown sources of PER_SOURCE abstracts until about ``passages`` passages (~900 characters each)."""
    out, parts, estimate, copy = [], [], 0, 0
    while estimate < passages:
        for title, text in docs:
            sentences = _SENT.split(text)
            k = copy % max(len(sentences), 1)
            body = " ".join(sentences[k:] + sentences[:k])
            parts.append(f"## {title}\n\n{body}")
            estimate += max(1, -(-len(body) // 900))
            if len(parts) == PER_SOURCE or estimate >= passages:
                out.append((f"source-{len(out):05d}.md", f"# Source {len(out)}\n\n" + "\n\n".join(parts)))
                parts = []
            if estimate >= passages:
                break
        copy += 1
    return out


def p50(values):
    return round(statistics.median(values), 3) if values else None


# ----------------------------------------------------------------------------- CPython
def _size(v) -> int:
    return len(v) if isinstance(v, (bytes, bytearray, memoryview)) else len(json.dumps(v))


async def cpython(srcs, qs, dim: int, workdir: Path) -> dict:
    import numpy as np

    from quire.app import Quire
    from quire.store import SQLiteStore

    class Metered(SQLiteStore):
        written = 0

        async def commit(self, puts=(), deletes=()):
            puts = list(puts)
            await super().commit(puts, deletes)
            Metered.written += sum(_size(v) for _, _, v in puts)

    path = workdir / "library.sqlite"
    r = {}
    q = await Quire.open(Metered(path))
    await q.set_keep_originals(False)
    t = time.perf_counter()
    for name, text in srcs:
        await q.stage(name, text.encode(), category="Bench")
    counts = await q.train()
    r["build_s"] = round(time.perf_counter() - t, 2)
    lib = q.library
    r["passages"] = lib.index.n_chunks
    # Vectors, as embedding writes them: the cache only, then the index's manifest.
    t, Metered.written = time.perf_counter(), 0
    ids = sorted(lib.index.live_ids())
    rng = np.random.default_rng(0)
    for start in range(0, len(ids), 5000):
        batch = ids[start:start + 5000]
        vecs = rng.normal(size=(len(batch), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        from quire.model import parse_chunk_id
        from quire.retrieval.dense import cache_key
        chunks = [(await lib.chunks_of(sid))[n] for sid, n in map(parse_chunk_id, batch)]
        await q.store.commit([("vectors", cache_key(c["hash"], MODEL), v.tobytes()) for c, v in zip(chunks, vecs)])
        lib.index.add_vectors(batch, vecs, MODEL)
    vec_bytes = Metered.written
    await lib.save_index()
    r["embed_index_written"] = Metered.written - vec_bytes
    r["vectors_written"] = vec_bytes
    r.update(await _edits_cpython(q, lib))
    lat_api, lat_lib, lat_core = [], [], []
    await q.search(qs[0])
    for text in qs:
        t = time.perf_counter(); await q.search(text); lat_api.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter(); lib.search(text); lat_lib.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter(); lib.index.search(text); lat_core.append((time.perf_counter() - t) * 1000)
    r["search_api_p50_ms"], r["search_library_p50_ms"], r["search_core_p50_ms"] = p50(lat_api), p50(lat_lib), p50(lat_core)
    # Storage against the raw parts.
    usage = await q.store.usage()
    await lib.load_chunks()
    text = sum(len(c["text"].encode()) for s in lib.sources() for c in (lib.passages.get(s["id"]) or []))
    lib.index.bm25._refresh()
    postings = int(lib.index.bm25._counts.indices.shape[0]) * 6
    vectors = lib.index.dense.n_live * dim * 4
    stored = sum(usage[b]["bytes"] for b in ("chunks", "index", "vectors"))
    r["storage"] = {"buckets": usage, "raw_text": text, "raw_postings": postings, "raw_vectors": vectors,
                    "stored": stored, "file": path.stat().st_size, "ratio": round(stored / (text + postings + vectors), 3)}
    # The progress service records the edits in the background: let that land before closing.
    await asyncio.gather(*(task for task in asyncio.all_tasks() if task is not asyncio.current_task()))
    q.store.db.close()
    t = time.perf_counter()
    again = await Quire.open(SQLiteStore(path))
    await again.search(qs[1])
    await again.library.vectors_ready()
    r["reopen_s"] = r["reopen_vectors_s"] = round(time.perf_counter() - t, 2)
    r["reopen_dense"] = again.library.index.dense.n_live
    r["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    r["trained"] = {k: v for k, v in counts.items() if k != "files"}
    return r


async def _edits_cpython(q, lib) -> dict:
    from quire.app import Quire  # noqa: F401

    store = type(q.store)
    out = {}
    ids = [s["id"] for s in lib.sources()]
    for label, edit in (("rename", lambda: q.set_category(ids[1], "Renamed")), ("remove", lambda: q.remove(ids[2]))):
        store.written = 0
        t = time.perf_counter()
        await edit()
        out[f"{label}_s"], out[f"{label}_written"] = round(time.perf_counter() - t, 3), store.written
    store.written = 0
    t = time.perf_counter()
    await q.stage(PDF.name, PDF.read_bytes())
    trained = await q.train()
    out["pdf_s"], out["pdf_written"] = round(time.perf_counter() - t, 2), store.written
    out["pdf_passages"] = trained["files"][0].get("chunks")
    store.written = 0
    t = time.perf_counter()
    await q.search("specter citation embeddings")  # BM25 weights refresh on the first search after a change
    out["first_search_after_train_ms"] = round((time.perf_counter() - t) * 1000, 1)
    return out


# ----------------------------------------------------------------------------- browser
METER = """
import json, quire.browser as b
S = b._engine.store
if not hasattr(S, "meter"):
    S.meter, _orig = [0], S.commit
    async def _metered(puts=(), deletes=(), _orig=_orig):
        puts = list(puts)
        S.meter[0] += sum(len(v) if isinstance(v, (bytes, bytearray, memoryview)) else len(json.dumps(v)) for _, _, v in puts)
        return await _orig(puts, deletes)
    S.commit = _metered
S.meter[0] = 0
0
"""
WRITTEN = "import quire.browser as b\nb._engine.store.meter[0]"
VECTORS = """
import numpy as np, quire.browser as b
from quire.model import parse_chunk_id
from quire.retrieval.dense import cache_key
e = b._engine; lib = e.library
ids = sorted(lib.index.live_ids())
rng = np.random.default_rng(0)
for start in range(0, len(ids), 5000):
    batch = ids[start:start + 5000]
    vecs = rng.normal(size=(len(batch), {dim})).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    chunks = [(await lib.chunks_of(sid))[n] for sid, n in map(parse_chunk_id, batch)]
    await e.store.commit([("vectors", cache_key(c["hash"], "{model}"), v.tobytes()) for c, v in zip(chunks, vecs)])
    lib.index.add_vectors(batch, vecs, "{model}")
written = e.store.meter[0]
await lib.save_index()
[written, e.store.meter[0] - written, len(ids)]
"""
ENGINE_SEARCH = """
import json, time, quire.browser as b
e = b._engine; lib = e.library
qs = json.loads({qs!r})
def p50(v): v = sorted(v); return round(v[len(v) // 2], 3)
api, libr, core = [], [], []
await e.search(qs[0])
for text in qs:
    t = time.perf_counter(); await e.search(text); api.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter(); lib.search(text); libr.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter(); lib.index.search(text); core.append((time.perf_counter() - t) * 1000)
[p50(api), p50(libr), p50(core)]
"""
STORAGE = """
import quire.browser as b
e = b._engine; lib = e.library
await lib.load_chunks()
text = sum(len(c["text"].encode()) for s in lib.sources() for c in (lib.passages.get(s["id"]) or []))
lib.index.bm25._refresh()
[text, int(lib.index.bm25._counts.indices.shape[0]) * 6, lib.index.dense.n_live, lib.index.dense.dim or 0]
"""
HEAP = "import pyodide_js\nint(pyodide_js._module.HEAP8.length)"
PAGE_SEARCH = """async (qs) => {
  await quire.search(qs[0]);
  const times = [];
  for (const q of qs) { const t = performance.now(); await quire.search(q); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}"""
TIMED = """async ([how, args]) => {
  const t = performance.now();
  if (how === 'rename') await quire.setCategory(args[0], 'Renamed');
  if (how === 'remove') await quire.remove(args[0]);
  if (how === 'pdf') { await quire.stage({name: args[0], data: new Uint8Array(args[1])}); await quire.train(); }
  return (performance.now() - t) / 1000;
}"""


class _Loud(dict):
    def __setitem__(self, key, value):
        print(f"  browser {key}: {json.dumps(value, default=str)[:300]}", flush=True)
        super().__setitem__(key, value)


def browser(srcs, qs, dim: int, embed: bool = False) -> dict:
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, with_test_hooks
    from bench.in_browser import fresh_dist

    dist = fresh_dist(ROOT / "dist")
    server = StaticServer(dist).start()
    r = _Loud()  # every figure printed as it comes: a 100k run may not finish on a busy machine
    run = "(s) => window.quire.run(s)"
    try:
        with sync_playwright() as p:
            profile = tempfile.mkdtemp(prefix="quire-scale-")
            ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = ctx.new_page()
            page.set_default_timeout(3_600_000)
            page.goto(with_test_hooks(server.url))  # quire.run
            page.evaluate("async () => { await window.quire.ready; }")
            # Kept in the profile (localStorage quire.embed.tab), so the reopened tabs below have the same choice.
            page.evaluate(f"quire.embedInTab({'true' if embed else 'false'}).then(() => 0)")
            page.evaluate("quire.setKeepOriginals(false)")
            t = time.perf_counter()
            for i in range(0, len(srcs), 20):
                batch = [{"name": n, "text": x} for n, x in srcs[i:i + 20]]
                page.evaluate("(items) => quire.stage(items, {category: 'Bench'}).then(() => 0)", batch)
            page.evaluate("quire.train().then(() => 0)")
            r["build_s"] = round(time.perf_counter() - t, 2)
            page.evaluate(run, METER)
            written, index_written, n = page.evaluate(run, VECTORS.format(dim=dim, model=MODEL))
            r["passages"], r["vectors_written"], r["embed_index_written"] = n, written, index_written
            ids = [s["id"] for s in page.evaluate("quire.sources()")]
            for label, args in (("rename", [ids[1]]), ("remove", [ids[2]]),
                                ("pdf", [PDF.name, list(PDF.read_bytes())])):
                page.evaluate(run, METER)
                r[f"{label}_s"] = round(page.evaluate(TIMED, [label, args]), 3)
                r[f"{label}_written"] = page.evaluate(run, WRITTEN)
            t = time.perf_counter()
            page.evaluate("quire.search('specter citation embeddings').then(() => 0)")
            r["first_search_after_train_ms"] = round((time.perf_counter() - t) * 1000, 1)
            r["search_page_p50_ms"] = round(page.evaluate(PAGE_SEARCH, qs), 3)
            api, libr, core = page.evaluate(run, ENGINE_SEARCH.format(qs=json.dumps(qs)))
            r["search_api_p50_ms"], r["search_library_p50_ms"], r["search_core_p50_ms"] = api, libr, core
            text, postings, dense, d = page.evaluate(run, STORAGE)
            usage = page.evaluate("quire._call('usage')")
            est = page.evaluate("navigator.storage.estimate().then(e => ({usage: e.usage, quota: e.quota}))")
            stored = sum(usage.get(k, {}).get("bytes", 0) for k in ("chunks", "index", "vectors"))
            r["storage"] = {"buckets": usage, "estimate": est, "raw_text": text, "raw_postings": postings,
                            "raw_vectors": dense * d * 4, "stored": stored,
                            "ratio": round(stored / (text + postings + dense * d * 4), 3),
                            "ratio_estimate": round(est["usage"] / (text + postings + dense * d * 4), 3)}
            r["peak_heap_mb"] = round(page.evaluate(run, HEAP) / 2**20)
            page.close()
            # Reopened in a new tab of the same browser (its last tab's engine still winding down) ...
            t = time.perf_counter()
            page = _first_answer(ctx, server.url, qs[1])
            r["reopen_tab_s"] = round(time.perf_counter() - t, 2)
            ctx.close()
            # ... and after the browser was closed and started again, as on the next day.
            ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            t = time.perf_counter()
            page = _first_answer(ctx, server.url, qs[1])
            r["reopen_s"] = round(time.perf_counter() - t, 2)
            # The cached vectors attach in the background: when meaning search is back too.
            page.evaluate(run, "import quire.browser as b\nawait b._engine.library.vectors_ready()")
            r["reopen_vectors_s"] = round(time.perf_counter() - t, 2)
            marks = page.evaluate("quire.status().marks")
            r["reopen_marks_ms"] = {k: round(v) for k, v in sorted(marks.items(), key=lambda kv: kv[1])}
            r["reopen_library_open_s"] = round((marks["library-open"] - marks["quire-imported"]) / 1000, 2)
            r["reopen_dense"] = page.evaluate(run, "import quire.browser as b\nb._engine.library.index.dense.n_live")
            r["reopen_peak_heap_mb"] = round(page.evaluate(run, HEAP) / 2**20)
            ctx.close()
            shutil.rmtree(profile, ignore_errors=True)
    finally:
        server.stop()
    return r


def _first_answer(ctx, url: str, query: str):
    """Open Quire in a new tab and wait until its first search answered; the page."""
    from conftest import with_test_hooks

    page = ctx.new_page()
    page.set_default_timeout(3_600_000)
    page.goto(with_test_hooks(url))  # quire.run
    page.evaluate("async () => { await window.quire.ready; }")
    page.evaluate(f"quire.search({query!r}).then(() => 0)")
    return page


ROWS = [
    ("passages", "passages", "{}"),
    ("build (one Train)", "build_s", "{} s"),
    ("rename a category", "rename_s", "{} s"),
    ("  bytes written", "rename_written", "{:,}"),
    ("remove one source", "remove_s", "{} s"),
    ("  bytes written", "remove_written", "{:,}"),
    ("one more PDF (13 pages)", "pdf_s", "{} s"),
    ("  bytes written", "pdf_written", "{:,}"),
    ("  first search after it", "first_search_after_train_ms", "{} ms"),
    ("embedding: index bytes written", "embed_index_written", "{:,}"),
    ("reopen to first answer (browser restarted)", "reopen_s", "{} s"),
    ("reopen to first answer (new tab)", "reopen_tab_s", "{} s"),
    ("  library open (of which)", "reopen_library_open_s", "{} s"),
    ("  vectors attached (background)", "reopen_vectors_s", "{} s"),
    ("search p50, page API", "search_page_p50_ms", "{} ms"),
    ("search p50, Quire.search", "search_api_p50_ms", "{} ms"),
    ("search p50, Library.search", "search_library_p50_ms", "{} ms"),
    ("search p50, HybridIndex.search", "search_core_p50_ms", "{} ms"),
    ("peak memory (MB)", "peak_rss_mb", "{}"),
    ("peak wasm heap (MB)", "peak_heap_mb", "{}"),
]


def table(results: dict) -> str:
    results = results.get("sizes", {})
    cols = [(size, eng) for size, per in results.items() for eng in per]
    lines = ["| measure | " + " | ".join(f"{eng} {int(size):,}" for size, eng in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for label, key, fmt in ROWS:
        vals = [results[s][e].get(key) for s, e in cols]
        if any(v is not None for v in vals):
            lines.append(f"| {label} | " + " | ".join("" if v is None else fmt.format(v) for v in vals) + " |")
    for label, key in (("stored chunks+index+vectors / raw", "ratio"), ("browser estimate / raw", "ratio_estimate")):
        vals = [results[s][e].get("storage", {}).get(key) for s, e in cols]
        if any(v is not None for v in vals):
            lines.append(f"| {label} | " + " | ".join("" if v is None else f"{v}×" for v in vals) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,100000")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-cpython", action="store_true")
    parser.add_argument("--embedder", action="store_true", help="keep the page's in-tab embedder on (default: keywords only)")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "scale.json")
    args = parser.parse_args()
    data = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    if not (data / "scifact").exists():
        data = Path("/work/shared/data")
    docs, qs = corpus(data), queries(data)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.setdefault("sizes", {})
    machine = provenance.machine()
    for size in [int(s) for s in args.sizes.split(",")]:
        srcs = sources(docs, size)
        per = results["sizes"].setdefault(str(size), {})
        if not args.no_cpython:
            load = provenance.load()
            with tempfile.TemporaryDirectory() as tmp:
                per["cpython"] = asyncio.run(cpython(srcs, qs, args.dim, Path(tmp)))
            per["cpython"].update(load=[load, provenance.load()], commit=machine["commit"])
            print(json.dumps({size: per["cpython"]}, default=str)[:2000], flush=True)
        if not args.no_browser:
            load = provenance.load()
            per["browser"] = dict(browser(srcs, qs, args.dim, args.embedder))
            per["browser"].update(load=[load, provenance.load()], commit=machine["commit"], embedder=args.embedder)
            print(json.dumps({size: per["browser"]}, default=str)[:2000], flush=True)
        results["machine"] = machine
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, default=str))
    print(table(results))


if __name__ == "__main__":
    main()
