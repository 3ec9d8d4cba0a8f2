"""Compile whisper.cpp to a single-threaded WebAssembly SIMD module with Emscripten.

The output is a classic script (``MODULARIZE``, no ES module, no pthreads, no
``eval``), so it runs in a blob: worker from file:// under the page's CSP
(``'wasm-unsafe-eval'`` only).  whisper.cpp's sources come from a pinned PyPI sdist
that vendors them; two knobs are added to them: :data:`MEL_PAD_PATCH`, so a short question is
not padded to Whisper's 30 s window, and :data:`NO_TIMESTAMPS_PATCHES`, so a window is decoded
as text alone, as faster-whisper's ``without_timestamps`` does (whisper.cpp 1.4.1 always decodes
timestamps; on the tab's own samples of a test lecture, faster-whisper scored 0.302 with them and
0.262 without).

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
                "int quire_mel_pad = 0;\n"
                "// Quire: 1 = decode without timestamps (<|notimestamps|> in the prompt; the C API masks\n"
                "// the timestamp tokens and asks for one segment).\n"
                "int quire_no_timestamps = 0;\n\nstatic bool log_mel_spectrogram(")
# (anchor, replacement): the prompt gains <|notimestamps|>, and a window whose text ends without
# a timestamp is complete rather than failed.
NO_TIMESTAMPS_PATCHES = (
    ("            prompt_init.push_back(whisper_token_transcribe());\n        }\n    }\n",
     "            prompt_init.push_back(whisper_token_transcribe());\n        }\n    }\n"
     "    if (quire_no_timestamps) prompt_init.push_back(whisper_token_not(ctx));\n"),
    ("                            if (result_len == 0) {\n",
     "                            if (result_len == 0 && !quire_no_timestamps) {\n"),
)
# When every temperature of the fallback fails, whisper.cpp 1.4.1 keeps the last (the warmest,
# sampled) decode; faster-whisper keeps the likeliest.  These keep the likeliest too.
BEST_DECODE_PATCHES = (
    ("        int best_decoder_id = 0;\n\n        for (int it = 0; it < (int) temperatures.size(); ++it) {\n",
     "        int best_decoder_id = 0;\n"
     "        whisper_sequence quire_best; int quire_best_seek = 0; bool quire_have_best = false;  // Quire\n\n"
     "        for (int it = 0; it < (int) temperatures.size(); ++it) {\n"),
    ("                if (decoder.failed || decoder.sequence.avg_logprobs < params.logprob_thold) {\n"
     "                    success = false;\n                    state->n_fail_p++;\n                }\n",
     "                if (decoder.failed || decoder.sequence.avg_logprobs < params.logprob_thold) {\n"
     "                    success = false;\n                    state->n_fail_p++;\n                }\n"
     "                if (!success && !decoder.failed && (!quire_have_best || decoder.sequence.avg_logprobs > quire_best.avg_logprobs)) {\n"
     "                    quire_best = decoder.sequence; quire_best_seek = decoder.seek_delta; quire_have_best = true;  // Quire\n"
     "                }\n"),
    ("        // output results through a user-provided callback\n        {\n"
     "            const auto & best_decoder = state->decoders[best_decoder_id];\n",
     "        if (quire_have_best) {  // Quire: the last temperature failed too, and an earlier decode was likelier\n"
     "            auto & last = state->decoders[best_decoder_id];\n"
     "            if ((last.failed || last.sequence.avg_logprobs < params.logprob_thold) &&\n"
     "                (last.failed || last.sequence.avg_logprobs < quire_best.avg_logprobs)) {\n"
     "                last.sequence = quire_best; last.seek_delta = quire_best_seek; last.failed = false;\n"
     "            }\n"
     "        }\n\n"
     "        // output results through a user-provided callback\n        {\n"
     "            const auto & best_decoder = state->decoders[best_decoder_id];\n"),
)
# ggml 1.4.1 has no WebAssembly SIMD for q8_0 x q8_0 (q5_0 has): the same sums, 16 lanes at a time.
Q8_SIMD_ANCHOR = ("#else\n    // scalar\n    float sumf = 0.0;\n\n    for (int i = 0; i < nb; i++) {\n"
                  "        const int8_t * restrict x0 = x[i].qs;\n        const int8_t * restrict y0 = y[i].qs;\n")
Q8_SIMD = """#elif defined(__wasm_simd128__)
    // Quire: q8_0 x q8_0 in WebAssembly SIMD, as the q5_0 path above (int8 -> int16, dot to int32)
    v128_t sumv = wasm_f32x4_splat(0.0f);
    for (int i = 0; i < nb; i++) {
        const v128_t x0 = wasm_v128_load(x[i].qs);
        const v128_t x1 = wasm_v128_load(x[i].qs + 16);
        const v128_t y0 = wasm_v128_load(y[i].qs);
        const v128_t y1 = wasm_v128_load(y[i].qs + 16);
        const v128_t p = wasm_i32x4_add(
            wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(x0), wasm_i16x8_extend_low_i8x16(y0)),
                           wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(x0), wasm_i16x8_extend_high_i8x16(y0))),
            wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(x1), wasm_i16x8_extend_low_i8x16(y1)),
                           wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(x1), wasm_i16x8_extend_high_i8x16(y1))));
        sumv = wasm_f32x4_add(sumv, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(p), wasm_f32x4_splat(x[i].d*y[i].d)));
    }

    *s = wasm_f32x4_extract_lane(sumv, 0) + wasm_f32x4_extract_lane(sumv, 1) +
         wasm_f32x4_extract_lane(sumv, 2) + wasm_f32x4_extract_lane(sumv, 3);
"""


class CompileError(RuntimeError):
    """Emscripten is missing or failed; the message says what to do."""


def flags() -> list[str]:
    """Compile flags shared by every translation unit."""
    return ["-O3", "-msimd128", "-DNDEBUG"]


def link_flags() -> list[str]:
    return ["-sMODULARIZE=1", f"-sEXPORT_NAME={EXPORT_NAME}", "-sALLOW_MEMORY_GROWTH=1",
            "-sINITIAL_MEMORY=64MB", "-sENVIRONMENT=worker", "-sDYNAMIC_EXECUTION=0", "-sFILESYSTEM=0",
            "-sEXPORTED_FUNCTIONS=_malloc,_free,_qv_init,_qv_init_state,_qv_detect,_qv_transcribe,_qv_free",
            "-sEXPORTED_RUNTIME_METHODS=UTF8ToString,stringToUTF8"]


def whisper_sources(sdist: bytes, prefix: str) -> dict[str, bytes]:
    """whisper.cpp's four files from the sdist, with the two knobs, the fallback's choice and q8_0 SIMD added."""
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
    for anchor, patched in NO_TIMESTAMPS_PATCHES + BEST_DECODE_PATCHES:
        if text.count(anchor) != 1:
            raise CompileError("whisper.cpp in the sdist is not the pinned version: a decoding patch does not apply")
        text = text.replace(anchor, patched)
    ggml = files["ggml.c"].decode()
    if ggml.count(Q8_SIMD_ANCHOR) != 1:
        raise CompileError("ggml.c in the sdist is not the pinned version: the q8_0 SIMD patch does not apply")
    files["ggml.c"] = ggml.replace(Q8_SIMD_ANCHOR, Q8_SIMD + Q8_SIMD_ANCHOR).encode()
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
