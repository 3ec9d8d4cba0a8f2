#!/usr/bin/env python3
"""Markdown render benchmark in real Chromium: one render of 48,000-character answers, and streaming.

Inputs: a realistic answer (headings, cited paragraphs, lists, tables, code, links) and
adversarial ones of the same length (thousands of "[", unclosed emphasis, nested
emphasis, backticks, long and wide tables, deep lists, link openers that never close).
Each is rendered once (best of --runs) by QuireMarkdown.render.  Then the realistic answer
is streamed as the chat view does it: pieces of --frame characters arrive every ~4 ms,
paints are coalesced to animation frames, each paint calls QuireMarkdown.stream().update;
a PerformanceObserver records every 'longtask' (a main-thread task over 50 ms).

    python tests/bench/render.py [--runs 3] [--frame 24] [--compare GIT_REV] [--out FILE]

--compare renders the same inputs with site/assets/markdown.js from an older commit
(the renderer before this benchmark existed: e703353), each input capped at 60 s.
Prints a table and writes JSON (default tests/bench/results/render.json).
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
import provenance  # noqa: E402

SIZE = 48_000
ASSETS = ROOT / "site" / "assets"

REALISTIC_UNIT = """## {n}. How cells make energy

Mitochondria turn glucose into **ATP** through *oxidative phosphorylation* [1]. The electron
transport chain pumps protons across the inner membrane, and ATP synthase uses the gradient [2, 3].
See the `atp_yield()` helper and <https://example.org/cells/{n}> for the figures.

- Glycolysis happens in the cytoplasm and yields **2 ATP** [1]
- The Krebs cycle runs in the matrix [2]
  - it produces NADH and FADH2
  - and releases CO2
- Oxidative phosphorylation makes most of the ATP [3]

| Stage | Place | ATP |
|:--|:--|--:|
| Glycolysis | cytoplasm | 2 |
| Krebs cycle | matrix | 2 |
| Oxidative phosphorylation | inner membrane | ~34 |

```python
def atp_yield(glucose):
    return glucose * 38  # the textbook upper bound
```

