"""The steps that run Pyodide under Node.js at build time: a memory snapshot of the started
runtime and byte-compiled modules.  Both are cached by the hash of their inputs; without
Node the bundle simply has neither (``--no-precompile`` leaves them out on purpose)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from quire_build.common import ROOT, BuildError, sha256_bytes
from quire_build.images import file_image, read_image

SNAPSHOT_ASSET = "pyodide-snapshot.bin"
STARTUP_FILES = ("pyodide.asm.wasm", SNAPSHOT_ASSET, "python_stdlib.zip", "pyodide-lock.json")  # loadPyodide needs these
SNAPSHOT_SCRIPTS = ("engine/make-snapshot.js", "engine/worker-snapshot.js")


def make_snapshot(runtime: dict[str, bytes], cache: Path, modules: list[str], root: Path = ROOT) -> dict | None:
    """Pyodide's heap right after start-up, made by Node (``site/engine/make-snapshot.js``).

    Restoring it saves the engine about two seconds on every boot; ``modules`` (the
    pure-Python stdlib modules numpy and Quire import) are imported before it is taken.  Without Node the
    bundle simply has no snapshot and the worker starts Python the ordinary way.
    The result is cached by the hash of its inputs; the script itself is deterministic.
    """
    key = hashlib.sha256()
    for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
        key.update(f"{name}\0{sha256_bytes(runtime[name])}\n".encode())
    for rel in SNAPSHOT_SCRIPTS:
        key.update(sha256_bytes((root / "site" / rel).read_bytes()).encode())
    key.update(",".join(modules).encode())
    stem = cache / "snapshots" / key.hexdigest()[:24]
    data_path, info_path = stem.with_suffix(".bin"), stem.with_suffix(".json")
    if not (data_path.is_file() and info_path.is_file()):
        node = shutil.which("node")
        if node is None:
            print("warning: Node.js is not installed, so the bundle has no Pyodide memory snapshot; "
                  "Quire works, but the engine starts about two seconds slower", file=sys.stderr)
            return None
        stem.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
                (Path(tmp) / name).write_bytes(runtime[name])
            out = Path(tmp) / "snapshot.bin"
            result = subprocess.run([node, str(root / "site" / SNAPSHOT_SCRIPTS[0]), tmp, str(out), ",".join(modules)],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError("making the Pyodide memory snapshot failed (build with --no-precompile to skip it):\n"
                                 + result.stderr.strip()[-2000:])
            info = json.loads(result.stdout.strip().splitlines()[-1])
            shutil.copyfile(out, data_path.with_suffix(f".{os.getpid()}.tmp"))
            data_path.with_suffix(f".{os.getpid()}.tmp").replace(data_path)
            info_path.write_text(json.dumps(info))
    info = json.loads(info_path.read_text())
    return {"data": data_path.read_bytes(), **info}


def compile_pycs(files: dict[str, bytes], runtime: dict[str, bytes], cache: Path, root: Path = ROOT) -> dict[str, bytes]:
    """Unchecked-hash ``__pycache__/*.pyc`` for ``files``, compiled by the runtime's own
    Python under Node (``site/engine/compile-pyc.js``), cached by input hash.

    The engine would otherwise compile every module it imports on every boot (numpy:
    ~0.4 s).  Without Node: no .pyc files, and Python compiles them at import as usual."""
    sources = {n: d for n, d in files.items() if n.endswith(".py")}
    if not sources:
        return {}
    image = file_image(sources)
    key = hashlib.sha256(image)
    for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip"):
        key.update(sha256_bytes(runtime[name]).encode())
    key.update(sha256_bytes((root / "site" / "engine" / "compile-pyc.js").read_bytes()).encode())
    cached = cache / "pycs" / (key.hexdigest()[:24] + ".files")
    if not cached.is_file():
        node = shutil.which("node")
        if node is None:
            return {}
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip", "pyodide-lock.json"):
                (Path(tmp) / name).write_bytes(runtime[name])
            (Path(tmp) / "in.files").write_bytes(image)
            result = subprocess.run([node, str(root / "site" / "engine" / "compile-pyc.js"), tmp,
                                     str(Path(tmp) / "in.files"), str(Path(tmp) / "out.files")],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise BuildError("byte-compiling the boot packages failed (build with --no-precompile to skip it):\n"
                                 + result.stderr.strip()[-2000:])
            shutil.copyfile(Path(tmp) / "out.files", cached.with_suffix(f".{os.getpid()}.tmp"))
            cached.with_suffix(f".{os.getpid()}.tmp").replace(cached)
    return read_image(cached.read_bytes())
