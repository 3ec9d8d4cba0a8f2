#!/usr/bin/env python3
"""Run Quire's whole test suite, installing what it needs first.

    python tests/run.py            # everything, real Chromium included
    python tests/run.py -k bm25    # extra arguments go to pytest

It installs the Python packages named in pyproject.toml (engine + [test]) with pip,
checks for Chromium (installing Debian's package when running as root), and then
runs pytest.  Browser tests build their own bundle into a temporary folder.
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


def ensure_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        print("Chromium is missing: installing Debian's chromium package…", flush=True)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) "
                 "or point QUIRE_CHROMIUM at a Chromium/Chrome binary, then run this again.")


def main() -> int:
    ensure_packages()
    ensure_chromium()
    args = sys.argv[1:] or ["-q"]
    return subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
