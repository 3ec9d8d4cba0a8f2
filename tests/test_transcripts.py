"""Recordings inside Train with a scripted speech engine (quire/transcripts.py): pieces become
passages cited by time span, the cache makes a cancelled Train resume, and silence, other
languages, undecodable files and a bundle without voice each fail that file alone."""

import asyncio
import hashlib

import pytest

from quire.app import Quire
from quire.extract import ExtractError
from quire.model import location_label
from quire.store import MemoryStore
from quire.training import TrainCancelled
from quire.transcripts import english_share


class FakeEngine:
    """Answers like the page's transcribe method: ``texts[n]`` for piece n, PIECE_S (22 s) each.
    With ``heard`` (a language code, its English name, a probability), the page's language guess:
    made at the first piece with text whenever the engine passes no language, as the page does;
    ``languages`` records what the engine passed with each piece."""

    def __init__(self, texts, fail=None, voiced=None, heard=None):
        self.texts, self.fail, self.calls, self.voiced, self.heard = texts, fail, [], voiced, heard
        self.languages = []

    async def __call__(self, key, data, piece, piece_s, language=None):
        self.calls.append(piece)
        self.languages.append(language)
        if self.fail:
            raise ExtractError(self.fail)
        reply = {"text": self.texts[piece], "start": piece * piece_s, "end": (piece + 1) * piece_s,
                 "pieces": len(self.texts), "silent": not self.texts[piece], "language": language}
        if self.voiced:
            reply["voiced"] = self.voiced[piece]
        if self.heard and not language and self.texts[piece]:
            code, name, probability = self.heard
            reply.update(language=code, probability=probability)
            if code not in ("en", "de"):
                reply.update(text="", languageName=name)
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
        assert not source.get("warnings")  # (a recording's bytes hold no text before Train: no "no text found")
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


class SearchingEngine(FakeEngine):
    """A FakeEngine that, before it answers piece n, searches the library as a person might while
    the Train runs: ``found[n]`` is what a search for each earlier piece's words returned."""

    def __init__(self, texts, q=None, **kw):
        super().__init__(texts, **kw)
        self.q, self.found = q, {}

    async def __call__(self, key, data, piece, piece_s, language=None):
        if self.q is not None:
            self.found[piece] = {i: [(h["source"], h["location"], h["text"]) for h in await self.q.search(self.texts[i])]
                                 for i in range(piece) if self.texts[i]}
        return await super().__call__(key, data, piece, piece_s, language)


def test_a_recording_is_searchable_piece_by_piece_while_it_trains():
    async def go():
        engine = SearchingEngine(LECTURE)
        q = engine.q = await open_with(engine)
        await q.stage("lecture.mp3", b"ID3 not really an mp3")
        await q.stage("notes.txt", b"Ribosomes build proteins from amino acids in the cell.")
        counts = await q.train()
        assert counts["added"] == 2
        # Before piece 3 is heard, pieces 0 and 2 are found where they were said, with their text.
        early = engine.found[3]
        assert early[0][0] == ("lecture.mp3", {"time": [0.0, 22.0]}, LECTURE[0]), early
        assert early[2][0] == ("lecture.mp3", {"time": [44.0, 66.0]}, LECTURE[2]), early
        assert engine.found[1][0][0][1] == {"time": [0.0, 22.0]}
        # After Train: the recording's own passages, each once (the early ones were replaced).
        hits = await q.search(LECTURE[3])
        assert hits[0]["location"] == {"time": [66.0, 88.0]}
        ids = [h["chunk_id"] for h in await q.search("cell", k=20) if h["source"] == "lecture.mp3"]
        assert sorted(ids) == sorted(set(ids)) and len(ids) == q.sources()[0]["chunks"] == 3
    asyncio.run(go())


@pytest.mark.parametrize("how", ["cancel", "fails"])
def test_pieces_found_during_a_train_go_when_it_stops_or_the_recording_fails(how):
    async def go():
        texts = LECTURE if how == "cancel" else LECTURE[:1] + ["Ich bin Biologe und die Zelle teilt sich morgen früh wieder."] * 3
        engine = SearchingEngine(texts)
        q = engine.q = await open_with(engine)
        await q.stage("lecture.mp3", b"ID3 not really an mp3")
        if how == "cancel":
            with pytest.raises(TrainCancelled):
                await q.train(cancelled=lambda: len(engine.calls) >= 3)
        else:
            assert (await q.train())["failed"] == 1
        assert engine.found[1][0][0][2] == texts[0]  # it was found while heard
        assert await q.search(texts[0]) == []  # and is not once the Train stopped or the file failed
        assert q.library.passages.get(q.sources()[0]["id"]) is None
    asyncio.run(go())


