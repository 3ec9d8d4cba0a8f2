#!/usr/bin/env python3
"""How long a page call waits while scipy and scikit-learn load in the background (Chromium).

The page calls the engine (``quire.sources()``) every 0.5 s from the moment it is ready until
scikit-learn has loaded, as a person clicking about does; each call's wait is timed.  Prints a
table (per bundle: calls, longest and median wait, time to scikit-learn) and writes JSON with
the raw waits and the machine's load.  Pass several bundles to compare them in one run (e.g. one
built from an older commit), each opened ``--runs`` times, alternating.

    python tests/bench/background.py [--dist DIR ...] [--runs 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402

CALLS = """async () => {
  await quire.ready;
  const t0 = performance.now(); let done = false; const waits = [];
  quire.sklearnReady.then(() => { done = true; });
  while (!done) {
    const a = performance.now();
    await quire.sources();
    waits.push(Math.round(performance.now() - a));
    await new Promise(r => setTimeout(r, 500));
  }
  return {waits, sklearn_ms: Math.round(performance.now() - t0)};
}"""


def one(dist: Path) -> dict:
    from playwright.sync_api import sync_playwright

    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(server.url)
            page.wait_for_function("() => window.quire && window.quire.ready")
            out = page.evaluate(CALLS)
            browser.close()
    finally:
        server.stop()
    out["load"] = os.getloadavg()[0]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, action="append", help="a built bundle (default: a fresh build of HEAD)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "tests/bench/results/background.json")
    args = parser.parse_args()
    dists = args.dist
    if not dists:
        dists = [ROOT / "dist"]
        subprocess.run([sys.executable, str(ROOT / "build.py"), "--dist", str(dists[0])], check=True)
    runs: dict[str, list[dict]] = {str(d): [] for d in dists}
    for _ in range(args.runs):
        for d in dists:
            runs[str(d)].append(one(d))
    print(f"{'bundle':40} {'calls':>6} {'longest wait ms':>16} {'median ms':>10} {'scikit-learn s':>15} {'load':>5}")
    table = {}
    for d, rs in runs.items():
        waits = [w for r in rs for w in r["waits"]]
        row = {"calls": len(waits), "longest_ms": max(waits), "median_ms": statistics.median(waits),
               "sklearn_s": round(statistics.median(r["sklearn_ms"] for r in rs) / 1000, 1),
               "load": round(statistics.mean(r["load"] for r in rs), 1)}
        table[d] = row
        print(f"{d[-40:]:40} {row['calls']:>6} {row['longest_ms']:>16} {row['median_ms']:>10} {row['sklearn_s']:>15} {row['load']:>5}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    import provenance
    args.out.write_text(json.dumps({"machine": provenance.machine(), "table": table, "runs": runs}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
