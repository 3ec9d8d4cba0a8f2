"""Many small sources: a folder of thousands of notes, one passage each.

    python3 tests/bench/small_sources.py [--sizes 5183,20000] [--no-browser] [--no-cpython] [--embedder]

Each source is one SciFact or PubMedQA abstract as its own ``.txt`` file (``$QUIRE_DATA``,
default ``../shared/data``); past the corpus's own 6,183 abstracts, later rounds rotate the
sentences (copy 2 starts at the second sentence, ...), so every file is distinct real text.
The same engine runs on CPython (``Quire`` on a SQLite file) and in headless Chromium through
``window.quire`` with the Library view open, as a person would have it:

- stage every file (the page sends batches of 200 files, one call and one transaction each);
- one Train, and the time from its "save" progress event to its end (the final commit);
- the first ``setCategory`` after Train, then later ones and a ``remove`` (median of 5);
- ``sources()`` (median of 5, after a change: what the views ask for);
- search p50 over 200 SciFact queries;
- in the page, the longest task (Long Tasks API) while the Library table is scrolled end to
  end, filtered and sorted.

``--pdfs`` measures the other end, few big files: every text PDF under ``pdfs/`` in the data
(the scans of ``ocrmypdf-scans/`` and one CCITT scan left out, as CPython has no OCR here),
chosen in the page's file picker as a person would, then one Train.

The page's own embedder is off ("None (keywords only)", as before it existed, so the figures stay
comparable); ``--embedder`` keeps it on.

Prints a table; JSON (with the machine's load and the commit) goes to tests/bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))

_SENT = re.compile(r"(?<=[.!?])\s+")
EDITS = 5


def corpus(data: Path) -> list[tuple[str, str]]:
    docs = []
    for path in (data / "scifact" / "corpus.jsonl", data / "pubmedqa" / "beir" / "corpus.jsonl"):
        for line in path.read_text().splitlines():
            d = json.loads(line)
            docs.append((d["_id"], (d.get("title") or "") + "\n\n" + d["text"]))
    return docs


def files(docs: list[tuple[str, str]], n: int) -> list[tuple[str, str]]:
    out, copy = [], 0
    while len(out) < n:
        for doc_id, text in docs:
            sentences = _SENT.split(text)
            k = copy % max(len(sentences), 1)
            out.append((f"{doc_id}-{copy}.txt", " ".join(sentences[k:] + sentences[:k])))
            if len(out) == n:
                break
        copy += 1
    return out


def queries(data: Path, n: int = 200) -> list[str]:
    return [json.loads(x)["text"] for x in (data / "scifact" / "queries.jsonl").read_text().splitlines()[:n]]


def pdfs(data: Path) -> list[Path]:
    return sorted(p for p in (data / "pdfs").rglob("*.pdf")
                  if "ocrmypdf-scans" not in p.parts and "CCITT" not in p.name)


async def cpython_pdfs(paths: list[Path], workdir: Path) -> dict:
    from quire.app import Quire
    from quire.store import SQLiteStore

    q = await Quire.open(SQLiteStore(workdir / "pdfs.sqlite"))
    t = time.perf_counter()
    await q.stage_many([(p.name, p.read_bytes()) for p in paths])
    stage = time.perf_counter() - t
    t = time.perf_counter()
    counts = await q.train()
    r = {"files": len(paths), "stage_s": round(stage, 2), "train_s": round(time.perf_counter() - t, 2),
         "added": counts["added"], "failed": counts["failed"], "passages": q.library.index.n_chunks}
    await q.events.drain()
    q.store.db.close()
    return r


@contextlib.contextmanager
def library_page():
    """The freshly built bundle in headless Chromium at 1280x900, Library open, engine ready."""
    from playwright.sync_api import sync_playwright

    from bench.in_browser import fresh_dist
    from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer

    server = StaticServer(fresh_dist(ROOT / "dist")).start()
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = b.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(3_600_000)
            page.goto(server.url + "#library")
            page.evaluate("quire.ready.then(() => 0)")
            yield page
            b.close()
    finally:
        server.stop()


def embedder_choice(page, embed: bool) -> None:
    """The page's in-tab embedder on ("In this browser") or off ("None (keywords only)"), as call_waits.py does."""
    page.evaluate(f"quire.embedInTab({'true' if embed else 'false'}).then(() => 0)")


def browser_pdfs(paths: list[Path], embed: bool = False) -> dict:
    with library_page() as page:
        embedder_choice(page, embed)
        t = time.perf_counter()
        page.get_by_test_id("file-input").set_input_files([str(x) for x in paths])
        while page.evaluate("quire.sources().then(s => s.length)") < len(paths):  # (wait_for_function does not await)
            page.wait_for_timeout(20)
        stage = time.perf_counter() - t
        t = time.perf_counter()
        counts = page.evaluate("quire.train().then(c => [c.added, c.failed])")
        r = {"files": len(paths), "stage_s": round(stage, 2), "train_s": round(time.perf_counter() - t, 2),
             "added": counts[0], "failed": counts[1],
             "passages": page.evaluate("quire.sources().then(s => s.reduce((n, x) => n + (x.chunks || 0), 0))")}
    return r


