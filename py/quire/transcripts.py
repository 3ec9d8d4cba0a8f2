"""Recordings during Train: the page decodes a recording and Whisper transcribes it one piece
(16-28 s, cut in a pause) at a time; each piece becomes a unit cited by its time span.

Languages: English (Whisper tiny.en) and German (multilingual Whisper base).  The page guesses a
recording's language from its first piece with enough sound; the engine keeps it with the pieces
and passes it back with every later one, and a recording in a third language fails, named.  A
bundle without the multilingual model cannot guess: its recordings are heard as English.

The engine is injected: in the tab it is the page (``site/assets/api.js``'s ``transcribe`` page
method, reached through ``quire.browser.page``); on CPython there is none and a recording fails
with that reason.  Every piece is saved at once in the ``ocr`` bucket under
``transcript:<sha256>:<piece>``, so a cancelled Train keeps its pieces and the next Train resumes.

>>> units_of([{"text": "Cells divide.", "start": 0.0, "end": 26.4}, {"text": "", "start": 26.4, "end": 40.0}])
[Unit(text='Cells divide.', location={'time': [0.0, 26.4]}, prefix='', flags=['transcript'])]
"""

from __future__ import annotations

import re
import time
from typing import Awaitable, Callable

from quire.extract.base import ExtractError
from quire.model import Unit

# (file key, source id, piece index, piece seconds, language or None) ->
#     {text, start, end, pieces, silent, voiced, language, probability}; the engine reads the
#     recording's original from the store under the source id (``quire.originals``), or raises
#     MissingOriginal when it is not there
Transcribe = Callable[[str, str, int, float, "str | None"], Awaitable[dict]]
LANGUAGES = {"en": "English", "de": "German"}  # what recordings are transcribed in

PIECE_S = 22.0  # the page cuts in the longest pause of the 6 s before each multiple: pieces of 16-28 s, padded to one 30 s Whisper window
MIN_WORDS = 3  # fewer in a whole recording is what Whisper makes of noise, not speech
MIN_WORDS_FOR_LANGUAGE = 12  # a piece with fewer words says too little about its language
MIN_ENGLISH_SHARE = 0.12  # English speech: 25-40% of its words are these; tiny.en hearing German: often far fewer
MIN_DISTINCT_SHARE = 0.5  # a piece of English speech: 0.6-0.8 of its words distinct; tiny.en looping on
                          # speech it cannot follow ("The Mid-Alkon Demon ..." for German): about 0.35
MIN_VOICED_S = 8.0  # a piece with less sound than this says too little about how many words it holds
MIN_WORDS_PER_VOICED_S = 1.0  # English speech: 2-3 words a second of sound; tiny.en turning 25 s of German
                              # into "He made a completely different personality. ...": 13 words
ENGLISH_WORDS = frozenset(
    "the of and a to in is it that this was for on are with as be at by not or from have has but an "
    "they we you he she his her its their our your i what which who when where there these those can "
    "will would do does did so if then than all one no about into more also how".split())


class TranscriptUnavailable(ExtractError):
    """The bundle was built without voice, or the engine could not start."""


class MissingOriginal(ExtractError):
    """The recording's original is not in the store (the browser refused to keep it)."""


def missing_original(name: str) -> str:
    return f"the original of {name} was not saved (the browser refused to store it); remove it and add the file again"


class TranscriptStopped(Exception):
    """Cancelled between pieces; the pieces transcribed so far are saved."""


def cache_key(sha256: str, piece: int) -> str:
    return f"transcript:{sha256}:{piece}"


def english_share(text: str) -> float:
    """The share of words that are common English words.

    >>> english_share("The cell is the unit of life"), english_share("Die Zelle ist die Einheit")
    (0.5714285714285714, 0.0)
    """
    words = re.findall(r"[a-z']+", text.lower())
    return sum(w in ENGLISH_WORDS for w in words) / len(words) if words else 0.0


