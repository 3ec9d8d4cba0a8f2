"""Recordings inside Train with a scripted speech engine (quire/transcripts.py): pieces become
passages cited by time span, the cache makes a cancelled Train resume, and silence, other
languages, undecodable files and a bundle without voice each fail that file alone."""

import asyncio

import pytest

from quire.app import Quire
from quire.extract import ExtractError
from quire.model import location_label
from quire.store import MemoryStore
from quire.training import TrainCancelled
from quire.transcripts import english_share


class FakeEngine:
    """Answers like the page's transcribe method: ``texts[n]`` for piece n, PIECE_S (22 s) each."""

    def __init__(self, texts, fail=None, voiced=None):
        self.texts, self.fail, self.calls, self.voiced = texts, fail, [], voiced

    async def __call__(self, key, data, piece, piece_s):
        self.calls.append(piece)
        if self.fail:
            raise ExtractError(self.fail)
        reply = {"text": self.texts[piece], "start": piece * piece_s, "end": (piece + 1) * piece_s,
                 "pieces": len(self.texts), "silent": not self.texts[piece]}
        if self.voiced:
            reply["voiced"] = self.voiced[piece]
        return reply


LECTURE = [
    "Today we look at the cell and the way it divides into two cells.",
    "",  # a pause in the lecture: a piece with no words
    "Mitochondria are where the cell makes most of its energy, as we saw last week.",
    "The nucleus holds the genetic material of the cell, and it is wrapped in a membrane.",
]


async def open_with(engine, store=None):
    q = await Quire.open(store or MemoryStore())
    q.library.transcribe = engine
    return q


def test_pieces_become_passages_cited_by_time_span():
    async def go():
        engine = FakeEngine(LECTURE)
        q = await open_with(engine)
        await q.stage("lecture.mp3", b"ID3 not really an mp3")
        counts = await q.train()
        assert counts["added"] == 1 and engine.calls == [0, 1, 2, 3]
        source = q.sources()[0]
        assert source["kind"] == "audio" and source["chunks"] == 3 and source["unit_label"] == "pieces"
        hit = (await q.search("mitochondria energy"))[0]
        assert hit["location"] == {"time": [44.0, 66.0]} and hit["location_label"] == "0:44–1:06"
    asyncio.run(go())


def test_cancel_keeps_transcribed_pieces_and_train_resumes():
    async def go():
        store = MemoryStore()
        engine = FakeEngine(LECTURE)
        q = await open_with(engine, store)
        await q.stage("lecture.opus", b"OggS not really opus")
        stop = lambda: len(engine.calls) >= 2  # noqa: E731
        with pytest.raises(TrainCancelled, match="transcription stopped after 2 of 4 pieces of lecture.opus"):
            await q.train(cancelled=stop)
        assert q.sources()[0]["status"] == "staged"
        assert (await q.train())["added"] == 1
        assert engine.calls == [0, 1, 2, 3]  # each piece transcribed once
    asyncio.run(go())


@pytest.mark.parametrize("texts, fail, message", [
    (["", "", ""], None, "no speech found in talk.wav"),
    (["[music]", "", "you"], None, "no speech found in talk.wav"),
    (["Ich bin Biologe und die Zelle teilt sich morgen früh wieder schnell."] * 3, None,
     "does not sound like English speech"),
    (["x"], "this browser cannot decode it: it has no audio track", "could not transcribe talk.wav: this browser cannot decode"),
])
def test_a_recording_without_english_speech_fails_alone(texts, fail, message):
    async def go():
        q = await open_with(FakeEngine(texts, fail))
        await q.stage("talk.wav", b"RIFF....WAVE")
        await q.stage("notes.txt", b"The cell is the unit of life.")
        counts = await q.train()
        assert counts["added"] == 1 and counts["failed"] == 1
        failed = next(s for s in q.sources() if s["name"] == "talk.wav")
        assert failed["status"] == "failed" and message in failed["error"]
    asyncio.run(go())


def test_a_piece_whisper_loops_on_is_left_out_with_a_warning():
    loop = "The Mid-Alkon Demon Leas. The Mid-Alkon Demon my life. On the Mid-Alkon Demon thean of the Mid-Alkon Demon."
    async def go():
        q = await open_with(FakeEngine([*LECTURE, loop]))
        await q.stage("lecture.webm", b"\x1aE\xdf\xa3 a video")
        assert (await q.train())["added"] == 1
        source = q.sources()[0]
        assert source["chunks"] == 3 and "1 of 5 pieces left out: no clear English speech there" in source["warnings"]
        assert not [h for h in await q.search("Alkon Demon") if "Alkon" in h["text"]]
    asyncio.run(go())


def test_without_a_speech_engine_a_recording_fails_saying_why():
    async def go():
        q = await open_with(None)
        await q.stage("talk.m4a", b"....ftypM4A ")
        await q.train()
        assert "speech transcription is not included" in q.sources()[0]["error"]
    asyncio.run(go())


def test_time_labels_and_english_share():
    assert location_label({"time": [750.0, 790.0]}) == "12:30–13:10"
    assert location_label({"time": [3599.0, 3725.0]}) == "59:59–1:02:05"
    assert english_share("the cell is the unit of life") > 0.4
    assert english_share("die Zelle ist die Einheit des Lebens") == 0


def test_fluent_english_for_half_a_minute_of_other_speech_is_refused_by_its_few_words():
    # tiny.en on 25 s of espeak-ng German, the page decoding at 32 kHz (Chromium): two fluent
    # sentences, which the share of common English words lets through; the tail piece is short.
    german = "He made a completely different personality. He made a totally different smile."
    async def go():
        q = await open_with(FakeEngine([german, "Thank you."], voiced=[19.6, 2.1]))
        await q.stage("german.mp3", b"ID3 a recording")
        await q.stage("notes.txt", b"The cell is the unit of life.")
        assert (await q.train())["failed"] == 1
        failed = next(s for s in q.sources() if s["name"] == "german.mp3")
        assert "does not sound like English speech" in failed["error"]
    asyncio.run(go())


def test_a_quiet_lecture_with_pauses_keeps_every_piece():
    # English at two or three words a second of sound passes, and a piece with little sound is not judged.
    async def go():
        q = await open_with(FakeEngine(LECTURE, voiced=[5.0, 0.0, 6.5, 7.9]))
        await q.stage("lecture.mp3", b"ID3 a recording")
        assert (await q.train())["added"] == 1
        left_out = lambda src: [w for w in src.get("warnings") or [] if "left out" in w]  # noqa: E731
        assert q.sources()[0]["chunks"] == 3 and not left_out(q.sources()[0])
        q2 = await open_with(FakeEngine([" ".join(LECTURE)] * 2, voiced=[16.0, 15.0]))
        await q2.stage("lecture.mp3", b"ID3 a recording")
        assert (await q2.train())["added"] == 1 and not left_out(q2.sources()[0])
    asyncio.run(go())
