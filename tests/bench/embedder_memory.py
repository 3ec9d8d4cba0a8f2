#!/usr/bin/env python3
"""The page's JavaScript heap before and after the in-tab embedder loads (Chromium, http and file://).

The weights reach the page as nine script packs (a ``file://`` page may not fetch), each a
string of about 8.5 MB.  This measures the page's V8 heap (``performance.memory`` with precise
figures, after four forced collections) on a fresh page with keywords only, after
``QuireEmbedder.load()``, after 45 s idle and Chromium's critical memory-pressure signal, and after
DevTools' own collection (``HeapProfiler.collectGarbage``, V8's "all available garbage", which
also empties V8's compilation cache: what V8 runs before it would give up for lack of memory).
Prints a table and writes JSON with the machine's load and the commit.

    python3 tests/bench/embedder_memory.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402
from in_browser import fresh_dist  # noqa: E402

HEAP = """async () => { for (let i = 0; i < 4; i++) { gc(); await new Promise(r => setTimeout(r, 200)); }
  return Math.round(performance.memory.usedJSHeapSize / 1e5) / 10; }"""


def measure(p, url: str) -> dict:
    b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + ["--js-flags=--expose-gc", "--enable-precise-memory-info"])
    try:
        page = b.new_page()
        page.set_default_timeout(900_000)
        page.add_init_script("localStorage.setItem('quire.embed.tab', 'off')")
        page.goto(url)
        page.evaluate("quire.ready.then(() => quire.backgroundDone())")
        r = {"fresh_mb": page.evaluate(HEAP)}
        page.evaluate("QuireEmbedder.load().then(() => 0)")
        r["loaded_mb"] = page.evaluate(HEAP)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Memory.simulatePressureNotification", {"level": "critical"})
        page.wait_for_timeout(45_000)
        r["idle_45s_pressure_mb"] = page.evaluate(HEAP)
        cdp.send("HeapProfiler.enable")
        cdp.send("HeapProfiler.collectGarbage")
        r["all_available_garbage_mb"] = page.evaluate(HEAP)
        r["still_embeds"] = page.evaluate("QuireEmbedder.embed(['Wohin gehen meine Daten?'], 'query').then(v => v[0].length)") == 384
        return r
    finally:
        b.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "embedder_memory.json")
    args = parser.parse_args()
    dist = fresh_dist(ROOT / "dist")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    results = {}
    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            for mode, url in (("http", server.url), ("file", (dist / "index.html").as_uri())):
                load = os.getloadavg()[0]
                results[mode] = {**measure(p, url), "load": round(load, 1)}
                print(json.dumps({mode: results[mode]}), flush=True)
    finally:
        server.stop()
    results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit,
                          "at": time.strftime("%Y-%m-%d %H:%M")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    print("| page JS heap | " + " | ".join(m for m in ("http", "file")) + " |\n|---|---|---|")
    for key, label in (("fresh_mb", "fresh page, keywords only"), ("loaded_mb", "embedder loaded"),
                       ("idle_45s_pressure_mb", "45 s idle, memory pressure"),
                       ("all_available_garbage_mb", "V8's all-available-garbage collection")):
        print(f"| {label} | " + " | ".join(f"{results[m][key]} MB" for m in ("http", "file")) + " |")


if __name__ == "__main__":
    main()
