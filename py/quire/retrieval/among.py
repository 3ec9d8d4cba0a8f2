"""Snowball's ``among`` lookup by dictionary: the same stems, a fraction of the time.

snowballstemmer (pure Python) finds which of a table of endings a word has with a binary
search that compares one character per step; that search was most of stemming, and
stemming half of a Train of 5,000 notes.  An ``among`` table's answer is its longest entry
that matches at the cursor (then, if that entry's condition fails, the longest entry inside
it, and so on: ``substring_i``), so slicing the word at each possible length and looking the
slice up in a dict finds the same entry.  ``install`` puts these lookups on one stemmer
object; ``tests/test_among.py`` checks every word of a large vocabulary stems the same way
with and without them, for every language Quire stems.

>>> from quire.retrieval.tokenize import snowball
>>> install(snowball("english")).stemWord("generalizations")
'general'
"""

from __future__ import annotations

import types

_tables: dict[int, tuple] = {}


def _table(v, backward: bool) -> tuple:
    """For one table: ``{entry string: index}``, the lengths of the entries that end (backward)
    or begin (forward) with each character, longest first, and the index of ``""`` (or None).
    Most words end in a character no long entry ends with: those lengths are never tried."""
    key = (id(v), backward)
    known = _tables.get(key)
    if known is None or known[3] is not v:
        index = {w.s: i for i, w in enumerate(v)}
        lengths: dict[str, set[int]] = {}
        for w in v:
            if w.s:
                lengths.setdefault(w.s[-1] if backward else w.s[0], set()).add(len(w.s))
        known = _tables[key] = (index, {ch: sorted(n, reverse=True) for ch, n in lengths.items()}, index.get(""), v)
    return known


def find_among(self, v):
    """``BaseStemmer.find_among`` (forwards from the cursor), by dictionary."""
    index, lengths, empty, _ = _table(v, False)
    c, current, room = self.cursor, self.current, self.limit - self.cursor
    i = empty
    if room > 0:
        for n in lengths.get(current[c], ()):
            if n <= room:
                found = index.get(current[c:c + n])
                if found is not None:
                    i = found
                    break
    if i is None:
        return 0
    while True:
        w = v[i]
        self.cursor = c + len(w.s)
        if w.method is None or w.method(self):
            self.cursor = c + len(w.s)
            return w.result
        i = w.substring_i
        if i < 0:
            return 0


def find_among_b(self, v):
    """``BaseStemmer.find_among_b`` (backwards from the cursor), by dictionary."""
    index, lengths, empty, _ = _table(v, True)
    c, current, room = self.cursor, self.current, self.cursor - self.limit_backward
    i = empty
    if room > 0:
        for n in lengths.get(current[c - 1], ()):
            if n <= room:
                found = index.get(current[c - n:c])
                if found is not None:
                    i = found
                    break
    if i is None:
        return 0
    while True:
        w = v[i]
        self.cursor = c - len(w.s)
        if w.method is None or w.method(self):
            self.cursor = c - len(w.s)
            return w.result
        i = w.substring_i
        if i < 0:
            return 0


def install(stemmer):
    """``stemmer`` with the dictionary lookups in place of its binary searches."""
    stemmer.find_among = types.MethodType(find_among, stemmer)
    stemmer.find_among_b = types.MethodType(find_among_b, stemmer)
    return stemmer
