#!/usr/bin/env python3
"""Word recall of Quire's Markdown/HTML/EPUB extraction against reference converters.

For every real file in tests/fixtures/markup (see its SOURCE.md): the share of
the reference's words found in Quire's passages, and how many passages the
location check could place.  Prints a table and writes JSON (default
tests/bench/results/markup_recall.json).

    python tests/bench/markup_recall.py [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "py")]
import test_extract_markup_real as real  # noqa: E402
from markup_reference import recall, words  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import provenance  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "tests/bench/results/markup_recall.json"))
    args = parser.parse_args()
    rows = []
    for source, reference in real.CASES:
        events, notes = real._reference(reference)
        units = real._extract(source).units
        got = words(" ".join(u.prefix + u.text for u in units))
        expected = [w for _, text in events for w in words(text)] + [w for n in notes for w in words(n)]
        placed, checked = real._check_locations(source, reference)
        rows.append({"file": source, "reference_words": len(expected), "recall": round(recall(expected, got), 4),
                     "passages": len(units), "placed": placed, "checked": checked, "notes": len(notes)})
    print(f"{'file':60} {'words':>6} {'recall':>7} {'passages':>8} {'placed':>9} {'notes':>5}")
    for r in rows:
        print(f"{r['file']:60} {r['reference_words']:6} {r['recall']:7.1%} {r['passages']:8} "
              f"{r['placed']:4}/{r['checked']:<4} {r['notes']:5}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"machine": provenance.machine(), "load": [provenance.load()], "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
