"""The order the study tools are imported in, in steps: record it, and measure the steps.

    python3 tests/bench/study_imports.py            # record the order, then measure
    python3 tests/bench/study_imports.py --measure  # measure the committed order only

scipy and scikit-learn are imported in the engine's worker, where a page call waits for the
import running at the moment (docs/benchmarks.md, "How long a person's calls wait").  Importing a
package runs its whole ``__init__``, so the worker imports them as small pieces: every module
they need, in the order Python finished importing them, each once its parent package is in
(a module whose parent is not yet in comes with its parent).  Each piece is one step, with the
worker given back between steps (engine/worker-lazy.js).

Recording: a fresh tab loads the packages and imports the names worker-lazy.js lists
(SKLEARN_IMPORTS, then SKLEARN_AFTER) with an import hook that notes each module as it
finishes; the order goes to site/engine/worker-study-order.js (run again after a Pyodide,
scipy or scikit-learn upgrade: a name that no longer exists is only a warning, and what the
list misses is imported with its importer, in a larger step).

Measuring: another fresh tab imports the pieces in that order and times each, and a third the
named modules alone, a step each, as before the pieces; prints both and writes tests/bench/results/study_imports.json (machine, load, commit).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

LAZY = ROOT / "site" / "engine" / "worker-lazy.js"
ORDER_JS = ROOT / "site" / "engine" / "worker-study-order.js"

RECORD = r'''
import importlib, importlib.abc, json, sys
import pyodide_js
from pyodide.ffi import to_js
done = []
class Noted(importlib.abc.Loader):
    def __init__(self, inner, name):
        self.inner, self.name = inner, name
    def create_module(self, spec):
        return self.inner.create_module(spec)
    def exec_module(self, module):
        self.inner.exec_module(module)
        done.append(self.name)
class Note(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = Noted(spec.loader, name)
                return spec
        return None
await pyodide_js.loadPackage(to_js(PACKAGES))
sys.meta_path.insert(0, Note())
for name in NAMES:
    importlib.import_module(name)
json.dumps(done)
'''

# Before the pieces: only the named imports, a step each.
NAMED = r'''
import importlib, json, time
import pyodide_js
from pyodide.ffi import to_js
await pyodide_js.loadPackage(to_js(PACKAGES))
steps = []
for name in NAMES:
    t = time.perf_counter()
    importlib.import_module(name)
    steps.append([name, round((time.perf_counter() - t) * 1000, 1)])
json.dumps(steps)
'''

MEASURE = r'''
import importlib, json, sys, time
import pyodide_js
from pyodide.ffi import to_js
await pyodide_js.loadPackage(to_js(PACKAGES))
steps = []
for name in ORDER:
    parent = name.rpartition(".")[0]
    if name in sys.modules or (parent and parent not in sys.modules):
        continue
    t = time.perf_counter()
    importlib.import_module(name)
    steps.append([name, round((time.perf_counter() - t) * 1000, 1)])
left = []
for name in NAMES:
    t = time.perf_counter()
    importlib.import_module(name)
    left.append([name, round((time.perf_counter() - t) * 1000, 1)])
json.dumps({"steps": steps, "left": left})
'''


def listed(var: str) -> list[str]:
    """A name list from worker-lazy.js (``var NAME = [...]``)."""
    body = re.search(rf"var {var} = \[(.*?)\];", LAZY.read_text(encoding="utf-8"), re.S).group(1)
    return re.findall(r"'([\w.]+)'", body)


def summary(steps: list) -> dict:
    times = [t for _, t in steps]
    return {"steps": len(steps), "total_ms": round(sum(times)), "longest": sorted(steps, key=lambda s: -s[1])[:15],
            "over_100_ms": sum(t > 100 for t in times), "over_200_ms": sum(t > 200 for t in times)}


def names() -> list[str]:
    return listed("SKLEARN_IMPORTS") + listed("SKLEARN_AFTER")


def packages() -> list[str]:
    sys.path.insert(0, str(ROOT / "py"))
    from quire_build.common import load_pins
    return load_pins()["pyodide"]["lazy_packages"]


def in_fresh_tab(server, code: str):
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS, with_test_hooks
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(900_000)
        page.goto(with_test_hooks(server.url))
        page.evaluate("quire.ready.then(() => 0)")
        out = json.loads(page.evaluate("(src) => window.quire.run(src)", code))
        browser.close()
    return out


def fill(code: str, **values) -> str:
    for key, value in values.items():
        code = code.replace(key, json.dumps(value))
    return code


def write_order(order: list[str]) -> None:
    lines = ",\n".join("  " + ", ".join(json.dumps(n) for n in order[i:i + 6]) for i in range(0, len(order), 6))
    ORDER_JS.write_text(
        "/* Generated by tests/bench/study_imports.py (do not edit): the modules scipy and scikit-learn\n"
        " * need, in the order Python finished importing them in the tab.  worker-lazy.js imports them\n"
        " * in this order, one step each once its parent package is in, so a page call waits for one\n"
        " * small import, not for a whole package. */\n"
        f"var QuireStudyOrder = [\n{lines}\n];\n", encoding="utf-8")


def read_order() -> list[str]:
    return json.loads("[" + ORDER_JS.read_text(encoding="utf-8").split("[", 1)[1].rsplit("]", 1)[0] + "]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", action="store_true", help="measure the committed order only")
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "bench" / "results" / "study_imports.json")
    args = parser.parse_args()

    from bench.in_browser import fresh_dist
    from conftest import StaticServer
    import provenance

    machine, loads = provenance.machine(), [provenance.load()]
    server = StaticServer(fresh_dist(ROOT / "dist")).start()
    try:
        if not args.measure:
            order = in_fresh_tab(server, fill(RECORD, PACKAGES=packages(), NAMES=names()))
            write_order(order)
            print(f"recorded {len(order)} modules into {ORDER_JS.relative_to(ROOT)}")
            server.stop()
            server = StaticServer(fresh_dist(ROOT / "dist")).start()
        order = read_order()
        got = in_fresh_tab(server, fill(MEASURE, PACKAGES=packages(), NAMES=names(), ORDER=order))
        named = in_fresh_tab(server, fill(NAMED, PACKAGES=packages(), NAMES=names()))
    finally:
        server.stop()
    result = {"modules": len(order), "pieces": summary(got["steps"]), "named_only": summary(named),
              "left_after_the_pieces_ms": round(sum(t for _, t in got["left"]), 1)}
    print(f"{len(order)} modules recorded; after the pieces the named imports took {result['left_after_the_pieces_ms']} ms")
    print("| imported as | steps | in all | longest step | over 100 ms | over 200 ms |\n|---|---|---|---|---|---|")
    for label, key in (("the named modules, a step each (before)", "named_only"), ("pieces", "pieces")):
        r = result[key]
        print(f"| {label} | {r['steps']} | {r['total_ms']} ms | {r['longest'][0][1]} ms ({r['longest'][0][0]}) | "
              f"{r['over_100_ms']} | {r['over_200_ms']} |")
    print("\nlongest pieces: " + ", ".join(f"{n} {ms} ms" for n, ms in result["pieces"]["longest"][:8]))
    loads.append(provenance.load())
    args.out.write_text(json.dumps({"machine": machine, "load": loads, **result}, indent=1) + "\n")


if __name__ == "__main__":
    main()
