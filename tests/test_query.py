"""quire.retrieval.query: which query words count in which language's rows."""

import pytest

import quire.retrieval.query as query_module
from quire.retrieval.index import HybridIndex
from quire.retrieval.query import extra_stopwords, query_terms, split_quoted


def tok(language, extra):
    return query_module._tokenizer(language, extra)


@pytest.mark.parametrize(
    "query,languages,mode,expected",
    [
        # the question: English function words count nowhere, content words everywhere
        ("What is SPECTER and how is it trained?", ["en", "de"], "query-language",
         {"en": ["specter", "train"], "de": ["spect", "trained"]}),
        # the seed: German rows keep "what", "is", "how", "it"
        ("What is SPECTER and how is it trained?", ["en", "de"], "row-language",
         {"en": ["specter", "train"], "de": ["what", "is", "spect", "and", "how", "is", "it", "trained"]}),
        # a German question over English rows: "was", "ist", "die" do not count there
        ("Was ist die erste Fundamentalform?", ["en", "de"], "query-language",
         {"en": ["erst", "fundamentalform"], "de": ["erst", "fundamentalform"]}),
        # undetectable language: every library language's stopwords go
        ("SPECTER is", ["en", "de"], "query-language", {"en": ["specter"], "de": ["spect"]}),
        # only function words: they are what was asked for, per-language rules as before
        ("was ist das", ["en", "de"], "query-language", {"en": ["ist", "das"], "de": []}),
        # a quoted phrase keeps its words (the row language's own stopwords still go)
        ('where does "it is what it is" come from', ["en", "de"], "query-language",
         {"en": ["come"], "de": ["it", "is", "what", "it", "is", "com"]}),
        # an English question keeps the English word "die" in English rows (it is a German article):
        # why the query's language is detected instead of dropping every language's stopwords
        ("What is the reason that the cells die in the dark?", ["en", "de"], "query-language",
         {"en": ["reason", "cell", "die", "dark"], "de": ["reason", "cell", "dark"]}),
        ("What is the reason that the cells die in the dark?", ["en", "de"], "all-languages",
         {"en": ["reason", "cell", "dark"], "de": ["reason", "cell", "dark"]}),
        # one language: the rule changes nothing
        ("What is SPECTER?", ["en"], "query-language", {"en": ["specter"]}),
    ],
)
def test_query_terms(query, languages, mode, expected):
    assert query_terms(query, languages, tok, mode) == expected


def test_split_quoted_handles_german_quotes():
    assert split_quoted("Was heißt „es ist“ hier?") == ("es ist", "Was heißt   hier?")


def test_unknown_mode_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid: query-language, all-languages, row-language"):
        extra_stopwords("x", ["en"], "nope")
    with pytest.raises(ValueError, match="valid: query-language"):
        HybridIndex(query_stopwords="nope")


def small_library():
    """An English notes file and a German math text that uses "IS" and "it" as symbols."""
    index = HybridIndex()
    index.add_chunks("paper", ["paper:0", "paper:1"], [
        "SPECTER is trained on citations with a triplet loss.",
        "The evaluation uses SCIDOCS tasks."], language="en")
    index.add_chunks("skript", ["skript:0", "skript:1"], [
        "Die Matrix IS heißt erste Fundamentalform. IS ist symmetrisch, it bezeichnet die Identität, in IS.",
        "Ein topologischer Raum ist ein Paar aus einer Menge und einer Topologie."], language="de")
    return index


def test_function_words_of_another_language_rank_nothing():
    index = small_library()
    hits = index.search("What is it and how is it done in practice?")
    assert [h.id for h in hits] == []  # only "done"/"practice" count, and nothing has them
    seed = HybridIndex.from_bytes(index.to_bytes())
    seed.query_stopwords = "row-language"
    assert [h.id for h in seed.search("What is it and how is it done in practice?")] == ["skript:0"]


def test_relevance_is_the_share_of_the_query_found():
    index = small_library()
    hits = index.search("How is SPECTER trained and evaluated?")
    assert hits[0].id == "paper:0" and 0.5 < hits[0].relevance < 1.0  # "evaluated" is missing there
    assert index.search("SPECTER trained")[0].relevance == 1.0
    assert index.search("Wann ist ein topologischer Raum kompakt?")[0].relevance < 1.0
