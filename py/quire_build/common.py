"""What every build step shares: the repo root, the cache, the pins, hashes and errors.

>>> sha256_bytes(b"")[:12]
'e3b0c44298fc'
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # py/quire_build/common.py -> the repo
DEFAULT_CACHE = Path(os.environ.get("QUIRE_BUILD_CACHE", Path.home() / ".cache" / "quire-build"))
VIRTUAL_BASE = "https://bundle.quire.invalid/"  # never on the network: the worker's fetch shim answers it
CORE_FILES = ["pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"]
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed timestamps make zips reproducible
GZIP_WORTH_IT = 0.9  # gzip an asset only if it saves more than 10%
# The shared libraries `import numpy` loads before the engine is ready (numpy 2.0.2); the worker
# compiles them while the snapshot is restored (site/engine/worker-images.js, compileDynlibs), and
# tests/test_boot_browser.py checks this list against what the engine has loaded when ready.
BOOT_DYNLIBS = {"numpy": ["numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so",
                          "numpy/_core/_multiarray_tests.cpython-312-wasm32-emscripten.so",
                          "numpy/linalg/_umath_linalg.cpython-312-wasm32-emscripten.so"]}


class BuildError(Exception):
    """Something the person running the build must fix; the message says what."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_pins(root: Path = ROOT) -> dict:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["quire"]


def verify(name: str, data: bytes, expected: str) -> bytes:
    actual = sha256_bytes(data)
    if actual != expected:
        raise BuildError(
            f"{name}: sha256 {actual} does not match the pinned {expected}. "
            "The download or source folder is damaged or not the pinned version; "
            "delete the build cache and build again."
        )
    return data


class DownloadError(BuildError):
    """A pinned input is not in the cache and could not be downloaded (offline, say)."""


def project_version(root: Path = ROOT) -> str:
    with open(root / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]
