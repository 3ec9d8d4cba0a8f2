import pytest

from quire.retrieval.tokenize import STEMMERS, Tokenizer


@pytest.mark.parametrize(
    "language,text,expected",
    [
        ("en", "ISO-9001", ["iso-9001", "iso", "9001"]),
        ("en", "Error 404B", ["error", "404b", "404"]),
        ("en", "release v2.3", ["releas", "v2.3", "v2", "3"]),
        ("en", "IL-6 and T-cells", ["il-6", "il", "6", "t-cells", "cell"]),
        ("en", "state-of-the-art", ["state-of-the-art", "state", "art"]),
        ("en", "snake_case name", ["snake_case", "snake", "case", "name"]),
        ("en", "doi 10.1038/nature123", ["doi", "10.1038/nature123", "10", "1038", "nature123"]),
        ("en", "end of sentence.", ["end", "sentenc"]),
        ("en", "ISO\u20109001", ["iso-9001", "iso", "9001"]),  # Unicode hyphen from a PDF
        ("en", "The running studies", ["run", "studi"]),
        ("en", "does not cause", ["not", "caus"]),  # negation kept
        ("en", "ﬁnding", ["find"]),  # ligature
        ("de", "Die Häuser der Städte", ["haus", "stadt"]),
        ("de", "Ha\u0308user", ["haus"]),  # combining umlaut
        ("de", "Haeuser", ["haus"]),  # transliterated umlaut stems the same
        ("de", "Straße strasse", ["strass", "strass"]),
        ("de", "Die Mädchen laufen nicht", ["madch", "lauf", "nicht"]),
        ("de", "Bücher buecher", ["buch", "buch"]),
        ("de", "DIN-EN-ISO 9001", ["din-en-iso", "din", "en", "iso", "9001"]),
        ("other", "The Häuser running", ["the", "häuser", "running"]),
    ],
)
def test_tokens(language, text, expected):
    assert Tokenizer(language)(text) == expected


def test_query_and_document_identifiers_meet():
    t = Tokenizer("en")
    doc = set(t("Certified under ISO-9001 since 2020."))
    for query in ["ISO-9001", "iso 9001", "9001"]:
        assert set(t(query)) <= doc


def test_stopwords_override_and_no_stemming():
    t = Tokenizer("en", stopwords={"cats"}, stem=False)
    assert t("the cats running") == ["the", "running"]


def test_unknown_language_lists_valid_names():
    with pytest.raises(ValueError) as err:
        Tokenizer("klingon")
    for name in STEMMERS:
        assert name in str(err.value)


def test_stem_cache_fills_once():
    t = Tokenizer("en")
    t("running running runs")
    assert set(t._cache) == {"running", "runs"}
