"""Recorded lectures (issue 28) in Firefox ESR (over http) and WebKitGTK (Safari's engine, from
file://): a 31 s espeak-ng lecture of six sentences (two pieces) is staged through ``window.quire``, transcribed during Train by
Whisper tiny.en in the page; its first sentence is found by a search during the Train, once the
first piece is heard, and after it every sentence is found by search in a passage whose time span
holds the moment it was said (within 2 s), and the passage dialog's play button starts the
recording at that passage's first second; a video with no sound track and undecodable bytes fail
alone, with the app's reason, which names the formats every supported browser decodes; the
multilingual model guesses the lecture's language in each engine, and a 2 s clip of real German
speech (tests/fixtures/speech) is heard as German and transcribed by multilingual base.

Long recordings are decoded a few minutes at a time (site/assets/audio-split.js): cut into 5 s
pieces here, the lecture as MP3, Ogg/Opus and M4A decodes into samples that line up with the WAV
to the sample (M4A in Firefox: 23 ms early throughout, its AAC decoder's own delay).  Which formats each engine's ``decodeAudioData`` takes is asserted first, on one sentence: both
decode WAV, MP3, Ogg/Opus, WebM/Opus, M4A/AAC and FLAC here (Firefox ESR 153, WebKitGTK 2.50 with
GStreamer), so the lecture goes to Firefox as Ogg/Opus and to WebKit as MP3, and the "cannot
decode" path is shown with a picture-only WebM and with bytes that are no format at all; the
app's message names the file and the formats all three browsers decode, to convert to.

The recording helpers (sentences, gaps, slack, staging) are tests/test_lectures_browser.py's.
"""

from __future__ import annotations

import base64
import json
import math
import subprocess

import pytest

from conftest import copy_dist
from engines import missing, open_engine
from quire.transcripts import PIECE_S
import voice_clips
from test_lectures_browser import CUTS, SENTENCES, SLACK_S, SPEECH, STAGE, b64, check_cuts, spoken_lecture

pytestmark = pytest.mark.browser

SAID = SENTENCES[:6]  # about 31 s with the gaps: two pieces, so a span must point into the recording
LECTURE = {"firefox": "lecture.opus", "webkit": "lecture.mp3"}  # Ogg/Opus and MP3 (both decode either)
FORMATS = ("sentence.wav", "sentence.mp3", "sentence.opus", "sentence.webm", "sentence.m4a", "sentence.flac")
UNDECODABLE = ("this browser cannot decode it: it has no audio track, or its codec is not one this browser plays. Chromium, Firefox and Safari all decode MP3, "
               "M4A (AAC), Ogg or WebM (Opus), WAV and FLAC: convert the recording to one of them")

DECODE = """async (files) => { const out = {};
  for (const [name, data] of Object.entries(files)) {
    try { out[name] = (await new OfflineAudioContext(1, 1, 16000).decodeAudioData(Uint8Array.fromBase64(data).buffer)).duration; }
    catch (e) { out[name] = String(e && e.name || e); } }
  return out; }"""

# The passage dialog of a cited transcript passage: press its play button and wait for the
# recording to seek to the passage's first second (or fail): what the media element says then.
PLAY = """async ([chunk, text]) => {
  const got = {};
  const seen = new Promise(resolve => {
    const note = e => {
      if (!e.target.dataset || e.target.dataset.testid !== 'recording') return;
      got.src = e.target.src.slice(0, 5);
      got.duration = e.target.duration;
      if (e.type === 'seeked') got.seeked = e.target.currentTime; else got.error = String(e.target.error && e.target.error.message);
      resolve();
    };
    document.addEventListener('seeked', note, true);  // media events do not bubble
    document.addEventListener('error', note, true);
  });
  QuirePassage.open(chunk, text);
  let button;
  while (!(button = document.querySelector('[data-testid=play-recording]'))) await new Promise(r => setTimeout(r, 50));
  got.button = button.textContent;
  button.click();
  await seen;
  document.querySelector('[data-testid=passage-close]').click();
  return got; }"""


@pytest.fixture(scope="module")
def lecture(tmp_path_factory):
    """``(folder, [(sentence, start_s, end_s)], pieces)``: lecture.wav/.mp3/.opus, the first
    sentence as sentence.wav/.mp3/.opus/.webm/.m4a/.flac, and muted.webm (a picture, no sound)."""
    folder = tmp_path_factory.mktemp("lecture-engines")
    said, at = spoken_lecture(folder, SAID)
    ffmpeg = ["ffmpeg", "-loglevel", "error", "-y", "-i"]
    s0 = str(folder / "s0.wav")
    subprocess.run(["cp", s0, str(folder / "sentence.wav")], check=True)
    for name, codec in (("sentence.mp3", ["-ac", "2", "-ar", "44100", "-b:a", "96k"]), ("sentence.opus", ["-c:a", "libopus"]),
                        ("sentence.webm", ["-c:a", "libopus"]), ("sentence.m4a", ["-c:a", "aac"]), ("sentence.flac", [])):
        subprocess.run(ffmpeg + [s0] + codec + [str(folder / name)], check=True)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=160x120:d=5:r=10",
                    "-c:v", "libvpx", str(folder / "muted.webm")], check=True)
    return folder, said, math.ceil(at / PIECE_S)


