"""OCR benchmark (issue 8): seconds per page, character error rate, bytes added to the bundle.

    python tests/bench/ocr.py [--data DIR] [--dist DIR] [--out FILE] [--lang eng]

Builds the bundle into a temporary folder (or uses --dist), serves it with serve.py,
and runs QuireOCR.ocrPdf in real Chromium on every scanned PDF of
``$QUIRE_DATA/pdfs/ocrmypdf-scans``.  Files made from linn.png are scored against
linn.txt; the others have no ground truth.  Seconds per page are timed in the page
from the engine being ready to the last page read (drawing overlaps reading); the
engine's start-up is reported once, separately.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

import build  # noqa: E402
import provenance  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402
from test_ocr_browser import cer, pdf_b64  # noqa: E402

# file -> pages to read (None: all) and the ground truth, if any
FILES = {
    "linn.pdf": (None, "linn.txt"),
    "ccitt.pdf": (None, "linn.txt"),   # linn.png as CCITT G4
    "skew.pdf": (None, "linn.txt"),    # linn.png, skewed by the page's matrix
    "c02-22.pdf": (None, None),
    "multipage.pdf": ([1, 2, 3, 5, 6], None),  # page 4 has a text layer
}

TIMED_OCR = """async ([b64, pages, lang]) => {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const marks = [];
  const t0 = performance.now();
  const results = await QuireOCR.ocrPdf(bytes, pages, { lang, onProgress: p => marks.push(performance.now()) });
  const t1 = performance.now();
  return { results, total: (t1 - t0) / 1000, reading: (marks[marks.length - 1] - marks[0]) / 1000, ready: (marks[0] - t0) / 1000 };
}"""


def ocr_bytes(dist: Path) -> dict:
    packs = sorted((dist / "assets" / "pack" / "ocr").glob("*.js"))
    bundle = (dist / "assets" / "bundle.js").read_text(encoding="utf-8")
    assets = json.loads(bundle.split("=", 1)[1].rstrip().rstrip(";"))["assets"]
    raw = sum(a["size"] for n, a in assets.items() if a["group"] == "ocr")
    return {"packed_bytes": sum(p.stat().st_size for p in packs), "raw_bytes": raw, "files": len(packs)}


def run(dist: Path, scans: Path, lang: str) -> dict:
    from playwright.sync_api import sync_playwright

    server = StaticServer(dist).start()
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(600_000)
            page.goto(server.url)
            # Let the Python engine settle first so it does not compete for the CPU (OCR needs only the loader).
            engine = page.evaluate("() => window.quire.ready.then(() => 'ready', err => err.message)")
            if engine != "ready":
                print(f"(the Python engine did not start: {engine}; OCR does not need it)")
            if not page.evaluate("!!window.QuireOCR"):
                page.add_script_tag(url="assets/ocr.js")
            for name, (pages, truth) in FILES.items():
                out = page.evaluate(TIMED_OCR, [pdf_b64(scans / name), pages, lang])
                n = len(out["results"])
                text = "\n".join(r["text"] for r in out["results"])
                row = {
                    "file": name, "pages": n,
                    "seconds_per_page": round(out["reading"] / n, 2),
                    "seconds_total": round(out["total"], 2),
                    "engine_start_seconds": round(out["ready"], 2),
                    "cer": round(cer(text, (scans / truth).read_text(encoding="utf-8")), 4) if truth else None,
                    "mean_confidence": round(sum(r["confidence"] for r in out["results"]) / n, 1),
                }
                rows.append(row)
                print_row(row)
            browser.close()
    finally:
        server.stop()
    return {"rows": rows, "bundle": ocr_bytes(dist)}


def print_row(row: dict) -> None:
    rate = f"{row['cer']:.2%}" if row["cer"] is not None else "—"
    print(f"{row['file']:<15} {row['pages']:>5} {row['seconds_per_page']:>9.2f} {rate:>8} "
          f"{row['mean_confidence']:>6} {row['engine_start_seconds']:>8.2f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default_data = Path(os.environ.get("QUIRE_DATA", ROOT.parent / "shared" / "data"))
    parser.add_argument("--data", type=Path, default=default_data)
    parser.add_argument("--dist", type=Path, help="an already built bundle (default: build one into a temp folder)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "ocr.json")
    parser.add_argument("--lang", default="eng", help="eng, deu or eng+deu")
    args = parser.parse_args(argv)

    machine, loads = provenance.machine(), [provenance.load()]
    print(f"{'file':<15} {'pages':>5} {'s/page':>9} {'CER':>8} {'conf':>6} {'start s':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        dist = args.dist
        if dist is None:
            dist = Path(tmp) / "dist"
            if build.main(["--dist", str(dist)]) != 0:
                return 1
        loads.append(provenance.load())  # the bundle built
        result = run(dist, args.data / "pdfs" / "ocrmypdf-scans", args.lang)
        loads.append(provenance.load())
    b = result["bundle"]
    print(f"OCR adds {b['packed_bytes'] / 1e6:.2f} MB to the bundle "
          f"({b['files']} packed files; {b['raw_bytes'] / 1e6:.2f} MB before packing)")
    result.update({"machine": machine, "load": loads, "lang": args.lang, "platform": platform.platform(),
                   "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
