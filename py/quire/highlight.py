"""Which words of a passage to mark for a query: those whose terms (stems) are the query's.

Stemming every word of every hit was most of a search's time in the tab (Snowball in pure
Python).  Stemmers only cut or rewrite a word's end (German's also folds umlauts, "ß" and
"ue"/"ae"/"oe"), so a word can stem to a query term only if one of its parts, folded the same
way, starts with the term's first letters.  Only such words are stemmed; each word's folded
parts and terms are cached (``Tokenizer.word_terms``).  ``tests/test_highlight.py`` checks the
result against stemming every word, on real English and German text.

>>> from quire.retrieval.tokenize import Tokenizer
>>> highlight_spans("Cells divide; a cell grows.", "cell", Tokenizer("en"))
[[0, 5], [16, 20]]
>>> text = "Die Häuser stehen am Fluss."
>>> [text[a:b] for a, b in highlight_spans(text, "Haus", Tokenizer("de"))]
['Häuser']
"""

from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"\w[\w'’-]*")  # a highlighted unit: "ISO-9001", "don't"
# "IL-6", "4T1", "x_y": the tokenizer's parts too; and a mark folding makes ("İ" casefolds to "i" and a
# combining dot, which is no word character: the tokenizer's terms start after it)
_PARTS = re.compile(r"[-'’_]|[^\w]|(?<=\d)(?=\D)|(?<=\D)(?=\d)")
_FOLD = str.maketrans({"ä": "a", "ö": "o", "ü": "u", "ß": "ss"})
_DIGRAPHS = re.compile(r"(?<=[aou])e")
_KEEP = 2  # letters a stem's end may differ by ("happi" from "happy", "possibl" from "possibility")
_SHAPES: dict[str, tuple[str, ...]] = {}  # word -> its folded form and parts (searches share words)
_SHAPES_MAX = 200_000


def _fold(word: str) -> str:
    word = word.casefold()
    if not word.isascii():
        word = unicodedata.normalize("NFKC", word).translate(_FOLD)
    return _DIGRAPHS.sub("", word)


def _shape(word: str) -> tuple[str, ...]:
    shape = _SHAPES.get(word)
    if shape is None:
        if len(_SHAPES) > _SHAPES_MAX:
            _SHAPES.clear()
        folded = _fold(word)
        shape = _SHAPES[word] = (folded, *[p for p in _PARTS.split(folded) if p and p != folded])
    return shape


def highlight_spans(text: str, query: str, tokenizer) -> list[list[int]]:
    """Character spans of words in ``text`` whose stem matches a query term."""
    wanted = set(tokenizer(query))
    if not wanted:
        return []
    prefixes = tuple({f[:max(1, len(f) - _KEEP)] for f in map(_fold, wanted)})
    terms = getattr(tokenizer, "word_terms", None) or (lambda word: set(tokenizer(word)))
    spans = []
    for m in WORD.finditer(text):
        word = m.group()
        for part in _shape(word):
            if part.startswith(prefixes):
                if not wanted.isdisjoint(terms(word)):
                    spans.append([m.start(), m.end()])
                break
    return spans
