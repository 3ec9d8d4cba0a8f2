#!/usr/bin/env python3
"""Run Quire's whole test suite, installing what it needs first.

    python tests/run.py            # everything, real Chromium included
    python tests/run.py -k bm25    # extra arguments go to pytest

It installs the Python packages named in pyproject.toml (engine + [test]) with pip,
checks for Chromium, Node.js and npm (installing Debian's packages when running as
root), and then runs pytest.  Browser tests build their own bundle into a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")


def requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["test"]


def ensure_packages() -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements()]
    if subprocess.run(cmd).returncode != 0:
        sys.exit("pip could not install the test requirements (see above)")


def missing_tools() -> list[str]:
    """Debian packages the suite needs that this machine lacks: Chromium for the browser tests,
    Node.js for the build's memory snapshot and .pyc files, npm for OCR."""
    need = []
    if not Path(CHROMIUM).exists():
        need.append("chromium")
    if shutil.which("node") is None:
        need.append("nodejs")
    if shutil.which("npm") is None:
        need.append("npm")
    return need


def ensure_tools() -> None:
    need = missing_tools()
    if need and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"Installing Debian's {', '.join(need)}…", flush=True)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", *need], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) "
                 "or point QUIRE_CHROMIUM at a Chromium/Chrome binary, then run this again.")
    if shutil.which("node") is None or shutil.which("npm") is None:
        sys.exit("Node.js and npm are needed: the tests check the build's memory snapshot, .pyc files and OCR. "
                 "Install them (Debian/Ubuntu: sudo apt-get install -y nodejs npm), then run this again.")


def main() -> int:
    ensure_packages()
    ensure_tools()
    args = sys.argv[1:] or ["-q"]
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
