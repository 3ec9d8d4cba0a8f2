"""A query's search terms for each language of a mixed library.

Rows are tokenized with their source's language, so the query is too, once per
language.  The trap: a German row only drops *German* stopwords, so the English
question "What is SPECTER and how is it trained?" scored German passages on
"is", "it", "how" and "what"; those words are rare in German text (and used as
symbols, "IS" in a math script), so their idf is high and a German page full
of symbols came first.

The rule: a query word that is a stopword in the *query's* language carries no
weight in any row.  The query's language is detected from its function words
(a conversational question has plenty); when that fails, the stopwords of every
language in the library are dropped.  Two exceptions keep words findable:
words inside double quotes keep their usual treatment, and a query made only of
such words ("war", "die") falls back to per-language stopwords.

>>> terms = query_terms("What is SPECTER and how is it trained?", ["en", "de"], _tokenizer)
>>> terms["en"], terms["de"]
(['specter', 'train'], ['spect', 'trained'])
>>> query_terms("Was ist ein topologischer Raum?", ["en", "de"], _tokenizer)["en"]
['topologisch', 'raum']
>>> query_terms("war", ["en", "de"], _tokenizer)  # only stopwords: fall back, English keeps "war"
{'en': ['war'], 'de': []}
"""

from __future__ import annotations

import re
from typing import Callable

from .lang import detect_language
from .stopwords import BY_LANGUAGE
from .tokenize import Tokenizer

_QUOTED = re.compile(r"[\"“„”«»]([^\"“„”«»]+)[\"“„”«»]")
MODES = ("query-language", "all-languages", "row-language")  # the last one is the seed's behaviour


def split_quoted(query: str) -> tuple[str, str]:
    """``(quoted text, the rest)``.

    >>> split_quoted('who said "to be or not to be" first')
    ('to be or not to be', 'who said   first')
    """
    quoted = " ".join(m.group(1) for m in _QUOTED.finditer(query))
    return quoted, _QUOTED.sub(" ", query)


def extra_stopwords(query: str, languages, mode: str = "query-language") -> frozenset[str]:
    """Stopwords to drop from the unquoted part of ``query`` in rows of every language.

    >>> sorted(extra_stopwords("Wie funktioniert das?", ["en", "de"]))[:3]
    ['aber', 'alle', 'allem']
    """
    if mode not in MODES:
        raise ValueError(f"unknown query stopword mode {mode!r}; valid: {', '.join(MODES)}")
    if mode == "row-language":
        return frozenset()
    detected = detect_language(query) if mode == "query-language" else "other"
    chosen = [detected] if detected in BY_LANGUAGE else [lang for lang in languages if lang in BY_LANGUAGE]
    return frozenset().union(*(BY_LANGUAGE[lang] for lang in chosen))


def query_terms(query: str, languages, tokenizer_for: Callable[..., Tokenizer],
                mode: str = "query-language") -> dict[str, list[str]]:
    """``{language: terms}`` for each library language; see the module docstring for the rule.

    ``tokenizer_for(language, extra)`` returns a tokenizer whose stopwords are the
    language's own plus the frozenset ``extra`` (``HybridIndex.query_tokenizer``).
    """
    languages = list(languages)
    extra = extra_stopwords(query, languages, mode)
    if not extra:
        return {lang: tokenizer_for(lang, frozenset())(query) for lang in languages}
    quoted, rest = split_quoted(query)
    out = {lang: tokenizer_for(lang, frozenset())(quoted) + tokenizer_for(lang, extra)(rest) for lang in languages}
    if not any(out.values()):  # nothing but function words: they are what the person asked for
        return {lang: tokenizer_for(lang, frozenset())(query) for lang in languages}
    return out


def _tokenizer(language: str, extra: frozenset[str]) -> Tokenizer:
    """A fresh tokenizer, for the examples above (the index caches its own)."""
    return Tokenizer(language, stopwords=BY_LANGUAGE.get(language, frozenset()) | extra)