@pytest.mark.parametrize("texts, fail, message", [
    (["", "", ""], None, "no speech found in talk.wav (only silence, music or noise; Quire transcribes English and German speech)"),
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


GERMAN_LECTURE = [
    "Heute betrachten wir die Zelle und wie sie sich in zwei Zellen teilt.",
    "",
    "In den Mitochondrien gewinnt die Zelle den größten Teil ihrer Energie, wie wir letzte Woche gesehen haben.",
    "Der Zellkern enthält das Erbgut der Zelle und ist von einer Membran umgeben.",
]


def test_a_german_lecture_is_transcribed_in_german_and_resumes_in_german():
    async def go():
        store = MemoryStore()
        engine = FakeEngine(GERMAN_LECTURE, heard=("de", "German", 0.69), voiced=[5.5, 0.0, 7.0, 6.0])
        q = await open_with(engine, store)
        await q.stage("vorlesung.m4a", b"....ftypM4A ")
        with pytest.raises(TrainCancelled):
            await q.train(cancelled=lambda: len(engine.calls) >= 2)
        # the guess was made at the first piece; every later piece is asked for in German
        assert engine.languages == [None, "de"]
        resumed = FakeEngine(GERMAN_LECTURE, heard=("en", "English", 0.9), voiced=[5.5, 0.0, 7.0, 6.0])
        q = await open_with(resumed, store)
        assert (await q.train())["added"] == 1
        assert resumed.calls == [2, 3] and resumed.languages == ["de", "de"]  # the cached pieces' language, not a new guess
        source = q.sources()[0]
        assert source["status"] == "trained" and source["chunks"] == 3 and not source.get("warnings")
        hit = (await q.search("Mitochondrien Energie"))[0]
        assert hit["location"] == {"time": [44.0, 66.0]}
    asyncio.run(go())


def test_a_short_german_clip_keeps_the_language_it_was_heard_in():
    # Six words hold too few German marker words for the text's own check ("other"); the source
    # takes the language the speech engine heard, so its passages are stemmed as German.
    async def go():
        q = await open_with(FakeEngine(["Euer Plan hat ja toll geklappt."], heard=("de", "German", 0.97)))
        await q.stage("kurz.mp3", b"ID3 a recording")
        assert (await q.train())["added"] == 1
        assert q.sources()[0]["language"] == "de"
    asyncio.run(go())


def test_a_german_piece_in_a_loop_is_left_out_and_a_third_language_is_refused_by_name():
    async def go():
        loop = "Die Zelle die Zelle die Zelle die Zelle die Zelle die Zelle die Zelle die Zelle."
        q = await open_with(FakeEngine([*GERMAN_LECTURE, loop], heard=("de", "German", 0.8)))
        await q.stage("vorlesung.mp3", b"ID3 a recording")
        assert (await q.train())["added"] == 1
        assert "1 of 5 pieces left out: no clear German speech there" in q.sources()[0]["warnings"]
        store = MemoryStore()
        french = FakeEngine(["Les glaciers creusent de larges vallées.", "La lave refroidit."], heard=("fr", "French", 0.74))
        q = await open_with(french, store)
        await q.stage("cours.mp3", b"ID3 a recording")
        await q.stage("notes.txt", b"The cell is the unit of life.")
        assert (await q.train())["failed"] == 1
        failed = next(s for s in q.sources() if s["name"] == "cours.mp3")
        assert failed["error"] == ("cours.mp3 sounds like French (the speech engine is 74% sure); "
                                   "Quire transcribes English and German speech")
        assert french.calls == [0]  # refused at the guess, and nothing cached: the next Train guesses again
        assert await store.get("ocr", "transcript:" + hashlib.sha256(b"ID3 a recording").hexdigest() + ":0") is None
    asyncio.run(go())


def test_english_heard_as_english_is_judged_as_before():
    # the page's guess is English: tiny.en's inventions are still refused by their few words
    german = "He made a completely different personality. He made a totally different smile."
    async def go():
        q = await open_with(FakeEngine([german, "Thank you."], voiced=[19.6, 2.1], heard=("en", "English", 0.55)))
        await q.stage("talk.mp3", b"ID3 a recording")
        assert (await q.train())["failed"] == 1
        assert q.sources()[0]["error"] == ("talk.mp3 does not sound like clear English speech; "
                                           "Quire transcribes English and German speech")
    asyncio.run(go())


def test_the_engine_never_reads_a_recordings_bytes_and_a_missing_original_fails_it_by_name():
    # In the tab the page reads a recording from the store itself (api-recordings.js): the engine
    # passes the source id, and a lecture video of hundreds of MB never enters its heap.
    from quire.transcripts import MissingOriginal

    class Watched(MemoryStore):
        read = []

        async def get(self, bucket, key, default=None):
            if bucket == "originals":
                Watched.read.append(key)
            return await super().get(bucket, key, default)

        async def get_many(self, bucket, keys):
            if bucket == "originals":
                Watched.read.extend(keys)
            return await MemoryStore.get_many(self, bucket, keys)

    class Lost(FakeEngine):
        async def __call__(self, key, source, piece, piece_s, language=None):
            self.sources = getattr(self, "sources", []) + [source]
            if source.startswith(LOST):
                raise MissingOriginal(source)
            return await super().__call__(key, source, piece, piece_s, language)

    LOST = hashlib.sha256(b"ID3 lost").hexdigest()[:16]

    async def go():
        engine = Lost(LECTURE)
        q = await open_with(engine, Watched())
        kept = await q.stage("lecture.mp3", b"ID3 not really an mp3")
        await q.stage("notes.md", b"# Notes\n\nThe cell divides.")
        await q.stage("lost.mp3", b"ID3 lost")
        counts = await q.train()
        assert counts["added"] == 2 and counts["failed"] == 1, counts
        assert Watched.read, "the Markdown file is read as usual"
        assert kept["id"] not in Watched.read and not any(k.startswith(LOST) for k in Watched.read), Watched.read
        assert kept["id"] in engine.sources
        lost = next(s for s in q.sources() if s["name"] == "lost.mp3")
        assert lost["error"] == ("the original of lost.mp3 was not saved (the browser refused to store it); "
                                 "remove it and add the file again"), lost
    asyncio.run(go())