def p50(values) -> float:
    return round(statistics.median(values), 1)


# ----------------------------------------------------------------------------- CPython
async def cpython(srcs, qs, workdir: Path) -> dict:
    from quire.app import Quire
    from quire.store import SQLiteStore

    r = {}
    q = await Quire.open(SQLiteStore(workdir / "library.sqlite"))
    await q.set_keep_originals(False)
    t = time.perf_counter()
    for start in range(0, len(srcs), 200):  # as the page sends them
        await q.stage_many([(n, x.encode()) for n, x in srcs[start:start + 200]])
    r["stage_s"] = round(time.perf_counter() - t, 2)
    saving = {}
    t = time.perf_counter()
    counts = await q.train(progress=lambda e: e["stage"] == "save" and saving.setdefault("at", time.perf_counter()))
    end = time.perf_counter()
    r["train_s"] = round(end - t, 2)
    r["train_save_s"] = round(end - saving["at"], 2)
    r["trained"] = counts["added"]
    ids = [s["id"] for s in q.sources()]
    t = time.perf_counter()
    await q.set_category(ids[0], "First")
    r["first_set_category_ms"] = round((time.perf_counter() - t) * 1000, 1)
    r.update(await _later_cpython(q, ids))
    await q.search(qs[0])
    lat = []
    for text in qs:
        t = time.perf_counter()
        await q.search(text)
        lat.append((time.perf_counter() - t) * 1000)
    r["search_p50_ms"] = p50(lat)
    await q.events.drain()  # the badge check after the last change, before the file closes
    q.store.db.close()
    return r


async def _later_cpython(q, ids) -> dict:
    cat, rem, src = [], [], []
    for i in range(EDITS):
        t = time.perf_counter(); await q.set_category(ids[1 + i], f"C{i}"); cat.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter(); await q.remove(ids[-1 - i]); rem.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter(); q.sources(); src.append((time.perf_counter() - t) * 1000)
    return {"set_category_ms": p50(cat), "remove_ms": p50(rem), "sources_ms": p50(src)}


# ----------------------------------------------------------------------------- browser
# Train, and how long its final save took (from its "save" progress event to its end).
TRAIN = """async () => { let save = null;
  const c = await quire.train({onProgress: e => { if (e.stage === 'save' && save === null) save = performance.now(); }});
  return [c.added, performance.now() - save]; }"""
STAGE = """async (items) => { const t = performance.now(); await quire.stage(items); return performance.now() - t; }"""
TIMED = """async ([how, arg]) => {
  const t = performance.now();
  if (how === 'category') await quire.setCategory(arg, 'Renamed');
  if (how === 'remove') await quire.remove(arg);
  if (how === 'sources') await quire.sources();
  if (how === 'search') await quire.search(arg);
  return performance.now() - t;
}"""
PAGE_SEARCH = """async (qs) => {
  await quire.search(qs[0]);
  const times = [];
  for (const q of qs) { const t = performance.now(); await quire.search(q); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}"""
LONG = """() => { window.__long = []; new PerformanceObserver(l => l.getEntries().forEach(e => window.__long.push(e.duration)))
  .observe({type: 'longtask'}); return 0; }"""
# Scroll the table end to end a screen at a time (a frame each), then filter and sort.
TABLE = """async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  const box = document.querySelector('[data-testid=source-scroll]');
  if (!box) return {error: 'the table is not windowed'};
  window.__long = [];
  let screens = 0;
  for (let y = 0; y <= box.scrollHeight; y += box.clientHeight) { box.scrollTop = y; screens++; await frame(); }
  const scroll = Math.max(0, ...window.__long); window.__long = [];
  const filter = document.querySelector('[data-testid=source-filter]');
  for (const text of ['m', 'mi', 'mit', 'mito', 'Renamed', '']) {
    filter.value = text; filter.dispatchEvent(new Event('input')); await frame();
  }
  const filtering = Math.max(0, ...window.__long); window.__long = [];
  const sort = document.querySelector('[data-testid=source-sort]');
  for (const how of ['name', 'category', 'status', 'newest', 'added']) {
    sort.value = how; sort.dispatchEvent(new Event('change')); await frame();
  }
  const sorting = Math.max(0, ...window.__long);
  return {screens, scroll_ms: Math.round(scroll), filter_ms: Math.round(filtering), sort_ms: Math.round(sorting),
          rows_in_page: document.querySelectorAll('[data-testid=source-row]').length};
}"""


