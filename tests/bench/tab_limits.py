#!/usr/bin/env python3
"""How large a file can one Chromium tab train?  Peak memory and time per file size.

Each case runs in a fresh page of headless Chromium (a fresh renderer process):
the file is generated inside the page, staged and trained through ``window.quire``,
while this script samples the RSS of Chromium's processes (from /proc, every
0.2 s) and, after Train, reads the size of Pyodide's WebAssembly heap (it never
shrinks, so it is the peak).  A crashed tab is reported as such.  Prints a table
and writes JSON to tests/bench/results/tab_limits.json.

    python tests/bench/tab_limits.py [--dist /tmp/dist] [--cases text:25,text:50,md:50,pdf:20]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, with_test_hooks  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

# The file is made in the page (no 100 MB round trip through Playwright).  Text: varied
# German/English prose lines; Markdown: the same under a heading every 40 lines; PDF:
# pages of text plus an uncompressed filler stream so that size grows with few pages.
MAKE = r"""
async ([kind, mb]) => {
  const words = 'the study of graphs Wissenschaft und Forschung retrieval index memory tab chunk passage ' +
    'Quire reads every page of the document and answers with citations zwischen den Zeilen';
  const w = words.split(' ');
  const size = mb * 1048576;
  let seed = 1;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed; };
  const line = () => { let s = ''; for (let i = 0; i < 12; i++) s += w[rnd() % w.length] + ' '; return s + '.\n'; };
  if (kind === 'text' || kind === 'md') {
    const block = []; for (let i = 0; i < 4000; i++) block.push((kind === 'md' && i % 40 === 0 ? '\n## Section ' + i + '\n\n' : '') + line());
    const unit = new TextEncoder().encode(block.join(''));
    const out = new Uint8Array(size);
    for (let o = 0; o < size; o += unit.length) out.set(unit.subarray(0, Math.min(unit.length, size - o)), o);
    return [kind === 'md' ? 'big.md' : 'big.txt', out];
  }
  // PDF: pages with a line of text each, plus one filler stream that makes up the size.
  const pages = 2000, enc = new TextEncoder();
  const parts = [], offsets = [];
  let pos = 0;
  const add = (s) => { const b = typeof s === 'string' ? enc.encode(s) : s; parts.push(b); pos += b.length; };
  const obj = (n, body) => { offsets[n] = pos; add(n + ' 0 obj\n'); add(body); add('\nendobj\n'); };
  add('%PDF-1.4\n');
  const kids = []; for (let i = 0; i < pages; i++) kids.push((5 + 2 * i) + ' 0 R');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, '<< /Type /Pages /Kids [' + kids.join(' ') + '] /Count ' + pages + ' >>');
  obj(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const filler = Math.max(0, size - pages * 900);
  offsets[4] = pos; add('4 0 obj\n<< /Length ' + filler + ' >>\nstream\n'); add(new Uint8Array(filler).fill(32)); add('\nendstream\nendobj\n');
  for (let i = 0; i < pages; i++) {
    const text = 'BT /F1 11 Tf 50 750 Td (' + line().replace(/[()\\\n]/g, '') + ' page ' + (i + 1) + ') Tj ET';
    obj(5 + 2 * i, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ' + (6 + 2 * i) + ' 0 R >>');
    obj(6 + 2 * i, '<< /Length ' + text.length + ' >>\nstream\n' + text + '\nendstream');
  }
  const n = 5 + 2 * pages, xref = pos;
  let table = 'xref\n0 ' + n + '\n0000000000 65535 f \n';
  for (let i = 1; i < n; i++) table += String(offsets[i]).padStart(10, '0') + ' 00000 n \n';
  add(table + 'trailer\n<< /Size ' + n + ' /Root 1 0 R >>\nstartxref\n' + xref + '\n%%EOF\n');
  const out = new Uint8Array(pos); let o = 0; for (const p of parts) { out.set(p, o); o += p.length; }
  return ['big.pdf', out];
}
"""

TRAIN = """
async ([kind, mb]) => {
  const [name, data] = await (%s)([kind, mb]);
  localStorage.setItem('quire.maxFileMB', '2000');
  const t0 = performance.now();
  await window.quire.stage({name, data});
  const counts = await window.quire.train();
  const heap = JSON.parse(await window.quire.run(
    "import json, pyodide_js\\njson.dumps(pyodide_js._module.HEAPU8.length)"));
  const hits = await window.quire.search('Wissenschaft Forschung', {k: 3});
  return {seconds: (performance.now() - t0) / 1000, counts, heap, hits: hits.length};
}
""" % MAKE.strip()


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def rss_by_process(root: int) -> dict[int, tuple[str, int]]:
    """pid -> (process type, RSS bytes) for Chromium below ``root``."""
    out = {}
    for pid in descendants(root):
        try:
            # Zygote-forked processes rewrite their command line as one space-separated string.
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if not cmd or b"chrom" not in cmd[0]:
            continue
        kind = next((a.split(b"=", 1)[1].decode() for a in cmd if a.startswith(b"--type=")), "browser")
        rss = next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        out[pid] = (kind, rss)
    return out


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.peak_renderer = self.peak_total = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            procs = rss_by_process(os.getpid())
            self.peak_total = max(self.peak_total, sum(r for _, r in procs.values()))
            self.peak_renderer = max([self.peak_renderer] + [r for k, r in procs.values() if k == "renderer"])
            time.sleep(0.2)


def run_case(browser, url: str, kind: str, mb: int) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(1_800_000)
    sampler = Sampler()
    row = {"kind": kind, "mb": mb}
    try:
        page.goto(with_test_hooks(url))  # quire.run
        page.evaluate("async () => { await window.quire.ready; }")
        sampler.start()
        row.update(page.evaluate(TRAIN, [kind, mb]))
        row["outcome"] = row["counts"]["files"][0]["outcome"]
        row["error"] = row["counts"]["files"][0].get("error")
        row["counts"] = {k: v for k, v in row["counts"].items() if k != "files"}
    except Exception as exc:  # a crashed tab ("Target crashed") is a result here
        row["outcome"] = "tab crashed" if "crash" in str(exc).lower() else "error"
        row["error"] = str(exc).splitlines()[0][:200]
    finally:
        sampler.stop.set()
        if sampler.is_alive():
            sampler.join()
        row["peak_renderer_mb"] = round(sampler.peak_renderer / 2**20)
        row["peak_chromium_mb"] = round(sampler.peak_total / 2**20)
        context.close()
    if "heap" in row:
        row["wasm_heap_mb"] = round(row.pop("heap") / 2**20)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--cases", default="text:25,text:50,text:100,md:50,md:100,pdf:30,pdf:100")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "tab_limits.json")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    server = StaticServer(args.dist).start()
    rows, loads = [], [provenance.load()]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            print(f"{'kind':5} {'MB':>5} {'outcome':12} {'s':>7} {'wasm heap':>10} {'renderer RSS':>13} {'all RSS':>8}")
            for case in args.cases.split(","):
                kind, mb = case.split(":")
                row = run_case(browser, server.url, kind, int(mb))
                rows.append(row)
                print(f"{kind:5} {mb:>5} {row['outcome']:12} {row.get('seconds', 0):7.1f} "
                      f"{row.get('wasm_heap_mb', '-'):>10} {row['peak_renderer_mb']:>13} {row['peak_chromium_mb']:>8} "
                      f"{row.get('error') or ''}", flush=True)
            browser.close()
    finally:
        server.stop()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    loads.append(provenance.load())
    args.out.write_text(json.dumps({"machine": provenance.machine(), "load": loads, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
