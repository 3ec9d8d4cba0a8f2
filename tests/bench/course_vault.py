"""A bundle that carries a course: how long a 50-source, 5,000-passage course takes to load in the tab.

    python3 tests/bench/course_vault.py [--sources 50] [--passages 5000] [--dist DIR]

The course is made from SciFact abstracts (``$QUIRE_DATA``, default ``/work/shared/data``): the
abstracts are dealt into ``--sources`` Markdown documents, one section per abstract, until the
library holds about ``--passages`` passages.  The engine trains it on CPython, makes an offline quiz
from it and exports the vault; the lean bundle is built (or ``--dist`` taken) and the course put in
with ``build.py --library-only``.  Headless Chromium then opens the copy from file:// in a fresh
profile, and the figure is the time from "Load the course" (``quire.loadCourse()``) to the library
being there: the packed vault read and its sha256 checked, the import (every check, the search index
rebuilt from the passages, one commit) and the library reopened.  A search after it is timed too.

The course carries no vectors (the tab embeds them in the background afterwards), so the figure is
the load a student waits for.  Prints a table; JSON (machine, load, commit) goes to
tests/bench/results/course_vault.json.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


def abstracts(data: Path) -> list[tuple[str, str]]:
    out = []
    for line in (data / "scifact" / "corpus.jsonl").read_text().splitlines():
        d = json.loads(line)
        out.append(((d.get("title") or d["_id"]).strip(), d["text"].strip()))
    return out


async def make_course(data: Path, sources: int, passages: int) -> tuple[bytes, dict]:
    from quire.app import Quire
    from quire.services import Context, study
    from quire.store import MemoryStore

    docs = abstracts(data)
    q = await Quire.open(MemoryStore())
    per = max(1, passages // sources // 2)  # a SciFact abstract makes about two passages
    for i in range(sources):
        part = docs[i * per:(i + 1) * per]
        text = f"# Readings {i + 1}\n\n" + "\n\n".join(f"## {t}\n\n{body}" for t, body in part)
        await q.stage_text(f"readings-{i + 1:03d}", text, "SciFact 101")
    await q.train()
    first = q.sources()[0]["id"]
    await study.METHODS["studyGenerate"](q, Context(), "quiz", {"count": 10, "scope": {"sources": [first]}})
    vault = base64.b64decode((await q.export_vault())["base64"])
    have = 0
    for s in q.sources():
        have += len(await q.chunks(s["id"]))
    return vault, {"sources": len(q.sources()), "passages": have, "vault_bytes": len(vault)}


def load_average() -> float:
    return round(os.getloadavg()[0], 1)


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def in_tab(dist: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS, KEYWORDS_ONLY

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context(service_workers="block")
        ctx.add_init_script(KEYWORDS_ONLY)
        page = ctx.new_page()
        page.set_default_timeout(600_000)
        page.goto((dist / "index.html").as_uri())
        page.wait_for_function("() => window.quire && window.quire.ready")
        page.evaluate("quire.ready")
        r = page.evaluate("""async () => {
            const t0 = performance.now();
            const done = await quire.loadCourse();
            const load = performance.now() - t0;
            const t1 = performance.now();
            const hits = await quire.search('vitamin D deficiency');
            const search = performance.now() - t1;
            return {load_s: +(load / 1000).toFixed(2), first_search_ms: Math.round(search), hits: hits.length,
                    sources: (await quire.sources()).length};
        }""")
        browser.close()
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", type=int, default=50)
    ap.add_argument("--passages", type=int, default=5000)
    ap.add_argument("--dist", type=Path, help="a built bundle to copy (default: build the lean bundle)")
    args = ap.parse_args()
    data = Path(os.environ.get("QUIRE_DATA", "/work/shared/data"))
    import build

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        vault, made = asyncio.run(make_course(data, args.sources, args.passages))
        made["make_s"] = round(time.perf_counter() - t0, 1)
        (tmp / "course.quirevault").write_bytes(vault)
        dist = tmp / "dist"
        if args.dist:
            shutil.copytree(args.dist, dist)
        else:
            assert build.main(["--dist", str(dist), "--no-ocr", "--no-voice", "--no-embedder"]) == 0
        t0 = time.perf_counter()
        assert build.main(["--dist", str(dist), "--library", str(tmp / "course.quirevault"), "--library-only"]) == 0
        made["library_only_s"] = round(time.perf_counter() - t0, 2)
        tab = in_tab(dist)
    result = {"course": made, "chromium_file": {**tab, "load": load_average(), "commit": commit()},
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "commit": commit(),
                          "at": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}}
    print(f"{'course':<38}{made['sources']} sources, {made['passages']} passages, {made['vault_bytes'] / 1e6:.1f} MB vault")
    print(f"{'build.py --library-only':<38}{made['library_only_s']} s")
    print(f"{'load in the tab (Chromium, file://)':<38}{tab['load_s']} s  (target: under 10 s)")
    print(f"{'first search after it':<38}{tab['first_search_ms']} ms, {tab['hits']} hits")
    out = ROOT / "tests" / "bench" / "results" / "course_vault.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
