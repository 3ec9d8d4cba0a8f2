"""quire.highlight: only words that share a query term's first letters are stemmed.

Stemming every word of every hit was most of a page search's time; the prefilter must never
drop a word the stemmer would have matched.  Checked against the plain rule (stem every
word) on real English and German text from the fixtures, with identifiers and underscores.
"""

import random
import re

import pytest

from quire.highlight import WORD as _WORD, highlight_spans
from quire.retrieval.tokenize import Tokenizer
from conftest import FIXTURES

EXTRA = ("Die Häuser am Fluss; Mäuse, Bäume und Straßen. Influenza-Viren, Fußgänger, Grüße, Äpfel, "
         "Aufklärungsquote, Überlagerung, zusammenhängend. Skies, dying, happily, possibility, generalization, "
         "ISO-9001, 404B, IL-6, 4T1 cells, D21S49, x_y, AGO4-dependent, don't, Müller's, naïve café ﬁnal.")


def plain(text: str, query: str, tokenizer) -> list[list[int]]:
    """The rule highlight_spans keeps: a word is marked when its own terms meet the query's."""
    wanted = set(tokenizer(query))
    return [[m.start(), m.end()] for m in _WORD.finditer(text) if wanted & set(tokenizer(m.group()))] if wanted else []


def texts() -> list[str]:
    out = [EXTRA]
    for path in sorted(FIXTURES.rglob("*.md"))[:40] + sorted(FIXTURES.rglob("*.txt"))[:20]:
        text = path.read_text(errors="replace")
        out += [text[i:i + 3000] for i in range(0, min(len(text), 30_000), 3000)]
    return [t for t in out if _WORD.search(t)]


@pytest.mark.parametrize("language", ["en", "de", "other"])
def test_the_prefilter_never_drops_a_match(language):
    tokenizer, rnd = Tokenizer(language), random.Random(language)
    checked = 0
    for text in texts():
        words = _WORD.findall(text)
        for _ in range(8):
            query = " ".join(rnd.choice(words) for _ in range(3))
            assert highlight_spans(text, query, tokenizer) == plain(text, query, tokenizer), (query, text[:80])
            checked += 1
    assert checked > 200


@pytest.mark.parametrize("text, query, language, expected", [
    ("Die Häuser am Fluss.", "Haus", "de", ["Häuser"]),
    ("Influenza spreads.", "influenza", "de", ["Influenza"]),
    ("The skies were clear.", "sky", "en", ["skies"]),
    ("ISO-9001 and 9001.", "9001", "en", ["ISO-9001", "9001"]),
    ("4T1 cells grow.", "1", "en", ["4T1"]),
    ("Cells divide; a cell grows.", "cell", "en", ["Cells", "cell"]),
    ("Sie liegen außen.", "außen", "other", ["außen"]),
    ("x_y and y.", "y", "en", ["y"]),  # one-letter parts of a word are no terms
])
def test_hand_picked_words(text, query, language, expected):
    assert [text[a:b] for a, b in highlight_spans(text, query, Tokenizer(language))] == expected
