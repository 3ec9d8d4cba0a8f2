#!/usr/bin/env python3
"""Boot benchmark: open the built bundle in Chromium, Firefox ESR and WebKitGTK, three times per mode.

Modes: http cold (a fresh browser profile), http warm (the same profile again, served by the
service worker's cache) and file:// (no server).  Every engine runs each mode once per round,
one after the other, so the engines share the machine's load.  Prints a table of stage times
(median of the runs) with each engine's ratio to Chromium, and writes JSON (default
tests/bench/results/boot.json) with the raw marks and the machine's load while it ran.

    python tests/bench/boot.py [--dist dist] [--runs 3] [--engines chromium,firefox,webkit] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402
from bench.in_browser import fresh_dist  # noqa: E402
import engines  # noqa: E402

TARGETS = {"shell": 0.5, "engine_cold": 3.5, "engine_warm": 3.0, "bundle_mb": 45, "engine_vs_chromium": 1.5}
ENGINES = ("chromium", "firefox", "webkit")
MODES = ("http cold", "http warm", "file://")
COLUMNS = ("shell", "pyodide", "numpy", "quire", "sklearn")
SKLEARN_WAIT_S = 300  # a bench, not a test: a background load that never ends is reported, not waited on forever

COLLECT = """async (sklearnWaitMs) => {
  const s = await window.quire.ready;
  let sk = null, skError = null;
  try {
    await Promise.race([window.quire.sklearnReady,
      new Promise((_, reject) => setTimeout(() => reject(new Error('not ready after ' + sklearnWaitMs / 1000 + ' s')), sklearnWaitMs))]);
    sk = window.quire.status().timings.sklearn;
  } catch (e) { skError = String(e && e.message || e); }
  const paint = performance.getEntriesByType('paint').find(p => p.name === 'first-contentful-paint');
  const t = s.timings;
  return {shell: paint ? paint.startTime : t.shell, pyodide: t.numpy, numpy: s.marks['numpy-imported'] || t.wheels, quire: t.ready,
          sklearn: sk, sklearn_error: skError, marks: s.marks, timings: t,
          sw: !!navigator.serviceWorker && !!navigator.serviceWorker.controller};
}"""

# Whether this page's service worker controls it within a minute (the warm run needs its cache).
SW_CONTROLS = """async () => {
  if (!navigator.serviceWorker) return false;
  const controls = (async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller)
      await new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r, {once: true}));
    return true;
  })();
  return Promise.race([controls, new Promise(r => setTimeout(() => r(false), 60000))]);
}"""


class Chromium:
    """Chromium through Playwright, with the same small surface as tests/engines.py's browsers."""

    name = "chromium"

    def __init__(self, playwright, profile: Path):
        self.ctx = playwright.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        self.version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
        self.page = self.ctx.new_page()
        self.page.set_default_timeout(0)

    def goto(self, url: str) -> None:
        self.page.goto(url)

    def run(self, fn: str, *args):
        return self.page.evaluate(fn, list(args)[0] if args else None)

    def close(self) -> None:
        self.ctx.close()


@contextlib.contextmanager
def browser(name: str, workdir: Path):
    if name == "chromium":
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            b = Chromium(p, workdir / "chromium-profile")
            try:
                yield b
            finally:
                b.close()
    else:
        with engines.open_engine(name, workdir) as b:
            yield b


def one_run(name: str, url: str, warm: bool) -> tuple[dict, dict | None, str]:
    """The cold boot at ``url`` on a fresh profile and, with ``warm``, a second boot in the same
    profile once the service worker controls the page (None if it never does)."""
    with tempfile.TemporaryDirectory() as workdir, browser(name, Path(workdir)) as b:
        b.goto(url)
        cold = b.run(COLLECT, SKLEARN_WAIT_S * 1000)
        cold["load"] = os.getloadavg()[0]
        second = None
        if warm and b.run(SW_CONTROLS):
            b.goto(url)
            second = b.run(COLLECT, SKLEARN_WAIT_S * 1000)
            second["load"] = os.getloadavg()[0]
            if not second["sw"]:
                second = None
        return cold, second, b.version