def sounds_like(text: str, language: str | None) -> bool:
    """Whether a piece's transcript reads like speech in ``language``: English (or not known)
    as :func:`sounds_english`; German, heard by the multilingual model in German, only not in a loop.

    >>> sounds_like("Die Zelle teilt sich in zwei Zellen, und jede von ihnen hat dieselben Gene wie die erste.", "de")
    True
    >>> sounds_like("Die Zelle teilt sich in zwei Zellen, und jede von ihnen hat dieselben Gene wie die erste.", "en")
    False
    >>> sounds_like("Die Zelle die Zelle die Zelle die Zelle die Zelle die Zelle die Zelle.", "de")
    False
    """
    if language == "de":
        words = re.findall(r"\w+", text.lower())
        return len(words) < MIN_WORDS_FOR_LANGUAGE or len(set(words)) / len(words) >= MIN_DISTINCT_SHARE
    return sounds_english(text)


def sounds_english(text: str) -> bool:
    """Whether a piece's transcript reads like English speech, not what tiny.en makes of another
    language (few English words, or the same few words in a loop).  Short pieces pass.

    >>> sounds_english("The cell divides into two cells, and each of them has the same genes as the first one.")
    True
    >>> sounds_english("The Mid-Alkon Demon Leas. The Mid-Alkon Demon my life. On the Mid-Alkon Demon thean of the Mid-Alkon Demon.")
    False
    """
    words = re.findall(r"[a-z']+", text.lower())
    if len(words) < MIN_WORDS_FOR_LANGUAGE:
        return True
    return english_share(text) >= MIN_ENGLISH_SHARE and len(set(words)) / len(words) >= MIN_DISTINCT_SHARE


def too_few_words(piece: dict) -> bool:
    """Whether Whisper gave far fewer words than the piece's sound holds: what tiny.en writes for
    speech it cannot follow is often fluent English, a sentence or two for half a minute of talk.
    ``voiced`` is the page's measure of the piece's seconds of sound (pieces cached before it have none).

    >>> too_few_words({"text": "He made a completely different personality. He made a totally different smile.", "voiced": 19.5})
    True
    >>> too_few_words({"text": "Mitochondria make energy for the cell in the form of ATP. " * 4, "voiced": 15.0})
    False
    >>> too_few_words({"text": "Basalt forms when lava cools quickly.", "voiced": 3.2})  # too little sound to judge
    False
    """
    voiced = piece.get("voiced")
    if not voiced or voiced < MIN_VOICED_S:
        return False
    return len(re.findall(r"\w+", piece["text"].lower())) < MIN_WORDS_PER_VOICED_S * voiced


def units_of(pieces: list[dict]) -> list[Unit]:
    """One unit per piece that has words, located by its span in seconds."""
    return [Unit(text=p["text"].strip(), location={"time": [round(p["start"], 1), round(p["end"], 1)]},
                 flags=["transcript"]) for p in pieces if p["text"].strip()]


