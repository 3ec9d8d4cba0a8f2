"""Recorded-lecture benchmark (issue 28): a ~10-minute and a ~3-minute English recording staged
and trained in headless Chromium through window.quire, against faster-whisper on CPython.

    python tests/bench/lectures.py [--dist DIR] [--out FILE] [--minutes 10 3]
    python tests/bench/lectures.py --dist DIR --long 90    # then: memory of a 90-minute file

The second form stages an M-minute lecture and trains it whole: Whisper transcribes its first
piece, and a stand-in answers the rest at once, so every cut of the file is decoded as in a real
Train (minutes, not the hour Whisper would take); it adds the memory timeline to the existing
result file as "long" ("long_german", "long_video", "long_firefox" with --german, --video-kbps N,
--engine firefox).  The first form rewrites the file but keeps those rows.

Per recording it measures: Train seconds / audio seconds (real-time factor) and, from wrappers
around the page's ``_pageMethods.transcribe`` and ``QuireVoice.transcribe``, the seconds spent
in Whisper alone; the peak memory of the tab's Chromium processes (sum of RSS, and of PSS from
/proc/PID/smaps_rollup, of the browser process and all its children, sampled every 0.5 s while
Train runs); the time from ``quire.stage`` to the first ``quire.search`` hit for the opening
sentence (polled once a second while Train runs) and to the first transcribed piece; and the
word error rate of the tab's transcript and of faster-whisper's (same tiny.en weights, one
thread, greedy) against the known script.

The recording: espeak-ng speaks a unique opening sentence and the sentences of
tests/test_lectures_browser.py, laid end to end with 1.2 s gaps, repeated until the length is
reached, then ffmpeg encodes it to Opus at 64 kb/s (as the browser test does).  The CPython
reference transcribes ffmpeg's 16 kHz decoding of that same Opus file.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

import numpy as np
import psutil

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(HERE.parent))

import build  # noqa: E402
import provenance  # noqa: E402
import voice_clips  # noqa: E402
from conftest import CHROMIUM, CHROMIUM_ARGS, StaticServer, wait_ready  # noqa: E402
from test_lectures_browser import GAP_S, RATE, SENTENCES  # noqa: E402

OPENING = "Welcome to this lecture about living cells and the rocks of our planet."
PHRASE = "welcome lecture living cells rocks planet"

# Page side, before staging: every piece the page transcribes is timed (whole page method, and
# Whisper alone), and Train's progress events are kept with their time.
WRAP = """() => {
  window.__pieces = []; window.__whisper = [];
  const real = quire._pageMethods.transcribe;
  quire._pageMethods.transcribe = (a) => {
    const t0 = performance.now();
    return Promise.resolve(real(a)).then(r => {
      if (!r.needData) window.__pieces.push({piece: a.piece, t0, t1: performance.now(), text: r.text,
                                             start: r.start, end: r.end, silent: r.silent});
      return r;
    });
  };
  const whisper = QuireVoice.transcribe;
  QuireVoice.transcribe = (pcm, opts) => {
    const t0 = performance.now();
    return Promise.resolve(whisper(pcm, opts)).then(r => { window.__whisper.push({t0, t1: performance.now(), ms: r && r.ms}); return r; });
  };
}"""
PUT = "(b64) => { window.__bytes = Uint8Array.fromBase64(b64); }"
# Stage, Train, and poll search for the opening sentence once a second until Train ends.
RUN = """async ([name, phrase]) => {
  const out = window.__run = {events: [], polls: [], done: false};
  const t0 = out.t0 = performance.now();
  await quire.stage([{name, data: window.__bytes}]);
  window.__bytes = null;
  out.staged = performance.now();
  const train = quire.train({onProgress: e => out.events.push({t: performance.now(), stage: e.stage, done: e.done, total: e.total})})
    .then(c => { out.counts = c; }, err => { out.error = String(err && err.message || err); })
    .finally(() => { out.trained = performance.now(); out.done = true; });
  (async () => {
    while (!out.done && out.first_hit === undefined) {
      const a = performance.now();
      let hits = [];
      try { hits = await quire.search(phrase, {k: 5}); } catch (e) { out.search_error = String(e); }
      const b = performance.now();
      out.polls.push({t: a, ms: b - a, hit: hits.some(h => h.source === name)});
      if (hits.some(h => h.source === name)) { out.first_hit = b; break; }
      await new Promise(r => setTimeout(r, 1000));
    }
  })();
  await train;
  const a = performance.now();
  const hits = await quire.search(phrase, {k: 5});
  out.after = {t: performance.now(), ms: performance.now() - a, hit: hits.some(h => h.source === name),
               top: hits.slice(0, 1).map(h => [h.source, h.location_label, h.text.slice(0, 80)])};
  if (out.first_hit === undefined && out.after.hit) out.first_hit = out.after.t;
  return true;
}"""


def make_lecture(folder: Path, minutes: float, clips: list[tuple[str, np.ndarray]]) -> tuple[Path, str, float]:
    """``(opus file, script, seconds)``: the opening, then the sentences over and over, 1.2 s apart."""
    target = minutes * 60
    audio, said, at = [np.zeros(int(RATE * 0.8), np.float32)], [], 0.8
    i = 0
    while at < target:
        text, clip = clips[0] if i == 0 else clips[1 + (i - 1) % (len(clips) - 1)]
        audio += [clip, np.zeros(int(RATE * GAP_S), np.float32)]
        said.append(text)
        at += len(clip) / RATE + GAP_S
        i += 1
    wav = folder / f"lecture-{minutes:g}min.wav"
    voice_clips.write_wav(wav, np.concatenate(audio))
    opus = wav.with_suffix(".opus")
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(wav), "-c:a", "libopus", "-b:a", "64k", str(opus)], check=True)
    return opus, " ".join(said), at, wav


def sentence_clips(folder: Path) -> list[tuple[str, np.ndarray]]:
    out = []
    for i, text in enumerate([OPENING] + SENTENCES):
        raw, wav = folder / f"s{i}.raw.wav", folder / f"s{i}.wav"
        subprocess.run(["espeak-ng", "-s", "150", "-w", str(raw), text], check=True)
        subprocess.run(["sox", str(raw), "-r", str(RATE), "-c", "1", "-b", "16", str(wav)], check=True)
        out.append((text, voice_clips.read_wav(wav)))
    return out


def german_clips(folder: Path) -> list[tuple[str, np.ndarray]]:
    """The six sentences of a real German speaker (tests/fixtures/speech/thorsten-de.mp3, CC0), cut
    where they were said, for a German lecture (``--german``)."""
    speech = ROOT / "tests" / "fixtures" / "speech"
    wav = folder / "thorsten-de.wav"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(speech / "thorsten-de.mp3"), "-ac", "1", "-ar", str(RATE),
                    "-c:a", "pcm_s16le", str(wav)], check=True)
    audio = voice_clips.read_wav(wav)
    said = json.loads((speech / "thorsten-de.json").read_text())["said"]
    return [(text, audio[int(start * RATE):int(end * RATE)]) for text, start, end in said]


class Sampler(threading.Thread):
    """Sum of RSS and PSS of the Chromium started with ``profile`` and all its children, every 0.5 s."""

    def __init__(self, profile: Path | None, root=None):
        super().__init__(daemon=True)
        self.flag, self.samples, self.stop_at = f"--user-data-dir={profile}", [], None
        self.mark = "idle"
        self.known = root  # a browser started otherwise (Firefox): its parent process

    def root(self):
        if self.known is not None:
            return self.known if self.known.is_running() else None
        for p in psutil.process_iter(["cmdline", "ppid"]):
            cmd = p.info["cmdline"] or []
            if self.flag in cmd and not any(c.startswith("--type=") for c in cmd):
                return p
        return None

    def sample(self):
        root = self.root()
        if root is None:
            return None
        rss = pss = 0
        kinds = {}  # PSS per kind of process: renderer (the tab and its workers), browser, gpu-process, utility
        procs = [root] + root.children(recursive=True)
        for p in procs:
            try:
                rss += p.memory_info().rss
                cmd = p.cmdline()  # Chromium: --type=renderer; Firefox: -contentproc ... tab
                kind = next((c.split("=", 1)[1] for c in cmd if c.startswith("--type=")), None) or \
                    (cmd[-1] if "-contentproc" in cmd else "browser")
                with open(f"/proc/{p.pid}/smaps_rollup") as f:
                    for line in f:
                        if line.startswith("Pss:"):
                            pss += int(line.split()[1]) * 1024
                            kinds[kind] = kinds.get(kind, 0) + int(line.split()[1]) * 1024
                            break
            except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError, PermissionError):
                pass
        return {"t": time.monotonic(), "rss": rss, "pss": pss, "procs": len(procs), "mark": self.mark, "kinds": kinds}

    def run(self):
        while self.stop_at is None:
            s = self.sample()
            if s:
                self.samples.append(s)
            time.sleep(0.5)


def run_tab(p, url: str, name: str, path: Path, audio_s: float, tmp: Path) -> dict:
    profile = tmp / f"profile-{name}"
    ctx = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    sampler = Sampler(profile)
    sampler.start()
    try:
        page = ctx.new_page()
        page.set_default_timeout(1_500_000)
        page.goto(url)
        wait_ready(page)
        page.evaluate(WRAP)
        time.sleep(2)
        idle = [s for s in sampler.samples if s["mark"] == "idle"]
        page.evaluate(PUT, base64.b64encode(path.read_bytes()).decode())
        sampler.mark = "train"
        page.evaluate(RUN, [name, PHRASE])
        sampler.mark = "after"
        run = page.evaluate("window.__run")
        pieces = page.evaluate("window.__pieces")
        whisper = page.evaluate("window.__whisper")
        sources = page.evaluate("quire.sources()")
        time.sleep(1)
    finally:
        sampler.stop_at = time.monotonic()
        sampler.join()
        ctx.close()
    t0 = run["t0"]
    train_s = (run["trained"] - run["staged"]) / 1000
    whisper_s = sum(w["t1"] - w["t0"] for w in whisper) / 1000
    first_piece = min((x["t1"] for x in pieces), default=None)
    during = [s for s in sampler.samples if s["mark"] == "train"]
    pieces.sort(key=lambda x: x["piece"])
    return {
        "file": path.name, "file_bytes": path.stat().st_size, "audio_seconds": audio_s,
        "status": [s.get("status") for s in sources], "counts": run.get("counts"), "error": run.get("error"),
        "stage_seconds": (run["staged"] - t0) / 1000, "train_seconds": train_s, "train_rtf": train_s / audio_s,
        "whisper_calls": len(whisper), "whisper_seconds": whisper_s, "whisper_rtf": whisper_s / audio_s,
        "first_whisper_call_seconds": (whisper[0]["t1"] - whisper[0]["t0"]) / 1000 if whisper else None,
        "worker_ms_seconds": sum(w["ms"] or 0 for w in whisper) / 1000,  # the voice worker's own figure (r.ms), when it gives one
        "whisper_call_seconds": [round((w["t1"] - w["t0"]) / 1000, 2) for w in whisper],
        "pieces": len(pieces),
        "search_after_train": run.get("after"),
        "search_hit_only_after_train": bool(run.get("first_hit")) and run["first_hit"] >= run["trained"],
        "piece_method_seconds": sum(x["t1"] - x["t0"] for x in pieces) / 1000,
        "stage_to_first_piece_seconds": (first_piece - t0) / 1000 if first_piece else None,
        "stage_to_first_search_hit_seconds": (run["first_hit"] - t0) / 1000 if run.get("first_hit") else None,
        "stage_to_trained_seconds": (run["trained"] - t0) / 1000,
        "search_polls": len(run["polls"]), "search_poll_ms_max": max((x["ms"] for x in run["polls"]), default=None),
        "search_polls_detail": run["polls"][:5] + run["polls"][-3:],
        "search_error": run.get("search_error"),
        "progress_events": run["events"][:3] + run["events"][-3:], "progress_event_count": len(run["events"]),
        "transcribe_progress_events": [e for e in run["events"] if e["stage"] == "transcribe"][:3],
        "idle_rss_bytes": max((s["rss"] for s in idle), default=None),
        "idle_pss_bytes": max((s["pss"] for s in idle), default=None),
        "peak_rss_bytes": max((s["rss"] for s in during), default=None),
        "peak_pss_bytes": max((s["pss"] for s in during), default=None),
        "memory_samples": len(during), "max_processes": max((s["procs"] for s in during), default=None),
        "text": " ".join(x["text"].strip() for x in pieces),
        "piece_spans": [(round(x["start"], 1), round(x["end"], 1)) for x in pieces],
    }


# Stage and Train the whole recording: Whisper hears the first piece, then a stand-in answers at
# once with a fixed English text, so every cut of the file is decoded in the time it takes (the
# part of memory that grows with length) without 40 minutes of Whisper (``--long``).  The peak
# while Whisper transcribes the first piece is kept apart.
FIRST_PIECE = """async ([name]) => {
  const out = window.__run = {events: []};
  const t0 = out.t0 = performance.now();
  await quire.stage([window.__bytes]);
  window.__bytes = null;
  out.staged = performance.now();
  const whisper = QuireVoice.transcribe;
  const said = 'the cell makes energy while the heart pumps blood through every organ and rivers carry sand down to ' +
    'a sea where it settles in layers of rock that glaciers later carve into wide valleys under cold mountains';
  const gesagt = 'die Zelle gewinnt Energie während das Herz das Blut durch jedes Organ pumpt und die Flüsse tragen den Sand ' +
    'in ein Meer wo er sich in Schichten aus Stein ablagert die später von Gletschern zu weiten Tälern geformt werden';
  QuireVoice.transcribe = (pcm, opts) => {
    if (out.first === undefined) {
      out.first = null;
      return whisper(pcm, opts).then(r => { out.first = performance.now(); return r; });
    }
    return Promise.resolve({text: opts && opts.language === 'de' ? gesagt : said, silent: false});
  };
  out.message = await quire.train({onProgress: e => {
    out.events.push({t: performance.now(), stage: e.stage, done: e.done}); }})
    .then(c => JSON.stringify(c), err => String(err && err.message || err));
  QuireVoice.transcribe = whisper;
  out.stopped = performance.now();
  return true;
}"""


PUT_FILE = "async ([url, name]) => { const r = await fetch(url); window.__bytes = new File([await r.blob()], name); }"


def run_long(p, url: str, name: str, path: Path, audio_s: float, tmp: Path, engine: str = "chromium") -> dict:
    """Memory of a long recording's decode and first piece (Chromium, or ``engine`` "firefox")."""
    if engine == "firefox":
        from engines import open_engine

        with open_engine("firefox", tmp / "firefox-long") as b:
            b.goto(url)
            b.wait_ready()
            sampler = Sampler(None, root=psutil.Process(b.proc.pid))
            sampler.start()
            try:
                run, pieces, idle = drive_long(lambda fn, arg=None: b.run(fn, arg), sampler, url, name)
            finally:
                sampler.stop_at = time.monotonic()
                sampler.join()
        return long_row(sampler, run, pieces, idle, path, audio_s) | {"engine": b.version}
    profile = tmp / f"profile-{name}"
    ctx = p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    sampler = Sampler(profile)
    sampler.start()
    try:
        page = ctx.new_page()
        page.set_default_timeout(1_500_000)
        page.goto(url)
        wait_ready(page)
        run, pieces, idle = drive_long(page.evaluate, sampler, url, name)
    finally:
        sampler.stop_at = time.monotonic()
        sampler.join()
        ctx.close()
    return long_row(sampler, run, pieces, idle, path, audio_s) | {"engine": "Chromium"}


