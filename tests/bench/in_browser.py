"""Run Python inside the built bundle (Pyodide in the engine worker) in headless Chromium.

Benchmarks use this to measure the browser and CPython in the same run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, with_test_hooks  # noqa: E402


def fresh_dist(dist: Path = ROOT / "dist") -> Path:
    """Build the bundle from the current sources (about 17 s with the download cache warm):
    a ``dist/`` left from an older checkout would measure old code."""
    subprocess.run([sys.executable, str(ROOT / "build.py"), "--dist", str(dist)], check=True)
    return dist


def run_json(code: str, dist: Path = ROOT / "dist", timeout_ms: int = 900_000) -> dict:
    """Evaluate ``code`` (whose last expression is a JSON string) in the bundle; return it parsed."""
    from playwright.sync_api import sync_playwright

    fresh_dist(dist)
    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.set_default_timeout(timeout_ms)
            page.goto(with_test_hooks(server.url))  # quire.run
            page.evaluate("async () => { await window.quire.ready; }")
            result = json.loads(page.evaluate("(src) => window.quire.run(src)", code))
            browser.close()
    finally:
        server.stop()
    return result
