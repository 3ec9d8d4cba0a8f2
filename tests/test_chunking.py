"""Chunker: a worked example, Unicode edge cases and property tests.

Conventions checked here (see quire/chunking.py):
* spans are trimmed of whitespace, so "covered" means every non-whitespace char;
* ``end - start <= size``; chunk text is ``prefix + text[start:end]``, so
  ``len(chunk.text) <= len(prefix) + size``;
* overlap between neighbours is at most ``overlap`` -- no slack needed,
  because the overlap is only ever shrunk to a word start.
"""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quire.chunking import chunk_units, spans
from quire.model import Unit, sha256_hex


def test_worked_example():
    """Three sentences, size=40, overlap=12.

    "This is the first. Second one is here. Third."  (45 chars)
    Chunk 1: window [0, 40]; the latest sentence end in its second half
    (20, 40] is after "here." -> (0, 38).
    Chunk 2: back up at most 12 chars from 38, to the first word start at or
    after 26, which is "one" -> start 26; the rest fits -> (26, 45).
    The overlap "one is here." is exactly 12 characters.
    """
    text = "This is the first. Second one is here. Third."
    assert spans(text, size=40, overlap=12) == [(0, 38), (26, 45)]
    assert spans(text, size=20, overlap=0) == [(0, 18), (19, 38), (39, 45)]
    # With overlap 8 the middle chunk finds no sentence end and cuts at a space.
    assert spans(text, size=20, overlap=8) == [(0, 18), (12, 32), (26, 45)]


def test_prefers_paragraph_then_sentence_then_space():
    text = "Erster Absatz hat Inhalt.\n\nZweiter Absatz. Und noch mehr Text hier drin."
    assert text[slice(*spans(text, size=40, overlap=0)[0])] == "Erster Absatz hat Inhalt."
    text = "Ein Satz endet hier. Der nächste Satz ist viel länger als das"
    assert text[slice(*spans(text, size=36, overlap=0)[0])] == "Ein Satz endet hier."
    text = "wort " * 20
    assert all(text[a:b].split() == ["wort"] * len(text[a:b].split()) for a, b in spans(text, 23, 5))


def test_chunk_objects_carry_prefix_location_and_hash():
    unit = Unit("Überschrift und Grüße. " * 10, {"page": 3}, "[Section: Ä > Ö]\n")
    chunks = chunk_units("src", [unit], size=100, overlap=20)
    assert len(chunks) > 1
    for c in chunks:
        assert c.source_id == "src" and c.location == {"page": 3}
        assert c.text == unit.prefix + unit.text[c.start : c.end]
        assert c.hash == sha256_hex(c.text)
        assert len(c.text) <= len(unit.prefix) + 100
    chunks[0].location["page"] = 99  # each chunk owns its location dict
    assert unit.location == {"page": 3}


def test_long_word_is_cut_hard_but_not_inside_a_cluster():
    # 'e' + combining acute, repeated: every odd index is a mark that must stay with its base.
    word = "e\u0301" * 30
    for a, b in spans(word, size=7, overlap=0):
        assert not unicodedata.combining(word[a])
        assert b - a <= 7
    emoji = "👩\u200d🔬" * 10  # ZWJ sequences
    for a, b in spans(emoji, size=4, overlap=0):
        assert emoji[a] != "\u200d" and emoji[b - 1] != "\u200d"


def test_arabic_and_cjk():
    arabic = "مرحبا بالعالم. هذه جملة ثانية طويلة بعض الشيء؟ نعم هي كذلك. " * 5
    for a, b in spans(arabic, size=60, overlap=10):
        assert (a == 0 or arabic[a - 1] == " ") and (b == len(arabic.rstrip()) or arabic[b] == " ")
    cjk = "这是第一句。这是第二句。" * 10
    got = spans(cjk, size=13, overlap=0)
    assert cjk[slice(*got[0])] == "这是第一句。这是第二句。"


def test_surrogate_pairs_from_utf16_are_not_split():
    # A string decoded with surrogatepass (as JS strings can arrive) holds the
    # two halves of "😀" as separate code points.
    raw = "\ud83d\ude00" * 6
    for a, b in spans(raw, size=3, overlap=0):
        assert not "\udc00" <= raw[a] <= "\udfff" and not "\ud800" <= raw[b - 1] <= "\udbff"


@pytest.mark.parametrize("size, overlap", [(0, 0), (10, 10), (10, -1)])
def test_bad_parameters(size, overlap):
    with pytest.raises(ValueError, match="overlap"):
        spans("x", size, overlap)


def test_blank_unit_gives_no_chunks():
    assert chunk_units("s", [Unit("  \n\n "), Unit("")]) == []


# ---------------------------------------------------------------- properties

WORD = st.text(alphabet="abcdeäöüßxyzمرح", min_size=1, max_size=12)
SEP = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", ". ", "! ", "? ", ".\n\n", "\t"])


@st.composite
def texts(draw):
    parts = draw(st.lists(st.tuples(WORD, SEP), max_size=120))
    lead = draw(st.sampled_from(["", " ", "\n\n"]))
    return lead + "".join(w + s for w, s in parts)


SIZES = st.tuples(st.integers(min_value=13, max_value=300), st.floats(min_value=0, max_value=0.49)).map(
    lambda t: (t[0], int(t[0] * t[1]))
)


def check(text, size, overlap, words_fit=True):
    got = spans(text, size, overlap)
    covered = [False] * len(text)
    for a, b in got:
        assert 0 <= a < b <= len(text)
        assert b - a <= size
        assert not text[a].isspace() and not text[b - 1].isspace()
        for i in range(a, b):
            covered[i] = True
        if words_fit:  # boundaries fall between words
            assert a == 0 or text[a - 1].isspace()
            assert b == len(text) or text[b].isspace() or text[b - 1] in "。"
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    for (a1, b1), (a2, b2) in zip(got, got[1:]):
        assert a2 > a1 and b2 > b1  # monotonic
        assert b1 - a2 <= overlap  # overlap bounded, no slack
    return got


@settings(max_examples=300, deadline=None)
@given(texts(), SIZES)
def test_property_word_texts(text, size_overlap):
    size, overlap = size_overlap
    check(text, size, overlap)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.integers(min_value=1, max_value=50), st.data())
def test_property_any_unicode(text, size, data):
    overlap = data.draw(st.integers(min_value=0, max_value=size - 1))
    check(text, size, overlap, words_fit=False)


@settings(max_examples=100, deadline=None)
@given(texts(), SIZES)
def test_property_chunk_text_limit(text, size_overlap):
    size, overlap = size_overlap
    prefix = "[Section: A > B]\n"
    for c in chunk_units("s", [Unit(text, {}, prefix)], size, overlap):
        assert len(c.text) <= len(prefix) + size
        assert c.text == prefix + text[c.start : c.end]