# Firefox over http and WebKit from file:// (the USB-stick copy): Chromium's test_lectures_browser.py
# covers both ways, and all four pairs passed when this file was written (2026-12-06); two keep the
# suite under its 30 minutes.
@pytest.mark.parametrize("name,mode", [("firefox", "http"), ("webkit", "file")])
def test_a_lecture_trains_and_every_sentence_is_found_at_its_moment(name, mode, lecture, built_dist, serve, tmp_path):
    why = missing(name)
    if why:
        pytest.fail(f"{name} is needed for this tier and is missing here: {why}")
    folder, said, pieces = lecture
    recording = LECTURE[name]
    url = serve(built_dist).url if mode == "http" else (copy_dist(built_dist, tmp_path / "dist") / "index.html").as_uri()
    with open_engine(name, tmp_path) as b:
        b.goto(url)
        b.wait_ready()
        decoded = b.run(DECODE, {f: b64(folder / f) for f in FORMATS})
        cuts = b.run(CUTS, [{f: b64(folder / f) for f in ("lecture.wav", "lecture.mp3", "lecture.opus", "lecture.m4a")},
                            "lecture.wav", 5])
        b.run(STAGE, [recording, b64(folder / recording)])
        b.run(STAGE, ["muted.webm", b64(folder / "muted.webm")])
        b.run(STAGE, ["broken.mp3", base64.b64encode(bytes(range(256)) * 64).decode()])
        # Real German speech, a 2 s clip: guessed from its little sound and transcribed by base.
        b.run(STAGE, ["kurz.mp3", b64(SPEECH / "thorsten-de-short.mp3")])
        # Once the lecture's first piece is heard, a search during the Train finds its first sentence.
        counts, early = b.run("""async ([recording, first]) => { let early = null;
          const counts = await quire.train({onProgress: e => {
            if (e.stage !== 'transcribe' || e.file !== recording || e.done < 1 || e.done >= e.pieces || early) return;
            early = quire.search(first, {k: 20}); }});
          return [counts, early && await early]; }""", [recording, said[0][0]])
        sources = {s["name"]: s for s in b.run("async () => quire.sources()")}
        heard = [c["text"] for c in b.run("async (id) => quire.chunks(id)", sources[recording]["id"])] \
            if sources[recording]["status"] == "trained" else []
        clip = b.run("async (id) => quire.chunks(id)", sources["kurz.mp3"]["id"]) if sources["kurz.mp3"]["status"] == "trained" else []
        hits = {text: b.run("async (q) => quire.search(q, {k: 20})", text) for text, _, _ in said}
        # A cited moment plays: the passage dialog's button, pressed, loads the recording and seeks.
        cited = next((h for h in hits[said[-1][0]] if h["source"] == recording), None)
        played = b.run(PLAY, [cited["chunk_id"], said[-1][0]]) if cited else None
    print(json.dumps({"engine": b.version, "mode": mode, "decoded": decoded, "cuts": cuts, "counts": counts, "heard": heard}))

    # Decoded a few seconds at a time, MP3, Ogg/Opus and M4A line up with the sound; to the sample
    # but for Firefox's AAC decoder, which drops 1,024 samples (23 ms) at the start of every cut.
    check_cuts(cuts, ("lecture.mp3", "lecture.opus", "lecture.m4a"),
               exact=("lecture.mp3", "lecture.opus") + (("lecture.m4a",) if name == "webkit" else ()))

    # Every format tried decodes to the sentence's length (about 3.7 s; MP3 and AAC pad a little).
    for f in FORMATS:
        assert isinstance(decoded[f], (int, float)) and abs(decoded[f] - decoded["sentence.wav"]) < 0.1, (f, decoded)
    assert counts["added"] == 2 and counts["failed"] == 2, (counts, sources)
    # The multilingual model guesses each recording's language: English for the lecture, German for
    # the clip, which base transcribes in German.  (A French refusal by name passed in both engines in
    # earlier runs, the last on 2026-12-07; Chromium's test keeps it: the suite's 30 minutes, docs/testing.md.)
    assert sources[recording]["language"] == "en", sources[recording]
    kurz = sources["kurz.mp3"]
    assert kurz["status"] == "trained" and kurz["language"] == "de", kurz
    assert voice_clips.corpus_wer(["Euer Plan hat ja toll geklappt."], [c["text"] for c in clip]) <= 0.34, clip
    # Found during the Train, at its moment.
    top = next((h for h in early or [] if h["source"] == recording), None)
    assert top and top["location"]["time"][0] - SLACK_S <= said[0][1] and said[0][2] <= top["location"]["time"][1] + SLACK_S, early
    assert pieces == 2 and sources[recording]["status"] == "trained" and sources[recording]["units"] == pieces, sources[recording]
    for text, start, end in said:
        hit = next((h for h in hits[text] if h["source"] == recording), None)
        assert hit is not None, f"{text!r} not found in {recording}, which says {heard}"
        first, last = hit["location"]["time"]
        assert first - SLACK_S <= start and end <= last + SLACK_S, (text, start, end, hit["location"], hit["text"])
        assert last - first < said[-1][2], hit["location"]  # a piece's span, not the whole recording
        assert "–" in hit["location_label"] and ":" in hit["location_label"]
    assert played["src"] == "blob:" and "error" not in played, played
    assert played["seeked"] == pytest.approx(cited["location"]["time"][0], abs=0.05), (played, cited["location"])
    assert played["duration"] == pytest.approx(said[-1][2], abs=2.0), played  # the whole recording, not a piece
    assert played["button"] == "Play the recording from " + cited["location_label"].split("–")[0], played
    assert sources["muted.webm"]["error"].startswith(f"could not transcribe muted.webm: {UNDECODABLE}"), sources["muted.webm"]
    assert sources["broken.mp3"]["error"].startswith(f"could not transcribe broken.mp3: {UNDECODABLE}"), sources["broken.mp3"]
