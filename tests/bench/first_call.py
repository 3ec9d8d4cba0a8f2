#!/usr/bin/env python3
"""How long a reopened tab's first calls take (Chromium), with many small sources.

Issue 25: a reopened library of thousands of notes must answer at once.  For each size, one-passage
sources (SciFact and PubMedQA abstracts, as in ``small_sources.py``) are staged and trained with
keywords only, the Library open; then the tab is reloaded ``--reloads`` times, and the moment the
engine is ready a person asks for the library's settings (a call that costs the engine nothing),
then renames two sources.  Each call is timed in the page, with the page's own tasks over 50 ms
in the first second after ready.  Prints a table and writes JSON (raw times, machine load, commit).

    python3 tests/bench/first_call.py [--sizes 5183,20000] [--reloads 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from small_sources import corpus, files, library_page  # noqa: E402

LONG_TASKS = ("window.__long = []; new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push(e); })"
              ".observe({type: 'longtask', buffered: true});")
FIRST = """async (ids) => { const out = [];
  for (const [kind, i] of [['settings', 0], ['rename', 0], ['rename', 1]]) {
    const t = performance.now();
    if (kind === 'settings') await quire.librarySettings(); else await quire.setCategory(ids[i], 'C' + i);
    out.push([kind, performance.now() - t]);
  }
  const tasks = window.__long.filter(e => e.startTime >= window.__ready && e.startTime < window.__ready + 1000).map(e => e.duration);
  return {calls: out, tasks}; }"""


def run(n: int, reloads: int, data: Path) -> dict:
    srcs = files(corpus(data), n)
    rows = []
    with library_page() as page:
        page.add_init_script(LONG_TASKS)
        page.evaluate("quire.embedInTab(false).then(() => quire.setKeepOriginals(false)).then(() => 0)")
        page.evaluate("(items) => quire.stage(items).then(() => quire.train()).then(() => 0)",
                      [{"name": a, "text": b} for a, b in srcs])
        ids = [s["id"] for s in page.evaluate("quire.sources()")][:2]
        for _ in range(reloads):
            page.reload()
            page.evaluate("quire.ready.then(() => { window.__ready = performance.now(); return 0; })")
            load = os.getloadavg()[0]
            r = page.evaluate(FIRST, ids)
            rows.append({"first_ms": round(r["calls"][0][1], 1), "first_rename_ms": round(r["calls"][1][1], 1),
                         "second_rename_ms": round(r["calls"][2][1], 1), "page_tasks_ms": [round(t) for t in r["tasks"]],
                         "load": round(load, 1)})
            print(json.dumps({"sources": n, **rows[-1]}), flush=True)
    return {"reloads": rows}


def span(values) -> str:
    return f"{min(values):.0f}–{max(values):.0f} ms" if len(values) > 1 else f"{values[0]:.0f} ms"


def table(results: dict) -> str:
    lines = ["| sources | first call after ready | first rename | second rename | page tasks > 50 ms in the first second |",
             "|---|---|---|---|---|"]
    for n, r in results["sizes"].items():
        rs = r["reloads"]
        tasks = [t for x in rs for t in x["page_tasks_ms"]]
        lines.append(f"| {int(n):,} | {span([x['first_ms'] for x in rs])} | {span([x['first_rename_ms'] for x in rs])} | "
                     f"{span([x['second_rename_ms'] for x in rs])} | {len(tasks)} (longest {max(tasks, default=0)} ms) |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5183,20000")
    parser.add_argument("--reloads", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "first_call.json")
    args = parser.parse_args()
    data = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = {"sizes": {str(n): run(int(n), args.reloads, data) for n in args.sizes.split(",")},
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit}}
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    previous[commit] = results
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(previous, indent=1))
    print(table(results))
    print("median first call:", {n: statistics.median(x["first_ms"] for x in r["reloads"]) for n, r in results["sizes"].items()})


if __name__ == "__main__":
    main()
