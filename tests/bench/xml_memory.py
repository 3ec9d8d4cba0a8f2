#!/usr/bin/env python3
"""Memory and time to parse Office-style XML with ``quire.extract.base.parse_xml``, per MB.

This sizes ``Limits.max_unzipped_bytes``: a DOCX/XLSX/PPTX/EPUB may unpack to at most
that much XML, and the tab must survive parsing it.  CPython: each size in a fresh
subprocess, peak RSS growth from ``resource``.  Pyodide (``--browser``): sizes in
ascending order in one page of the built bundle, the WebAssembly heap after each
(it never shrinks, so its growth is the peak).  Prints a table; writes JSON to
tests/bench/results/xml_memory.json.

    python tests/bench/xml_memory.py [--sizes 8,32,64] [--browser --dist /tmp/dist]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402

# A Word body: paragraphs of runs, the shape that makes ElementTree allocate most per byte.
CODE = r"""
import json, resource, time, sys
sys.path.insert(0, %(py)r)
from quire.extract.base import parse_xml

def document(mb):
    para = '<w:p><w:pPr><w:pStyle w:val="Normal"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t>Quire reads this</w:t></w:r><w:r><w:t xml:space="preserve"> and that.</w:t></w:r></w:p>'
    n = mb * 1048576 // len(para)
    return ('<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
            + para * n + '</w:body></w:document>').encode()

def measure(mb):
    data = document(mb)
    before = %(mem)s
    t0 = time.perf_counter()
    root = parse_xml(data, "Word")
    seconds = time.perf_counter() - t0
    elements = sum(1 for _ in root.iter())
    after = %(mem)s
    del root
    return {"mb": mb, "seconds": round(seconds, 2), "elements": elements, "peak_growth_mb": round((after - before) / 1048576)}
"""
CPYTHON_MEM = "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024"
PYODIDE_MEM = "__import__('pyodide_js')._module.HEAPU8.length"


def cpython(mb: int) -> dict:
    code = CODE % {"py": str(ROOT / "py"), "mem": CPYTHON_MEM} + f"\nprint(json.dumps(measure({mb})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def pyodide(sizes: list[int], dist: Path) -> list[dict]:
    from in_browser import run_json

    code = (CODE % {"py": "/nonexistent", "mem": PYODIDE_MEM}).replace("import json, resource, time", "import json, time")
    code += f"\njson.dumps([measure(mb) for mb in {sizes!r}])"
    return run_json(code, dist)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8,32,64,128")
    ap.add_argument("--browser", action="store_true")
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "xml_memory.json")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    loads = [provenance.load()]
    rows = [{"runtime": "cpython", **cpython(mb)} for mb in sizes]
    if args.browser:
        rows += [{"runtime": "pyodide", **r} for r in pyodide(sizes, args.dist)]
    print(f"{'runtime':8} {'XML MB':>7} {'s':>6} {'elements':>10} {'peak MB':>8} {'MB per MB':>9} {'s per MB':>8}")
    for r in rows:
        print(f"{r['runtime']:8} {r['mb']:>7} {r['seconds']:>6} {r['elements']:>10} {r['peak_growth_mb']:>8} "
              f"{r['peak_growth_mb'] / r['mb']:>9.1f} {r['seconds'] / r['mb']:>8.2f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    loads.append(provenance.load())
    args.out.write_text(json.dumps({"machine": provenance.machine(), "load": loads, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
