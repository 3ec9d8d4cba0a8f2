#!/usr/bin/env python3
"""Boot benchmark: open the built bundle in headless Chromium, three times per mode.

Modes: http cold (a fresh browser profile), http warm (the same profile again, served by
the service worker's cache) and file:// (no server).  Prints a table of stage times and
writes JSON (default tests/bench/results/boot.json).

    python tests/bench/boot.py [--dist dist] [--runs 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402
from bench.in_browser import fresh_dist  # noqa: E402

TARGETS = {"shell": 0.5, "engine_cold": 3.5, "engine_warm": 3.0, "bundle_mb": 45}

COLLECT = """async () => {
  const s = await window.quire.ready;
  let sk = null;
  try { await window.quire.sklearnReady; sk = window.quire.status().timings.sklearn; } catch (e) {}
  const paint = performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint');
  const t = s.timings;
  return {shell: paint ? paint.startTime : t.shell, pyodide: t.numpy, numpy: s.marks['numpy-imported'] || t.wheels, quire: t.ready, sklearn: sk,
          sw: !!navigator.serviceWorker && !!navigator.serviceWorker.controller};
}"""


def bundle_bytes(dist: Path) -> dict:
    bundle = json.loads((dist / "assets/bundle.js").read_text().removeprefix("self.QUIRE_BUNDLE = ").rstrip().rstrip(";"))
    manifest = json.loads((dist / "manifest.json").read_text())
    packs = {a["src"]: a["group"] for a in bundle["assets"].values()}
    on_disk = {"boot": 0, "lazy": 0, "engine": 0, "page": 0, "ocr": 0, "voice": 0}
    for name, entry in manifest["files"].items():
        on_disk[packs.get(name, "page")] += entry["size"]
    return {"dist_total": manifest["total_bytes"], "before_ready": on_disk["boot"] + on_disk["engine"] + on_disk["page"],
            "background": on_disk["lazy"], "ocr_on_demand": on_disk["ocr"], "voice_on_demand": on_disk["voice"],
            "without_ocr": manifest["total_bytes"] - on_disk["ocr"],
            "without_ocr_and_voice": manifest["total_bytes"] - on_disk["ocr"] - on_disk["voice"]}


def measure(dist: Path, runs: int) -> dict:
    from playwright.sync_api import sync_playwright

    results = {"http cold": [], "http warm": [], "file://": []}
    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            for _ in range(runs):
                with tempfile.TemporaryDirectory() as profile:
                    ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    page = ctx.new_page()
                    page.set_default_timeout(180_000)
                    page.goto(server.url)
                    results["http cold"].append(page.evaluate(COLLECT))
                    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
                    page.wait_for_function("() => !!navigator.serviceWorker.controller")
                    page.close()
                    page = ctx.new_page()
                    page.goto(server.url)
                    warm = page.evaluate(COLLECT)
                    assert warm["sw"], "the warm run was not served by the service worker"
                    results["http warm"].append(warm)
                    ctx.close()
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.set_default_timeout(180_000)
                page.goto((dist / "index.html").as_uri())
                results["file://"].append(page.evaluate(COLLECT))
                browser.close()
    finally:
        server.stop()
    return results


def summarise(results: dict) -> dict:
    out = {}
    for mode, runs in results.items():
        out[mode] = {}
        for key in ("shell", "pyodide", "numpy", "quire", "sklearn"):
            values = [r[key] / 1000 for r in runs if r.get(key) is not None]
            out[mode][key] = {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
                              "max": round(max(values), 3)} if values else None
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "tests/bench/results/boot.json")
    args = parser.parse_args()
    fresh_dist(args.dist)
    started = time.time()
    raw = measure(args.dist, args.runs)
    table = summarise(raw)
    sizes = bundle_bytes(args.dist)
    print(f"{'mode':<11} {'shell':>7} {'pyodide':>8} {'numpy':>7} {'quire':>7} {'sklearn':>8}   (seconds, median of {args.runs})")
    for mode, row in table.items():
        cells = [f"{row[k]['median']:.2f}" if row[k] else "—" for k in ("shell", "pyodide", "numpy", "quire", "sklearn")]
        print(f"{mode:<11} {cells[0]:>7} {cells[1]:>8} {cells[2]:>7} {cells[3]:>7} {cells[4]:>8}")
    print(f"bundle: {sizes['dist_total'] / 1e6:.1f} MB in dist/, the same in every mode (one boot path): "
          f"{sizes['before_ready'] / 1e6:.1f} MB read before ready, {sizes['background'] / 1e6:.1f} MB in the background, "
          f"{sizes['ocr_on_demand'] / 1e6:.1f} MB of OCR only when a scan needs it, "
          f"{sizes['voice_on_demand'] / 1e6:.1f} MB of voice only when the microphone is used "
          f"({sizes['without_ocr'] / 1e6:.1f} MB built with --no-ocr, "
          f"{sizes['without_ocr_and_voice'] / 1e6:.1f} MB without OCR and voice)")
    print(f"targets: shell < {TARGETS['shell']} s, engine (quire ready) < {TARGETS['engine_cold']} s cold and "
          f"< {TARGETS['engine_warm']} s warm, bundle < {TARGETS['bundle_mb']} MB")
    report = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
              "runs": args.runs, "seconds": table, "raw_ms": raw, "bytes": sizes, "targets": TARGETS,
              "bench_seconds": round(time.time() - started, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
