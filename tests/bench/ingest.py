#!/usr/bin/env python3
"""Ingestion benchmark: pages per second for extraction + chunking, in Chromium and on CPython.

The same code (quire.extract + quire.chunking) runs on both in the same run, on the
two-column ACL papers and the 117-page German GeoTopo script, each file read once untimed on both
sides first (Pyodide's WebAssembly is compiled lazily).  Prints a table with the
ratio and writes JSON (default tests/bench/results/ingest.json).  Target: the browser
within 3x of CPython.

    python tests/bench/ingest.py [--repeat 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402
from in_browser import run_json  # noqa: E402
DATA = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data")) / "pdfs"
FILES = ["acl-papers/N18-3011.pdf", "acl-papers/2020.acl-main.207.pdf", "py-pdf-sample-files/GeoTopo-komprimiert.pdf"]

MEASURE = """
import time
from quire.extract import extract
from quire.chunking import chunk_units

def warm(files):
    # Read every file once, untimed: Pyodide compiles WebAssembly lazily and tiers it up, so the
    # first file read in a fresh tab paid for that (the 8-page paper, read first, measured 6.1x).
    for name, data in files:
        chunk_units("warm", extract(name, data).units)

def measure(name, data, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        ex = extract(name, data)
        t1 = time.perf_counter()
        chunks = chunk_units("bench", ex.units)
        t2 = time.perf_counter()
        run = {"pages": ex.meta.get("pages", len(ex.units)), "chunks": len(chunks), "extract_s": t1 - t0, "chunk_s": t2 - t1}
        if best is None or run["extract_s"] + run["chunk_s"] < best["extract_s"] + best["chunk_s"]:
            best = run
    best["pages_per_s"] = best["pages"] / (best["extract_s"] + best["chunk_s"])
    return best
"""


def on_cpython(repeat: int) -> dict:
    scope: dict = {}
    exec(MEASURE, scope)
    scope["warm"]([(Path(f).name, (DATA / f).read_bytes()) for f in FILES])
    return {f: scope["measure"](Path(f).name, (DATA / f).read_bytes(), repeat) for f in FILES}


def in_browser(repeat: int) -> dict:
    payload = {f: base64.b64encode((DATA / f).read_bytes()).decode() for f in FILES}
    return run_json(MEASURE + f"""
import base64, json
files = json.loads({json.dumps(json.dumps(payload))})
warm([(f.rsplit("/", 1)[-1], base64.b64decode(b64)) for f, b64 in files.items()])
json.dumps({{f: measure(f.rsplit("/", 1)[-1], base64.b64decode(b64), {repeat}) for f, b64 in files.items()}})
""")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per file; the best is kept")
    parser.add_argument("--out", type=Path, default=ROOT / "tests/bench/results/ingest.json")
    args = parser.parse_args()
    machine, loads = provenance.machine(), [provenance.load()]
    cpython = on_cpython(args.repeat)
    loads.append(provenance.load())
    browser = in_browser(args.repeat)
    loads.append(provenance.load())
    print(f"{'file':<28} {'pages':>5} {'chunks':>6} {'browser p/s':>12} {'CPython p/s':>12} {'ratio':>6}")
    for f in FILES:
        b, c = browser[f], cpython[f]
        print(f"{Path(f).name:<28} {c['pages']:>5} {c['chunks']:>6} {b['pages_per_s']:>12.1f} {c['pages_per_s']:>12.1f} "
              f"{c['pages_per_s'] / b['pages_per_s']:>5.1f}x")
    print("target: the browser within 3x of CPython")
    report = {"machine": machine, "load": loads, "cpython": cpython, "browser": browser}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
