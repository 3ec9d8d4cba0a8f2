"""Recordings (audio, or video with a sound track): no text of their own.  Train has the page
decode them and Whisper transcribe them piece by piece (``quire.transcripts``).

>>> ex = extract_audio(b"ID3" + b"0" * 40, "lecture.mp3")
>>> ex.kind, ex.units, ex.meta["needs_transcript"]
('audio', [], True)
"""

from __future__ import annotations

from quire.model import Extraction


def extract_audio(data: bytes, name: str) -> Extraction:
    # Whether the browser can decode it is only known there: a bad file fails during Train.
    return Extraction(kind="audio", units=[], meta={"needs_transcript": True})
