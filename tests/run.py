#!/usr/bin/env python3
"""Run Quire's whole test suite, installing what it needs first.

    python3 tests/run.py            # everything, real Chromium included
    python3 tests/run.py -k bm25    # extra arguments go to pytest

It makes its own virtual environment (``.venv`` in the repo, or ``$QUIRE_VENV``), because
stock Debian and Ubuntu refuse ``pip install`` into the system Python (PEP 668), and
installs the packages named in pyproject.toml (engine + [test]) there.  It checks for
Chromium, Node.js and npm (installing Debian's packages when running as root), and then
runs pytest inside that environment.  Browser tests build their own bundle into a
temporary folder.

The real-server tier (``tests/real``) needs llama.cpp's ``llama-server``, built once from a
pinned sdist and cached (about 10 CPU-minutes the first time): the build starts here, in
the background at low priority, before pytest, and those tests run last and wait for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("QUIRE_VENV", ROOT / ".venv"))
CHROMIUM = os.environ.get("QUIRE_CHROMIUM", "/usr/bin/chromium")
# Two pytest-xdist workers: on two cores the suite took 31-40 minutes instead of 53-55 in one
# process (docs/testing.md, "How long the suite takes"); QUIRE_TEST_WORKERS=1 runs it in one process.
WORKERS = os.environ.get("QUIRE_TEST_WORKERS", "2")


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def as_root_with_apt() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install(packages: list[str]) -> None:
    print(f"Installing Debian's {', '.join(packages)}…", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True, env=env)


def ensure_venv() -> Path:
    """The suite's own environment; Debian ships venv without ensurepip until python3-venv is installed."""
    python = venv_python()
    if python.exists():
        return python
    made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True)
    if made.returncode != 0 and as_root_with_apt():
        shutil.rmtree(VENV, ignore_errors=True)
        version = f"python3.{sys.version_info.minor}-venv"
        apt_install(["python3-venv", version])
        made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True)
    if made.returncode != 0:
        shutil.rmtree(VENV, ignore_errors=True)
        sys.exit(f"Could not make a virtual environment at {VENV}:\n{made.stderr.strip()}\n"
                 "On Debian/Ubuntu install it with: sudo apt-get install -y python3-venv; then run this again.")
    return python


def requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"] + project["optional-dependencies"]["test"]


def ensure_packages(python: Path) -> None:
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements()]
    if subprocess.run(cmd).returncode != 0:
        sys.exit("pip could not install the test requirements (see above)")


ENGINE_PACKAGES = ("firefox-esr", "webkit2gtk-driver", "xvfb", "python3-gi", "gir1.2-webkit2-4.1")


def webkit_bindings() -> bool:
    """Has the system's Python WebKitGTK's bindings (tests/webkit_app.py: WebKit as an app keeps
    its storage, for the restart and full-disk tests)?"""
    python = "/usr/bin/python3"
    if not Path(python).exists():
        return True  # not a Debian-like system: engines.missing_webkit_app says what is missing
    probe = [python, "-c", "import gi; gi.require_version('WebKit2', '4.1'); from gi.repository import WebKit2"]
    return subprocess.run(probe, capture_output=True).returncode == 0


def missing_tools() -> list[str]:
    """Debian packages the suite needs that this machine lacks: Chromium for the browser tests,
    Node.js for the build's memory snapshot and .pyc files, npm for OCR, Emscripten for voice,
    espeak-ng and sox for the voice tests' spoken clips, cmake and g++ for llama-server, ffmpeg for the
    kiosk demo's video, Firefox ESR and WebKitGTK (with Xvfb, and its Python bindings for WebKit as an
    app) for the other-engines tier."""
    need = []
    if not Path(CHROMIUM).exists():
        need.append("chromium")
    if shutil.which("node") is None:
        need.append("nodejs")
    if shutil.which("npm") is None:
        need.append("npm")
    for tool, package in (("cmake", "cmake"), ("g++", "g++"), ("make", "make"),  # llama-server for tests/real
                          ("emcc", "emscripten"), ("espeak-ng", "espeak-ng"), ("sox", "sox"),  # voice
                          ("ffmpeg", "ffmpeg"),  # the kiosk demo's video (tests/kiosk_demo.py --video)
                          # the other engines (tests/engines.py): Firefox ESR, and WebKitGTK on a virtual screen
                          ("firefox-esr", "firefox-esr"), ("WebKitWebDriver", "webkit2gtk-driver"), ("Xvfb", "xvfb")):
        if shutil.which(tool) is None:
            need.append(package)
    if not webkit_bindings():
        need += ["python3-gi", "gir1.2-webkit2-4.1"]
    return need


def ensure_tools() -> None:
    need = missing_tools()
    engines = [p for p in need if p in ENGINE_PACKAGES]
    need = [p for p in need if p not in ENGINE_PACKAGES]
    if need and as_root_with_apt():
        apt_install(need)
    if engines and as_root_with_apt():
        try:  # not every distribution has them (Ubuntu's Firefox is a snap): their tests then say what is missing
            apt_install(engines)
        except subprocess.CalledProcessError:
            print(f"Could not install {', '.join(engines)}: the other-engines tests will fail and say why.", flush=True)
    if not Path(CHROMIUM).exists():
        sys.exit(f"Chromium not found at {CHROMIUM}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium) "
                 "or point QUIRE_CHROMIUM at a Chromium/Chrome binary, then run this again.")
    if shutil.which("cmake") is None or shutil.which("g++") is None:
        sys.exit("cmake and a C++ compiler are needed to build llama-server for the real-server tests "
                 "(Debian/Ubuntu: sudo apt-get install -y cmake g++ make), then run this again.")
    if shutil.which("node") is None or shutil.which("npm") is None:
        sys.exit("Node.js and npm are needed: the tests check the build's memory snapshot, .pyc files and OCR. "
                 "Install them (Debian/Ubuntu: sudo apt-get install -y nodejs npm), then run this again.")


def start_real_server_build(python: Path) -> subprocess.Popen:
    """Fetch the model and build llama-server (cached: instant when done before), niced, in the
    background; its output goes to a log in the cache, named on the console."""
    sys.path.insert(0, str(ROOT / "tests" / "real"))
    import provision

    log = provision.CACHE / "provision.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if not provision.server_binary_path().exists():
        print(f"Building llama-server for tests/real in the background (log: {log})…", flush=True)
    return subprocess.Popen(["nice", "-n", "10", str(python), str(ROOT / "tests" / "real" / "provision.py")],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT)


def main() -> int:
    python = ensure_venv()
    ensure_packages(python)
    ensure_tools()
    args = sys.argv[1:] or ["-q"]
    if WORKERS != "1" and not any(a == "-n" or a.startswith(("-n=", "--numprocesses")) for a in args):
        # A file's tests stay together (its module fixtures), and files go out in the order
        # tests/conftest.py gives them (xdist would otherwise put files with many tests first).
        args += ["-n", WORKERS, "--dist", "loadfile", "--no-loadscope-reorder"]
    if not any(a.startswith("--durations") for a in args):
        args += ["--durations=40"]  # the slowest tests, printed at the end: where the suite's time goes
    build = start_real_server_build(python)
    try:
        return subprocess.run([str(python), "-m", "pytest", *args], cwd=ROOT).returncode
    finally:
        if build.poll() is None:  # the run did not need it (a -k selection): stop building
            build.terminate()
            build.wait(30)


if __name__ == "__main__":
    sys.exit(main())
