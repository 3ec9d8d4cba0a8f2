#!/usr/bin/env python3
"""How long a person's calls wait while the engine works in the background (Chromium).

Target (issue "A library of 10,000 small files"): nothing the engine does in the background may
hold a user's call for more than 200 ms.  With thousands of one-passage sources (as in
``small_sources.py``: SciFact and PubMedQA abstracts, one ``.txt`` each), a person acts every
0.3 s (a rename, a search, the source list, in turn) for ``--seconds`` in each of three windows:

- right after Train, while the tab embeds the new passages in the background (the default
  choice, "In this browser") or with "None (keywords only)";
- right after a reload (reopening the library: passages and vectors read, the embedding resumed);
- while the study tools (scipy, scikit-learn) load, asked for at the window's start.

Each call is timed in the page.  ``--busy N`` keeps N extra processes spinning on the CPU for the
whole run, as a busy machine is.  Prints a table (calls, median, 95th percentile, longest, calls
over 200 ms) and writes JSON with the raw waits, the machine's load and the commit.

    python3 tests/bench/call_waits.py [--sources 5183] [--seconds 30] [--busy 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from small_sources import corpus, files, library_page, queries  # noqa: E402

LIMIT_MS = 200
# A person acting every 0.3 s for `seconds`: [kind, ms] for each call.
PERSON = """async ([ids, qs, seconds, study]) => {
  const out = [], end = performance.now() + seconds * 1000;
  if (study) quire.studyToolsReady();
  for (let i = 0; performance.now() < end; i++) {
    const kind = ['rename', 'search', 'sources'][i % 3], t = performance.now();
    if (kind === 'rename') await quire.setCategory(ids[i % ids.length], 'C' + (i % 7));
    else if (kind === 'search') await quire.search(qs[i % qs.length]);
    else await quire.sources();
    out.push([kind, performance.now() - t]);
    await new Promise(r => setTimeout(r, 300));
  }
  return out;
}"""
EMBEDDING = "() => quire.embeddingStatus().then(s => [s.where, s.total - s.missing, s.total])"


def spin(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def summary(waits: list) -> dict:
    ms = sorted(w for _, w in waits)
    worst = max(waits, key=lambda w: w[1]) if waits else [None, 0]
    return {"calls": len(ms), "p50_ms": round(statistics.median(ms), 1) if ms else None,
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1) if ms else None,
            "max_ms": round(worst[1], 1), "max_call": worst[0], "over_limit": sum(w > LIMIT_MS for w in ms)}


def session(srcs, qs, seconds: int, embed: bool) -> dict:
    out = {}
    with library_page() as page:
        page.evaluate("quire.setKeepOriginals(false).then(() => 0)")
        page.evaluate(f"quire.embedInTab({'true' if embed else 'false'}).then(() => 0)")
        page.evaluate("(items) => quire.stage(items).then(() => 0)", [{"name": n, "text": x} for n, x in srcs])
        t = time.perf_counter()
        page.evaluate("quire.train().then(() => 0)")
        out["train_s"] = round(time.perf_counter() - t, 1)
        ids = [s["id"] for s in page.evaluate("quire.sources()")][:50]
        for window, study in (("after Train", False), ("after a reload", False), ("study tools loading", True)):
            if window == "after a reload":
                page.reload()
                page.evaluate("quire.ready.then(() => 0)")
            load = os.getloadavg()[0]
            waits = page.evaluate(PERSON, [ids, qs, seconds, study])
            out[window] = {**summary(waits), "load": round(load, 1), "embedding": page.evaluate(EMBEDDING),
                           "waits": [[k, round(w, 1)] for k, w in waits]}
            print(json.dumps({"embed": embed, "window": window, **{k: v for k, v in out[window].items() if k != "waits"}}),
                  flush=True)
    return out


def table(results: dict) -> str:
    lines = [f"| window ({results['sources']:,} sources, busy {results['busy']}) | embedding | calls | median | p95 | "
             f"longest | over {LIMIT_MS} ms |", "|---|---|---|---|---|---|---|"]
    for choice, per in results["runs"].items():
        for window, r in per.items():
            if not isinstance(r, dict):
                continue
            lines.append(f"| {window} | {choice} | {r['calls']} | {r['p50_ms']} ms | {r['p95_ms']} ms | "
                         f"{r['max_ms']} ms ({r['max_call']}) | {r['over_limit']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=5183)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--busy", type=int, default=0, help="extra processes spinning on the CPU meanwhile")
    parser.add_argument("--choices", default="in this browser,keywords only")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "call_waits.json")
    args = parser.parse_args()
    data = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    srcs, qs = files(corpus(data), args.sources), queries(data)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=spin, args=(stop,), daemon=True) for _ in range(args.busy)]
    for p in spinners:
        p.start()
    try:
        runs = {choice: session(srcs, qs, args.seconds, choice == "in this browser")
                for choice in args.choices.split(",")}
    finally:
        stop.set()
    results = {"sources": args.sources, "seconds": args.seconds, "busy": args.busy, "limit_ms": LIMIT_MS, "runs": runs,
               "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit,
                           "at": time.strftime("%Y-%m-%d %H:%M")}}
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    previous[f"{args.sources}-busy{args.busy}"] = results
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(previous, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