def drive_long(evaluate, sampler, url: str, name: str):
    """The recording fetched as a File (as a drop gives it, not base64 through the driver), staged and
    trained: ``(run, pieces, idle samples)``."""
    evaluate(WRAP)
    time.sleep(2)
    idle = [s for s in sampler.samples if s["mark"] == "idle"]
    evaluate(PUT_FILE, [url.rstrip("/") + "/" + name, name])
    sampler.mark = "train"
    evaluate(FIRST_PIECE, [name])
    sampler.mark = "after"
    return evaluate("() => window.__run"), evaluate("() => window.__pieces"), idle


def long_row(sampler, run: dict, pieces: list, idle: list, path: Path, audio_s: float) -> dict:
    during = [s for s in sampler.samples if s["mark"] == "train"]
    t0 = run["t0"]
    # the monotonic clock the sampler uses is not the page's: the first piece's end is placed by
    # the count of samples taken until then (one every 0.5 s)
    first_end = (run["first"] - t0) / 1000 if run.get("first") else None
    first = [s for s in during if s["t"] - during[0]["t"] <= first_end] if first_end and during else []
    return {"file": path.name, "file_bytes": path.stat().st_size, "audio_seconds": audio_s, "message": run["message"],
            "stage_seconds": (run["staged"] - t0) / 1000,
            "stage_to_first_piece_seconds": (min(x["t1"] for x in pieces) - t0) / 1000 if pieces else None,
            "first_piece_method_seconds": (pieces[0]["t1"] - pieces[0]["t0"]) / 1000 if pieces else None,
            "pieces": len(pieces),
            "stage_to_done_seconds": (run["stopped"] - t0) / 1000,
            "idle_rss_bytes": max((s["rss"] for s in idle), default=None),
            "idle_pss_bytes": max((s["pss"] for s in idle), default=None),
            "first_piece_peak_rss_bytes": max((s["rss"] for s in first), default=None),
            "first_piece_peak_pss_bytes": max((s["pss"] for s in first), default=None),
            "peak_rss_bytes": max((s["rss"] for s in during), default=None),
            "peak_pss_bytes": max((s["pss"] for s in during), default=None),
            "memory_samples": len(during), "progress_events": run["events"][:4],
            # where the peak was: MB PSS per kind of process at the sample with the most
            "peak_pss_mb_by_kind": {k: round(v / 1e6) for k, v in max(during, key=lambda s: s["pss"])["kinds"].items()} if during else None,
            # the samples from staging on: seconds since the first, MB RSS, MB PSS (every 0.5 s)
            "memory_timeline": [(round(s["t"] - during[0]["t"], 1), round(s["rss"] / 1e6), round(s["pss"] / 1e6))
                                for s in sampler.samples if s["mark"] != "idle" and during]}


