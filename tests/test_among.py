"""quire.retrieval.among: the stems are exactly snowballstemmer's own, in every language Quire stems.

The words: every stopword of the language (real, short, irregular words), the words of the
repository's own Markdown and HTML fixtures, and 4,000 made from the stemmer's own ending
tables (a random stem, then one or two endings: the lookups' hard cases)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from quire.retrieval import among
from quire.retrieval.stopwords import BY_LANGUAGE
from quire.retrieval.tokenize import STEMMERS, snowball

FIXTURES = Path(__file__).parent / "fixtures" / "markup"


def plain(algorithm: str):
    """The stemmer as snowballstemmer ships it (``snowball`` installs the dict lookups)."""
    stemmer = snowball(algorithm)
    return type(stemmer)()


def endings(stemmer) -> list[str]:
    tables = [v for v in vars(type(stemmer)).values() if isinstance(v, list) and v and hasattr(v[0], "substring_i")]
    return sorted({w.s for table in tables for w in table})


def words(language: str, stemmer) -> list[str]:
    text = " ".join(p.read_text(errors="replace") for p in sorted(FIXTURES.rglob("*")) if p.suffix in (".md", ".html", ".txt"))
    found = set(re.findall(r"[^\W\d_]+", text.casefold())) | set(BY_LANGUAGE.get(language, ()))
    ends = endings(stemmer)
    letters = sorted(set("".join(ends)) | set("abcdefghijklmnopqrstuvwxyz"))
    rnd = random.Random(language)
    for _ in range(4000):
        stem = "".join(rnd.choice(letters) for _ in range(rnd.randint(0, 8)))
        found.add(stem + rnd.choice(ends) + (rnd.choice(ends) if rnd.random() < 0.3 else ""))
    return sorted(found)


@pytest.mark.parametrize("language", [lang for lang, alg in STEMMERS.items() if alg])
def test_dict_lookups_stem_every_word_as_snowball_does(language):
    fast, slow = snowball(STEMMERS[language]), plain(STEMMERS[language])
    assert fast.find_among_b.__func__ is among.find_among_b and slow.find_among_b.__func__ is not among.find_among_b
    vocabulary = words(language, slow)
    assert len(vocabulary) > 4000
    different = [(w, slow.stemWord(w), fast.stemWord(w)) for w in vocabulary if slow.stemWord(w) != fast.stemWord(w)]
    assert different == []


def test_a_wrong_lookup_would_be_seen():
    """The comparison can fail: a lookup that stops at the shortest ending stems differently."""
    def shortest_first(self, v):
        index, lengths, empty, _ = among._table(v, True)
        c, current = self.cursor, self.current
        for n in sorted(set(len(w.s) for w in v if w.s)):
            i = index.get(current[c - n:c]) if n <= c - self.limit_backward else None
            if i is not None:
                self.cursor = c - n
                return v[i].result
        return 0

    wrong, slow = plain("english"), plain("english")
    wrong.find_among_b = shortest_first.__get__(wrong)
    assert [w for w in ("generalizations", "relational", "hopefulness") if wrong.stemWord(w) != slow.stemWord(w)]

