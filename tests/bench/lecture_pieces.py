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
- the same padded pieces with timestamps, and the pieces unpadded with timestamps.

If the padded pieces score as the whole recording does, cutting the lecture is not what the tab
loses; the rest lies in whisper.cpp 1.4.1 or in the browser's decoding and resampling.
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
        loads.append(provenance.load())
    rows = [{"how": how, "wer": voice_clips.corpus_wer([script], [text]), "text": text} for how, text in texts.items()]
    rows.append({"how": "the tab (whisper.cpp 1.4.1 in WebAssembly, lectures.py)", "wer": voice_clips.corpus_wer([script], [row["text"]]),
                 "text": row["text"]})
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


if __name__ == "__main__":
    sys.exit(main())