def measure(dist: Path, runs: int, names: list[str]) -> tuple[dict, dict]:
    results = {name: {mode: [] for mode in MODES} for name in names}
    versions = {}
    server = StaticServer(dist).start()
    try:
        for i in range(runs):
            for name in names:
                cold, warm, versions[name] = one_run(name, server.url, warm=True)
                results[name]["http cold"].append(cold)
                if warm is not None:
                    results[name]["http warm"].append(warm)
                disk, _, _ = one_run(name, (dist / "index.html").as_uri(), warm=False)
                results[name]["file://"].append(disk)
                print(f"run {i + 1}/{runs} {name}: engine ready {cold['quire'] / 1000:.2f} s http, "
                      f"{disk['quire'] / 1000:.2f} s file:// (load {cold['load']:.1f})", flush=True)
    finally:
        server.stop()
    return results, versions


def summarise(results: dict) -> dict:
    out = {}
    for name, modes in results.items():
        out[name] = {}
        for mode, runs in modes.items():
            row = {}
            for key in COLUMNS:
                values = [r[key] / 1000 for r in runs if r.get(key) is not None]
                row[key] = {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
                            "max": round(max(values), 3)} if values else None
            row["runs"] = len(runs)
            row["sklearn_errors"] = [r["sklearn_error"] for r in runs if r.get("sklearn_error")]
            out[name][mode] = row
    for name, modes in out.items():
        for mode, row in modes.items():
            base = out.get("chromium", {}).get(mode, {}).get("quire")
            row["engine_vs_chromium"] = (round(row["quire"]["median"] / base["median"], 2)
                                         if row.get("quire") and base else None)
    return out


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


def print_table(table: dict, runs: int) -> None:
    print(f"{'engine':<9} {'mode':<10} {'shell':>6} {'pyodide':>8} {'numpy':>6} {'ready':>6} {'×chromium':>9} {'sklearn':>8}"
          f"   (seconds, median of {runs})")
    for name, modes in table.items():
        for mode, row in modes.items():
            cells = [f"{row[k]['median']:.2f}" if row.get(k) else "—" for k in COLUMNS]
            ratio = f"{row['engine_vs_chromium']:.2f}" if row.get("engine_vs_chromium") else "—"
            print(f"{name:<9} {mode:<10} {cells[0]:>6} {cells[1]:>8} {cells[2]:>6} {cells[3]:>6} {ratio:>9} {cells[4]:>8}"
                  + (f"  sklearn: {row['sklearn_errors'][0]}" if row["sklearn_errors"] else ""))


def git_commit() -> str | None:
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return result.stdout.strip() or None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, from " + ", ".join(ENGINES))
    parser.add_argument("--out", type=Path, default=ROOT / "tests/bench/results/boot.json")
    args = parser.parse_args()
    names = [n for n in args.engines.split(",") if n]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        parser.error(f"unknown engine {unknown[0]!r}; known: {', '.join(ENGINES)}")
    skipped = {n: engines.missing(n) for n in names if n != "chromium" and engines.missing(n)}
    for name, why in skipped.items():
        print(f"skipping {name}: {why}", file=sys.stderr)
    names = [n for n in names if n not in skipped]
    commit = git_commit()  # what the bundle is built from
    fresh_dist(args.dist)
    started = time.time()
    load_before = os.getloadavg()
    raw, versions = measure(args.dist, args.runs, names)
    load_after = os.getloadavg()
    table = summarise(raw)
    sizes = bundle_bytes(args.dist)
    print_table(table, args.runs)
    print(f"load average (1, 5, 15 min) before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, "
          f"after {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f} on {os.cpu_count()} cores")
    print(f"bundle: {sizes['dist_total'] / 1e6:.1f} MB in dist/, the same in every mode (one boot path): "
          f"{sizes['before_ready'] / 1e6:.1f} MB read before ready, {sizes['background'] / 1e6:.1f} MB in the background, "
          f"{sizes['ocr_on_demand'] / 1e6:.1f} MB of OCR only when a scan needs it, "
          f"{sizes['voice_on_demand'] / 1e6:.1f} MB of voice only when the microphone is used "
          f"({sizes['without_ocr'] / 1e6:.1f} MB built with --no-ocr, "
          f"{sizes['without_ocr_and_voice'] / 1e6:.1f} MB without OCR and voice)")
    print(f"targets: shell < {TARGETS['shell']} s, engine (quire ready) < {TARGETS['engine_cold']} s cold and "
          f"< {TARGETS['engine_warm']} s warm, every engine within {TARGETS['engine_vs_chromium']}× of Chromium, "
          f"bundle < {TARGETS['bundle_mb']} MB")
    report = {"when": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": commit,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                          "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after]},
              "browsers": versions, "runs": args.runs, "seconds": table, "raw_ms": raw, "bytes": sizes, "targets": TARGETS,
              "skipped": skipped, "bench_seconds": round(time.time() - started, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
