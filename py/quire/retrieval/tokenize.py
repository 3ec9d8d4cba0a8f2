"""Text -> search terms: casefold, split, drop stopwords, Snowball-stem.

Identifiers stay findable: a run of word characters joined by ``-``, ``.``
or ``/`` (``ISO-9001``, ``v2.3``, ``10.1038/nature``) is emitted whole and
also as its parts, and a word mixing digits and letters (``404B``) is emitted
whole and as its digit and letter runs.  Parts are stemmed and stopword-
filtered like ordinary words; whole identifiers and anything with a digit are
never stemmed.

>>> Tokenizer("en")("The ISO-9001 audits failed with error 404B.")
['iso-9001', 'iso', '9001', 'audit', 'fail', 'error', '404b', '404']
>>> Tokenizer("de")("Die Häuser der Städte")
['haus', 'stadt']
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import types
import unicodedata

from . import among
from .stopwords import BY_LANGUAGE

# Language code -> Snowball algorithm; "other" means: no stemming, no stopwords.
STEMMERS = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
    "sv": "swedish",
    "da": "danish",
    "no": "norwegian",
    "fi": "finnish",
    "other": None,
}

_SNOWBALL = "_quire_snowball"  # snowballstemmer's folder, imported without its __init__


def snowball(algorithm: str):
    """A Snowball stemmer object, importing only that language's module.

    ``import snowballstemmer`` compiles all 30-odd language modules (0.8 s in the
    browser, where no bytecode is cached); one language needs three small files.

    >>> snowball("english").stemWord("running")
    'run'
    """
    if _SNOWBALL not in sys.modules:
        spec = importlib.util.find_spec("snowballstemmer")  # locates the package, runs nothing
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("snowballstemmer is not installed")
        package = types.ModuleType(_SNOWBALL)
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules[_SNOWBALL] = package
    name = "".join(part.capitalize() for part in algorithm.split("_")) + "Stemmer"
    module = importlib.import_module(f"{_SNOWBALL}.{algorithm}_stemmer")
    return among.install(getattr(module, name)())  # its table lookups by dict: the same stems, faster


# \w runs joined by -, ., / ; the dash class includes the Unicode hyphens PDFs produce.
TOKEN = re.compile(r"\w+(?:[-\u2010\u2011./]\w+)*")
_SPLIT = re.compile(r"[-\u2010\u2011./_]+")
_DIGIT_RUNS = re.compile(r"\d+|[^\W\d_]+")
_MIN_PART = 2  # one-letter parts ("b" of "404b") match almost everything
_WORDS_MAX = 200_000  # words kept by word_terms before it starts over (~40 MB at most)


class Tokenizer:
    """A callable ``str -> list[str]`` for one language.

    ``stopwords=None`` uses the embedded list for the language (empty for
    languages without one); pass a set to override.  Stems are cached per
    word because Snowball in pure Python costs ~40 us a word.
    """

    def __init__(self, language: str = "en", *, stopwords: frozenset[str] | set[str] | None = None, stem: bool = True):
        if language not in STEMMERS:
            raise ValueError(f"unknown language {language!r}; valid: {', '.join(STEMMERS)}")
        self.language = language
        self.stopwords = frozenset(BY_LANGUAGE.get(language, ()) if stopwords is None else stopwords)
        algorithm = STEMMERS[language] if stem else None
        self._stem_word = snowball(algorithm).stemWord if algorithm else None
        self._cache: dict[str, tuple[str, ...]] = {}
        self._words: dict[str, frozenset[str]] = {}

    def __repr__(self) -> str:
        return f"Tokenizer({self.language!r})"

    def __call__(self, text: str) -> list[str]:
        if not text.isascii():
            # NFKC folds PDF ligatures ("ﬁ") and joins combining umlauts so \w sees one letter.
            text = unicodedata.normalize("NFKC", text)
        out: list[str] = []
        cache = self._cache
        for raw in TOKEN.findall(text.casefold()):
            terms = cache.get(raw)
            if terms is None:
                terms = cache[raw] = self._terms(raw)
            out.extend(terms)
        return out

    def word_terms(self, word: str) -> frozenset[str]:
        """The terms of one word as it appears in a text, cached across calls: highlighting
        a search's hits asks for the same words again and again (it was half of a search).

        >>> sorted(Tokenizer("en").word_terms("Cells"))
        ['cell']
        """
        terms = self._words.get(word)
        if terms is None:
            if len(self._words) > _WORDS_MAX:
                self._words.clear()
            terms = self._words[word] = frozenset(self(word))
        return terms

    def _terms(self, raw: str) -> tuple[str, ...]:
        """One regex match -> its terms, e.g. ``"iso-9001" -> ("iso-9001", "iso", "9001")``."""
        parts = [p for p in _SPLIT.split(raw) if p]
        if len(parts) == 1:
            word = parts[0]
            if word.isalpha():
                return () if word in self.stopwords else (self._stem(word),)
            if word.isdigit() or len(word) < 3:
                return (word,)
            runs = [r for r in _DIGIT_RUNS.findall(word) if len(r) >= _MIN_PART or r.isdigit()]
            return (word, *runs) if runs != [word] else (word,)
        out = [raw.replace("\u2010", "-").replace("\u2011", "-")]
        for part in parts:
            if part.isalpha():
                if part not in self.stopwords and len(part) >= _MIN_PART:
                    out.append(self._stem(part))
            elif len(part) >= _MIN_PART or part.isdigit():
                out.append(part)
        return tuple(out)

    @property
    def stems(self) -> bool:
        """Whether words are stemmed (a language with a Snowball stemmer)."""
        return self._stem_word is not None

    def _stem(self, word: str) -> str:
        return self._stem_word(word) if self._stem_word else word
