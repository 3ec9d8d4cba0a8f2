"""Where the tab's lecture word error rate is lost (issue 28): faster-whisper on CPython, given the
tab's own pieces, against the whole recording.

    python tests/bench/lecture_pieces.py [--minutes 3] [--out FILE]

Run after tests/bench/lectures.py, whose result file holds the tab's transcript and the spans of
the pieces the page cut (``piece_spans``) for each recording.  The same espeak-ng lecture is made
again (espeak-ng and ffmpeg give the same audio), decoded by ffmpeg to 16 kHz, and transcribed by
faster-whisper (same tiny.en weights, one thread, greedy, no temperature fallback):

- whole: the recording at once, as lectures.py's reference;
- pieces as the tab hands them to Whisper: each of the tab's spans padded with silence to 30 s and
  decoded without timestamps (the tab's whisper.cpp call is ``single_segment``);
- the same padded pieces with timestamps, and the pieces unpadded with timestamps;
- with ``--dist DIR``: the samples the tab itself hands to Whisper (the page's decode and resample
  of the Opus file, caught in headless Chromium as they go by), each decoded by faster-whisper
  without timestamps, beside the tab's own transcript of the same run.

If the padded pieces score as the whole recording does, cutting the lecture is not what the tab
loses.  If faster-whisper on the tab's own samples scores as on ffmpeg's, the rest is whisper.cpp
1.4.1 against CTranslate2, not the browser's decoding.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import base64  # noqa: E402

import build  # noqa: E402
import lectures  # noqa: E402
import provenance  # noqa: E402
import voice_clips  # noqa: E402

WINDOW = 30 * 16000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=3)
    parser.add_argument("--tab", type=Path, default=HERE / "results" / "lectures.json")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "lecture_pieces.json")
    parser.add_argument("--dist", type=Path, help="also run the lecture in Chromium from this build, keeping what Whisper is given")
    args = parser.parse_args()
    from faster_whisper import WhisperModel

    tab = json.loads(args.tab.read_text())
    row = next(r for r in tab["recordings"] if r["file"] == f"lecture-{args.minutes:g}min.opus")
    loads = [provenance.load()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        opus, script, seconds, _ = lectures.make_lecture(tmp, args.minutes, lectures.sentence_clips(tmp))
        wav = tmp / "lecture.16k.wav"
        subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(opus), "-ac", "1", "-ar", "16000", str(wav)], check=True)
        audio = voice_clips.read_wav(wav)
        pins = tomllib.load(open(ROOT / "pyproject.toml", "rb"))["tool"]["quire"]["voice"]
        model = WhisperModel(str(voice_clips.model_dir(build.DEFAULT_CACHE / "downloads" / pins["model_file"], tmp / "ct2")),
                             device="cpu", compute_type="float32", cpu_threads=1)

        def heard(pcm: np.ndarray, **options) -> str:
            segments, _ = model.transcribe(pcm, language="en", beam_size=1, temperature=0.0, vad_filter=False,
                                           condition_on_previous_text=False, **options)
            return "".join(s.text for s in segments).strip()

        def pieces(pad: bool, **options) -> str:
            out = []
            for start, end in row["piece_spans"]:
                pcm = audio[int(start * 16000):int(end * 16000)]
                if pad and len(pcm) < WINDOW:
                    pcm = np.concatenate([pcm, np.zeros(WINDOW - len(pcm), np.float32)])
                out.append(heard(pcm, **options))
            return " ".join(out)

        t0 = time.monotonic()
        texts = {"whole recording": heard(audio),
                 "tab's pieces, padded to 30 s, no timestamps (as the tab)": pieces(True, without_timestamps=True),
                 "tab's pieces, padded to 30 s, timestamps": pieces(True),
                 "tab's pieces, unpadded, timestamps": pieces(False)}
        tab_run = tab_samples(args.dist, opus, tmp) if args.dist else None
        if tab_run:
            texts["the tab's own samples, no timestamps"] = " ".join(heard(pcm, without_timestamps=True) for pcm in tab_run["pcm"])
        loads.append(provenance.load())
    rows = [{"how": how, "wer": voice_clips.corpus_wer([script], [text]), "text": text} for how, text in texts.items()]
    rows.append({"how": "the tab (whisper.cpp 1.4.1 in WebAssembly, lectures.py)", "wer": voice_clips.corpus_wer([script], [row["text"]]),
                 "text": row["text"]})
    if tab_run:
        rows.append({"how": "the tab, this run (whisper.cpp 1.4.1 in WebAssembly)", "wer": voice_clips.corpus_wer([script], [tab_run["text"]]),
                     "text": tab_run["text"]})
    print(f"{'faster-whisper on':60} {'WER':>6}")
    for r in rows:
        print(f"{r['how']:60} {r['wer']:6.3f}")
    result = {"machine": provenance.machine(), "load": loads, "seconds": time.monotonic() - t0, "minutes": args.minutes,
              "audio_seconds": seconds, "tab_result": str(args.tab.relative_to(ROOT)), "tab_when": tab.get("when"),
              "piece_spans": row["piece_spans"], "rows": rows, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    return 0


def tab_samples(dist: Path, opus: Path, tmp: Path) -> dict:
    """Train the lecture in headless Chromium from ``dist``: {pcm: [what Whisper got, per piece], text}."""
    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, wait_ready

    server = StaticServer(dist).start()
    try:
        with sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(str(tmp / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                                       headless=True)
            page = ctx.new_page()
            page.set_default_timeout(1_500_000)
            page.goto(server.url)
            wait_ready(page)
            page.evaluate(voice_clips.HEARD_JS)
            page.evaluate("(b64) => quire.stage([{name: 'lecture.opus', data: Uint8Array.fromBase64(b64)}])",
                          base64.b64encode(opus.read_bytes()).decode())
            page.evaluate("quire.train()")
            source = page.evaluate("quire.sources()")[0]
            text = " ".join(c["text"] for c in page.evaluate("(id) => quire.chunks(id)", source["id"]))
            pcm = [voice_clips.heard_audio(h) for h in page.evaluate("window.heard")]
            ctx.close()
    finally:
        server.stop()
    return {"pcm": pcm, "text": text}


if __name__ == "__main__":
    sys.exit(main())