def long_only(args) -> int:
    """``--long M``: an M-minute lecture staged and trained whole, Whisper on its first piece and a
    stand-in after it (every cut decoded); added to the result file as ``long``."""
    from playwright.sync_api import sync_playwright

    loads = [provenance.load()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        clips = german_clips(tmp) if args.german else sentence_clips(tmp)
        opus, _, seconds, wav = make_lecture(tmp, args.long, clips)
        if args.video_kbps:  # a lecture video as a meeting app saves it: a picture track and AAC sound
            opus = wav.with_suffix(".mp4")
            subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=640x360:r=10", "-i", str(wav),
                            "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-b:v", f"{args.video_kbps}k",
                            "-c:a", "aac", "-b:a", "96k", str(opus)], check=True)
        wav.unlink()
        served = args.dist / opus.name  # served beside the page, fetched as a File
        shutil.copyfile(opus, served)
        server = StaticServer(args.dist).start()
        try:
            with sync_playwright() as p:
                print(f"tab, Whisper on the first piece: {opus.name} ({seconds:.0f} s, {opus.stat().st_size / 1e6:.1f} MB) ...", flush=True)
                row = run_long(p, server.url, opus.name, opus, seconds, tmp, args.engine)
        finally:
            server.stop()
            served.unlink()
    loads.append(provenance.load())
    row["load"] = loads
    row["machine"] = provenance.machine()
    mb = lambda b: f"{b / 1e6:.0f}" if b else "-"  # noqa: E731
    print(f"{row['file']}: stage to first piece {row['stage_to_first_piece_seconds']:.1f} s, to done {row['stage_to_done_seconds']:.1f} s "
          f"({row['pieces']} pieces); peak RSS / PSS {mb(row['peak_rss_bytes'])} / {mb(row['peak_pss_bytes'])} MB, while Whisper "
          f"heard the first piece {mb(row['first_piece_peak_rss_bytes'])} / {mb(row['first_piece_peak_pss_bytes'])} MB (idle "
          f"{mb(row['idle_rss_bytes'])} / {mb(row['idle_pss_bytes'])} MB); {row['message'][:120]}")
    result = json.loads(args.out.read_text())
    result["long" + ("_video" if args.video_kbps else "") + ("_german" if args.german else "")
           + ("" if args.engine == "chromium" else "_" + args.engine)] = row
    args.out.write_text(json.dumps(result, indent=1))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dist", type=Path)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "lectures.json")
    parser.add_argument("--minutes", type=float, nargs="+", default=[10, 3])
    parser.add_argument("--long", type=float, help="only: this many minutes, decoded and first piece, memory (needs --dist)")
    parser.add_argument("--engine", choices=("chromium", "firefox"), default="chromium", help="with --long: the browser")
    parser.add_argument("--german", action="store_true", help="with --long: the lecture in German (a real speaker's six sentences over and over)")
    parser.add_argument("--video-kbps", type=int, help="with --long: the lecture as an MP4 video with a picture of this bitrate")
    args = parser.parse_args()
    if args.long:
        return long_only(args)
    from playwright.sync_api import sync_playwright

    machine, loads = provenance.machine(), [provenance.load()]
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        dist = args.dist
        if dist is None:
            dist = tmp / "dist"
            assert build.main(["--dist", str(dist)]) == 0
        clips = sentence_clips(tmp)
        lectures = {f"lecture-{m:g}min.opus": make_lecture(tmp, m, clips) for m in args.minutes}
        pins = tomllib.load(open(ROOT / "pyproject.toml", "rb"))["tool"]["quire"]["voice"]
        model = voice_clips.model_dir(build.DEFAULT_CACHE / "downloads" / pins["model_file"], tmp / "ct2")
        decoded = {}
        for name, (opus, _, _, _) in lectures.items():
            wav = tmp / (name + ".16k.wav")
            subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(opus), "-ac", "1", "-ar", "16000", str(wav)], check=True)
            decoded[name] = wav
        loads.append(provenance.load())
        print("CPython reference (faster-whisper, 1 thread) ...", flush=True)
        reference = voice_clips.reference_transcripts(model, decoded, threads=1)
        reference_wav = voice_clips.reference_transcripts(model, {n: v[3] for n, v in lectures.items()}, threads=1)
        loads.append(provenance.load())
        server = StaticServer(dist).start()
        tab = {}
        try:
            with sync_playwright() as p:
                for name, (opus, _, seconds, _) in lectures.items():
                    print(f"tab: {name} ({seconds:.0f} s) ...", flush=True)
                    tab[name] = run_tab(p, server.url, name, opus, seconds, tmp)
                    loads.append(provenance.load())
        finally:
            server.stop()
    rows = []
    print(f"{'file':20} {'audio s':>7} {'train s':>7} {'RTF':>5} {'whisper RTF':>11} {'py RTF':>6} {'1st hit s':>9} "
          f"{'1st piece s':>11} {'peak RSS MB':>11} {'peak PSS MB':>11} {'idle RSS MB':>11} {'WER tab':>7} {'WER py':>6}")
    for name, (opus, script, seconds, _) in lectures.items():
        t, r = tab[name], reference[name]
        row = {**t, "cpython_seconds": r["seconds"], "cpython_audio_seconds": r["audio_seconds"],
               "cpython_rtf": r["seconds"] / r["audio_seconds"], "cpython_text": r["text"],
               "tab_wer": voice_clips.corpus_wer([script], [t["text"]]),
               "cpython_wer": voice_clips.corpus_wer([script], [r["text"]]),
               "cpython_wav_wer": voice_clips.corpus_wer([script], [reference_wav[name]["text"]]),
               "cpython_wav_rtf": reference_wav[name]["seconds"] / reference_wav[name]["audio_seconds"],
               "cpython_wav_text": reference_wav[name]["text"],
               "script_words": len(voice_clips.words(script)), "script": script}
        rows.append(row)
        mb = lambda b: f"{b / 1e6:11.0f}" if b else f"{'-':>11}"  # noqa: E731
        hit = f"{t['stage_to_first_search_hit_seconds']:9.1f}" if t["stage_to_first_search_hit_seconds"] else f"{'-':>9}"
        fp = f"{t['stage_to_first_piece_seconds']:11.1f}" if t["stage_to_first_piece_seconds"] else f"{'-':>11}"
        print(f"{name:20} {seconds:7.1f} {t['train_seconds']:7.1f} {t['train_rtf']:5.2f} {t['whisper_rtf']:11.2f} "
              f"{row['cpython_rtf']:6.2f} {hit} {fp} {mb(t['peak_rss_bytes'])} {mb(t['peak_pss_bytes'])} "
              f"{mb(t['idle_rss_bytes'])} {row['tab_wer']:7.3f} {row['cpython_wer']:6.3f} {row['cpython_wav_wer']:6.3f}")
    result = {"machine": {**machine, "platform": platform.platform()}, "load": loads,
              "wall_seconds": time.monotonic() - t_start, "phrase": PHRASE, "recordings": rows,
              "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; wall {result['wall_seconds']:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out.exists():  # the 90-minute rows (--long) stay until they are measured again
        result.update({k: v for k, v in json.loads(args.out.read_text()).items() if k.startswith("long")})
    args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