def browser(srcs, qs, embed: bool = False) -> dict:
    r = {}
    with library_page() as page:
        embedder_choice(page, embed)
        page.evaluate("quire.setKeepOriginals(false).then(() => 0)")
        items = [{"name": n, "text": x} for n, x in srcs]
        r["stage_s"] = round(page.evaluate(STAGE, items) / 1000, 2)
        t = time.perf_counter()
        r["trained"], save = page.evaluate(TRAIN)
        r["train_s"] = round(time.perf_counter() - t, 2)
        r["train_save_s"] = round(save / 1000, 2)
        ids = [s["id"] for s in page.evaluate("quire.sources()")]
        r["first_set_category_ms"] = round(page.evaluate(TIMED, ["category", ids[0]]), 1)
        cat, rem, src = [], [], []
        for i in range(EDITS):
            cat.append(page.evaluate(TIMED, ["category", ids[1 + i]]))
            rem.append(page.evaluate(TIMED, ["remove", ids[-1 - i]]))
            src.append(page.evaluate(TIMED, ["sources", None]))
        r["set_category_ms"], r["remove_ms"], r["sources_ms"] = p50(cat), p50(rem), p50(src)
        r["search_p50_ms"] = round(page.evaluate(PAGE_SEARCH, qs), 1)
        page.evaluate(LONG)
        r["table"] = page.evaluate(TABLE)
    return r


ROWS = [
    ("stage every file", "stage_s", "{} s"),
    ("Train", "train_s", "{} s"),
    ("… of it, the final save", "train_save_s", "{} s"),
    ("first setCategory after Train", "first_set_category_ms", "{} ms"),
    ("later setCategory (median)", "set_category_ms", "{} ms"),
    ("remove (median)", "remove_ms", "{} ms"),
    ("sources() (median)", "sources_ms", "{} ms"),
    ("search p50", "search_p50_ms", "{} ms"),
]


def table(results: dict) -> str:
    cols = [(size, eng) for size, per in results.get("sizes", {}).items() for eng in ("cpython", "browser") if eng in per]
    lines = ["| many small sources | " + " | ".join(f"{eng} {int(size):,}" for size, eng in cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    for label, key, fmt in ROWS:
        vals = [results["sizes"][s][e].get(key) for s, e in cols]
        lines.append(f"| {label} | " + " | ".join("" if v is None else fmt.format(v) for v in vals) + " |")
    for label, key in (("longest page task, scrolling the table", "scroll_ms"), ("… filtering", "filter_ms"),
                       ("… sorting", "sort_ms")):
        vals = [results["sizes"][s][e].get("table", {}).get(key) for s, e in cols]
        # The Long Tasks API reports tasks of 50 ms and more: 0 means none was that long.
        lines.append(f"| {label} | " + " | ".join("" if v is None else "none ≥ 50 ms" if v == 0 else f"{v} ms"
                                                   for v in vals) + " |")
    few = results.get("pdfs")
    if few:
        lines += ["", "| few big files (text PDFs) | CPython | browser |", "|---|---|---|"]
        for label, key, unit in (("files", "files", ""), ("passages", "passages", ""), ("stage (file picker)", "stage_s", " s"),
                                 ("Train", "train_s", " s")):
            c, b = few.get("cpython", {}).get(key), few.get("browser", {}).get(key)
            lines.append(f"| {label} | {'' if c is None else f'{c}{unit}'} | {'' if b is None else f'{b}{unit}'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5183,20000")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-cpython", action="store_true")
    parser.add_argument("--pdfs", action="store_true", help="also the few-big-files shape: the data's text PDFs")
    parser.add_argument("--embedder", action="store_true", help="keep the page's in-tab embedder on (default: keywords only)")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "small_sources.json")
    args = parser.parse_args()
    data = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    docs, qs = corpus(data), queries(data)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.setdefault("sizes", {})
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    for size in [int(s) for s in args.sizes.split(",") if s]:
        srcs = files(docs, size)
        per = results["sizes"].setdefault(str(size), {})
        if not args.no_cpython:
            load = os.getloadavg()[0]
            with tempfile.TemporaryDirectory() as tmp:
                per["cpython"] = asyncio.run(cpython(srcs, qs, Path(tmp)))
            per["cpython"].update(load=round(load, 1), commit=commit)
            print(json.dumps({size: per["cpython"]}), flush=True)
        if not args.no_browser:
            load = os.getloadavg()[0]
            per["browser"] = browser(srcs, qs, args.embedder)
            per["browser"].update(load=round(load, 1), commit=commit, embedder=args.embedder)
            print(json.dumps({size: per["browser"]}), flush=True)
        results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit,
                              "at": time.strftime("%Y-%m-%d %H:%M")}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2))
    if args.pdfs:
        paths, per = pdfs(data), results.setdefault("pdfs", {})
        if not args.no_cpython:
            with tempfile.TemporaryDirectory() as tmp:
                per["cpython"] = {**asyncio.run(cpython_pdfs(paths, Path(tmp))), "load": round(os.getloadavg()[0], 1), "commit": commit}
        if not args.no_browser:
            per["browser"] = {**browser_pdfs(paths, args.embedder), "load": round(os.getloadavg()[0], 1), "commit": commit,
                              "embedder": args.embedder}
        print(json.dumps(per), flush=True)
        args.out.write_text(json.dumps(results, indent=2))
    print(table(results))


if __name__ == "__main__":
    main()