> Note: real yields are closer to 30-32 ATP per glucose [3]; see [the review](https://example.org/review).

"""

ADVERSARIAL = {
    "brackets [[[": "[",
    "unclosed stars *a": "*a ",
    "nested emphasis *a **b": "*a **b ",
    "backticks a `": "a `",
    "images ![": "![",
    "link openers [a](": "[a](",
    "titles [a](b \"": '[a](b "',
    "long table": "| a | b | c |\n",
    "wide table": None,  # built below: 4,000 columns, then thousands of 1-cell rows
    "deep lists": "- a\n  - b\n    - c\n",
    "blank-line lists": "- a\n\n",
    "quotes > > >": "> ",
    "heading spaces": "#" + " " * 200 + "x\n",
    "closing parens": ")",
    "citations [1,": "[1,",
}


def inputs() -> dict[str, str]:
    out = {}
    unit = "".join(REALISTIC_UNIT.format(n=n) for n in range(1, 200))
    out["realistic answer"] = unit[:SIZE]
    for name, piece in ADVERSARIAL.items():
        if piece is None:
            text = "|a" * 4000 + "\n" + "|-" * 4000 + "\n"
            text += "|\n" * ((SIZE - len(text)) // 2)
        else:
            text = piece * (SIZE // len(piece) + 1)
        out[name] = text[:SIZE]
    return out


PAGE = """<!doctype html><meta charset="utf-8"><title>render bench</title><div id="out"></div>
<script src="markdown-inline.js"></script><script src="markdown.js"></script>"""
OLD_PAGE = """<!doctype html><meta charset="utf-8"><title>render bench (old)</title><div id="out"></div>
<script src="markdown-old.js"></script>"""

RENDER_ONCE = """([text, runs]) => { const out = document.getElementById('out'); let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    out.replaceChildren(QuireMarkdown.render(text, {citations: n => n <= 3 ? {href: '#c' + n, title: 'p. ' + n} : null}));
    best = Math.min(best, performance.now() - t0);
  }
  return {ms: best, nodes: out.querySelectorAll('*').length}; }"""

# The chat view's streaming path: pieces arrive as messages, paints wait for a frame.
STREAM = """([text, frame, incremental]) => new Promise(done => {
  const out = document.getElementById('out'); out.replaceChildren();
  const cite = {citations: n => n <= 3 ? {href: '#c' + n} : null};
  const live = incremental ? QuireMarkdown.stream(out, cite) : null;
  const long = [];
  const obs = new PerformanceObserver(list => list.getEntries().forEach(e => long.push(e.duration)));
  obs.observe({type: 'longtask', buffered: false});
  let shown = '', at = 0, painting = false, paints = 0, worst = 0;
  const started = performance.now();
  const paint = () => { painting = false; const t0 = performance.now();
    if (live) live.update(shown); else out.replaceChildren(QuireMarkdown.render(shown, cite));
    worst = Math.max(worst, performance.now() - t0); paints++; };
  const deliver = () => {
    shown += text.slice(at, at + frame); at += frame;
    if (!painting) { painting = true; requestAnimationFrame(paint); }
    if (at < text.length) setTimeout(deliver, 0);  // a piece every ~4 ms, faster than any model streams
    else requestAnimationFrame(() => { paint(); setTimeout(() => { obs.disconnect();
      done({total_ms: performance.now() - started, paints, worst_paint_ms: worst, longtasks: long.length,
            longest_task_ms: long.length ? Math.max(...long) : 0}); }, 200); });
  };
  deliver();
})"""


def old_renderer(rev: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:site/assets/markdown.js"],
                          check=True, capture_output=True, text=True).stdout


def measure(runs: int, frame: int, compare: str | None) -> dict:
    from playwright.sync_api import sync_playwright

    texts = inputs()
    result = {"size": SIZE, "runs": runs, "frame": frame, "once": {}, "once_old": {}, "streaming": {}}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        tmp = Path(tmp)
        for name in ("markdown-inline.js", "markdown.js"):
            (tmp / name).write_bytes((ASSETS / name).read_bytes())
        (tmp / "index.html").write_text(PAGE)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(600_000)
        page.goto((tmp / "index.html").as_uri())
        for name, text in texts.items():
            result["once"][name] = page.evaluate(RENDER_ONCE, [text, runs])
        for mode, incremental in (("incremental (stream)", True), ("full re-render per frame", False)):
            result["streaming"][mode] = page.evaluate(STREAM, [texts["realistic answer"], frame, incremental])
        if compare:
            (tmp / "markdown-old.js").write_text(old_renderer(compare))
            (tmp / "old.html").write_text(OLD_PAGE)
            old = browser.new_page()
            old.set_default_timeout(60_000)
            old.goto((tmp / "old.html").as_uri())
            for name, text in texts.items():
                t0 = time.monotonic()
                try:
                    result["once_old"][name] = old.evaluate(RENDER_ONCE, [text, 1])
                except Exception as exc:  # a render past the cap: the page is stuck, start a new one
                    result["once_old"][name] = {"ms": None, "error": f"over {time.monotonic() - t0:.0f} s"}
                    old.close()
                    old = browser.new_page()
                    old.set_default_timeout(60_000)
                    old.goto((tmp / "old.html").as_uri())
        browser.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--frame", type=int, default=24, help="characters per streamed piece")
    parser.add_argument("--compare", help="also time site/assets/markdown.js of this git revision")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "render.json")
    args = parser.parse_args(argv)

    machine, loads = provenance.machine(), [provenance.load()]
    result = measure(args.runs, args.frame, args.compare)
    loads.append(provenance.load())
    result.update(machine={**machine, "arch": platform.machine()}, load=loads, chromium=CHROMIUM)
    print(f"One render of {SIZE:,} characters (best of {args.runs}):")
    head = f"{'input':28} {'ms':>9} {'elements':>9}" + (f" {'old ms':>10}" if args.compare else "")
    print(head)
    print("-" * len(head))
    for name, r in result["once"].items():
        line = f"{name:28} {r['ms']:9.1f} {r['nodes']:9}"
        if args.compare:
            o = result["once_old"].get(name, {})
            line += f" {o['ms']:10.1f}" if o.get("ms") is not None else f" {o.get('error', '-'):>10}"
        print(line)
    print(f"\nStreaming the realistic answer in {args.frame}-character pieces:")
    head = f"{'mode':28} {'total ms':>9} {'paints':>7} {'worst paint':>12} {'long tasks':>11} {'longest':>8}"
    print(head)
    print("-" * len(head))
    for mode, r in result["streaming"].items():
        print(f"{mode:28} {r['total_ms']:9.0f} {r['paints']:7} {r['worst_paint_ms']:12.1f} {r['longtasks']:11} {r['longest_task_ms']:8.0f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
