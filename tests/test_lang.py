import pytest

from quire.retrieval.lang import detect_language


@pytest.mark.parametrize(
    "text,expected",
    [
        ("The mitochondria is the powerhouse of the cell, and it produces energy.", "en"),
        ("Reverse transcription of RNA is not required for this process to occur.", "en"),
        ("Die Mitochondrien sind die Kraftwerke der Zelle und erzeugen Energie.", "de"),
        ("Das ist nicht so einfach, wie es auf den ersten Blick scheint.", "de"),
        ("Ich habe die Prüfung über Thermodynamik bestanden, aber es war schwer.", "de"),
        ("Le chat est sur la table et il dort depuis ce matin.", "other"),
        ("", "other"),
        ("404 2020 3.14", "other"),
        ("Mitochondrien", "other"),  # one word: no evidence either way
        ("The Kindergarten is where the children of the town play.", "en"),  # German loanword in English
    ],
)
def test_detect(text, expected):
    assert detect_language(text) == expected


def test_default_overrides_other_and_is_checked():
    assert detect_language("Mitochondrien", default="de") == "de"
    with pytest.raises(ValueError, match="valid: en, de, other"):
        detect_language("x", default="fr")


def test_speed_on_long_text_is_bounded_by_the_sample():
    # A whole book costs the same as its first few thousand characters.
    assert detect_language("the cell and the gene " * 200_000) == "en"