async def read_recording(record: dict, transcribe: Transcribe | None, store, *,
                         report=None, cancelled=None, heard=None) -> tuple[list[Unit], dict]:
    """Every piece's text, from the cache or the page: ``(units, meta)``.

    ``heard(units)``, when given, gets each piece's units as soon as the piece is read (if it
    sounds like speech in its language), so the recording can be searched during its Train.

    Raises ``TranscriptStopped`` on cancel (what was read is in the cache), and ``ExtractError``
    (this file fails) when there is no engine, the browser cannot decode it, nothing in it is
    speech, or it does not sound like English."""
    report = report or (lambda e: None)
    name = record["name"]
    if transcribe is None:
        raise TranscriptUnavailable("speech transcription is not included in this copy of Quire "
                                    "(it was built without voice)")
    pieces: list[dict] = []
    total, n = None, 0
    spent, fresh = 0.0, 0
    language = None  # the recording's, once a piece says it
    while total is None or n < total:
        eta = round(spent / fresh * (total - n)) if fresh and total else None
        report({"stage": "transcribe", "file": name, "done": n, "pieces": total, "eta_s": eta})
        if cancelled and cancelled():
            raise TranscriptStopped(f"transcription stopped after {n} of {total} pieces of {name}; "
                                    "those are kept, and Train picks up from there")
        key = cache_key(record["sha256"], n)
        piece = await store.get("ocr", key)
        if piece is None:
            started = time.monotonic()
            try:
                reply = await transcribe(record["sha256"], record["id"], n, PIECE_S, language)
            except TranscriptUnavailable:
                raise
            except MissingOriginal:
                raise ExtractError(missing_original(name)) from None
            except ExtractError as exc:  # the page's reason: no audio track, a codec it cannot decode
                raise ExtractError(f"could not transcribe {name}: {exc}") from None
            spent += time.monotonic() - started
            fresh += 1
            piece = {"text": str(reply.get("text") or "").strip(), "start": float(reply["start"]),
                     "end": float(reply["end"]), "pieces": int(reply["pieces"]), "silent": bool(reply.get("silent"))}
            if reply.get("voiced") is not None:
                piece["voiced"] = round(float(reply["voiced"]), 1)
            if reply.get("language"):
                piece["language"] = str(reply["language"])
            if reply.get("probability") is not None:
                piece["probability"] = float(reply["probability"])
            if reply.get("languageName"):
                piece["language_name"] = str(reply["languageName"])
            if piece.get("language") and piece["language"] not in LANGUAGES:
                raise ExtractError(not_ours(name, piece))  # not cached: the guess is made again next time
            await store.commit([("ocr", key, piece)])  # at once: a closed tab keeps this piece
        language = language or piece.get("language")
        total = piece["pieces"]
        pieces.append(piece)
        n += 1
        if heard and piece["text"] and sounds_like(piece["text"], piece.get("language") or language) \
                and not too_few_words(piece):
            heard(units_of([piece]))
    report({"stage": "transcribe", "file": name, "done": total, "pieces": total, "eta_s": 0})
    heard = [p for p in pieces if p["text"]]
    strange = [p for p in heard if not sounds_like(p["text"], p.get("language") or language) or too_few_words(p)]
    # Most of the recording, by its seconds of sound where the page measured them (a short last
    # piece must not outvote the rest), else by pieces.
    weight = (lambda p: p.get("voiced") or 0.0) if all(p.get("voiced") for p in heard) else (lambda p: 1.0)
    if heard and sum(map(weight, strange)) * 2 > sum(map(weight, heard)):
        if language is None:  # a bundle without the multilingual model: English only
            raise ExtractError(f"{name} does not sound like English speech; the speech engine "
                               "(Whisper tiny.en) transcribes English only")
        if language == "de":
            raise ExtractError(f"{name} does not sound like clear German speech; Quire transcribes English and German speech")
        raise ExtractError(f"{name} does not sound like clear English speech; Quire transcribes English and German speech")
    units = units_of([p for p in pieces if p not in strange])
    text = " ".join(u.text for u in units)
    words = len(re.findall(r"[^\W\d_]{2,}", text))
    if words < MIN_WORDS:  # Whisper hears "you" or "Thank you." in noise
        raise ExtractError(f"no speech found in {name} (only silence, music or noise; "
                           "Quire transcribes English and German speech)")
    duration = pieces[-1]["end"] if pieces else 0.0
    meta = {"duration_s": round(duration, 1), "pieces": total, "words": words}
    if language:
        meta["language"] = language
    if strange:
        meta["warnings"] = [f"{len(strange)} of {total} pieces left out: no clear German speech there" if language == "de"
                            else f"{len(strange)} of {total} pieces left out: no clear English speech there"]
    return units, meta


def not_ours(name: str, piece: dict) -> str:
    """The refusal of a recording in a third language, with the speech engine's guess (the page
    names the language: site/assets/api-recordings.js, whose names the German catalog translates).

    >>> not_ours("talk.mp3", {"language": "fr", "language_name": "French", "probability": 0.74})
    'talk.mp3 sounds like French (the speech engine is 74% sure); Quire transcribes English and German speech'
    >>> not_ours("talk.mp3", {"language": "xx"})
    'talk.mp3 sounds like “xx”; Quire transcribes English and German speech'
    """
    language = piece.get("language_name") or f"“{piece['language']}”"
    if piece.get("probability"):
        return (f"{name} sounds like {language} (the speech engine is {round(100 * piece['probability'])}% sure); "
                "Quire transcribes English and German speech")
    return f"{name} sounds like {language}; Quire transcribes English and German speech"
