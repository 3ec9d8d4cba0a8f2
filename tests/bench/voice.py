"""Voice benchmark (issue 17): engine load time, real-time factor in the tab against
CPython's faster-whisper on the same clips, word error rates, voice pack size.

    python tests/bench/voice.py [--dist DIR] [--out FILE]

Builds the bundle into a temporary folder (or uses --dist), serves it with serve.py,
makes the espeak-ng clips of tests/voice_clips.py plus one ~10 s question, and times
QuireVoice.transcribe in real Chromium (the engine loaded once first, timed apart).
The real-time factor is transcription seconds / audio seconds (below 1: faster than
speech).  The reference runs the same weights on one CPU thread, greedy, as the tab.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

import build  # noqa: E402
import provenance  # noqa: E402
import voice_clips  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer  # noqa: E402

LONG = ("Could you explain how mitochondria produce energy for the cell, and why the cell "
        "divides by mitosis into two identical cells?")  # about 10 s at espeak-ng's 150 words a minute

LOAD = """async () => { const t0 = performance.now(); await QuireVoice.load(); return performance.now() - t0; }"""
TRANSCRIBE = """async (b64) => {
    const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
    const decoded = await new OfflineAudioContext(1, 1, 16000).decodeAudioData(bytes.buffer);
    const pcm = await QuireVoice.toMono16k(decoded);
    const t0 = performance.now();
    const r = await QuireVoice.transcribe(pcm);
    return {text: r.text, seconds: (performance.now() - t0) / 1000};
}"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "voice.json")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    machine, loads = provenance.machine(), [provenance.load()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        dist = args.dist
        if dist is None:
            dist = tmp / "dist"
            assert build.main(["--dist", str(dist)]) == 0
        manifest = json.loads((dist / "manifest.json").read_text())
        pack_bytes = sum(f["size"] for n, f in manifest["files"].items() if n.startswith("assets/pack/voice/"))
        clips = voice_clips.make_clips(tmp)
        clips["long"] = voice_clips.speech_clip(LONG, tmp / "long.wav")
        pins = tomllib.load(open(ROOT / "pyproject.toml", "rb"))["tool"]["quire"]["voice"]
        model = voice_clips.model_dir(build.DEFAULT_CACHE / "downloads" / pins["model_file"], tmp / "ct2")
        reference = voice_clips.reference_transcripts(model, clips, threads=1)
        loads.append(provenance.load())
        server = StaticServer(dist).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page()
                page.set_default_timeout(900_000)
                page.goto(server.url)
                page.wait_for_function("() => window.quire && window.quire.loadAsset")
                load_ms = page.evaluate(LOAD)
                tab = {n: page.evaluate(TRANSCRIBE, base64.b64encode(c.read_bytes()).decode()) for n, c in clips.items()}
                browser.close()
        finally:
            server.stop()
    loads.append(provenance.load())
    speech = [n for n in clips if n not in voice_clips.NOISE_ONLY]
    truths = [voice_clips.truth(n) if n != "long" else LONG for n in speech]
    rows = []
    print(f"{'clip':14} {'audio s':>7} {'tab s':>7} {'tab RTF':>7} {'py s':>7} {'py RTF':>7}  tab | reference")
    for n in clips:
        a = reference[n]["audio_seconds"]
        row = {"clip": n, "audio_seconds": a, "tab_seconds": tab[n]["seconds"], "tab_rtf": tab[n]["seconds"] / a,
               "cpython_seconds": reference[n]["seconds"], "cpython_rtf": reference[n]["seconds"] / a,
               "tab_text": tab[n]["text"], "cpython_text": reference[n]["text"]}
        rows.append(row)
        print(f"{n:14} {a:7.2f} {row['tab_seconds']:7.2f} {row['tab_rtf']:7.2f} {row['cpython_seconds']:7.2f} "
              f"{row['cpython_rtf']:7.2f}  {row['tab_text']!r} | {row['cpython_text']!r}")
    result = {
        "machine": {**machine, "platform": platform.platform()}, "load": loads,
        "engine_load_ms": load_ms, "voice_pack_bytes": pack_bytes, "bundle_bytes": manifest["total_bytes"],
        "voice_pack_files": {n: f["size"] for n, f in manifest["files"].items() if n.startswith("assets/pack/voice/")},
        "bundle_bytes_without_voice": manifest["total_bytes"] - pack_bytes,
        "tab_wer": voice_clips.corpus_wer(truths, [tab[n]["text"] for n in speech]),
        "cpython_wer": voice_clips.corpus_wer(truths, [reference[n]["text"] for n in speech]),
        "clips": rows, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(f"engine load {load_ms / 1000:.1f} s; voice pack {pack_bytes / 1e6:.1f} MB; bundle {manifest['total_bytes'] / 1e6:.1f} MB "
          f"({result['bundle_bytes_without_voice'] / 1e6:.1f} MB without voice); WER tab {result['tab_wer']:.3f}, "
          f"CPython {result['cpython_wer']:.3f}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
