"""Cut units into overlapping chunks at natural boundaries.

Guarantees (property-tested in tests/test_chunking.py):

* spans ``[start, end)`` index the unit's text, never begin or end on
  whitespace, and strictly increase in both start and end;
* every non-whitespace character of the unit lies in some span;
* ``end - start <= size``, hence ``len(chunk.text) <= PREFIX_MAX + size``;
* the prefixes repeated across a source's chunks add at most twice the source's
  own text (plus ``PREFIX_SLACK``), so a hostile header or heading path cannot
  blow a small file up into hundreds of megabytes of passages;
* consecutive spans overlap by at most ``overlap`` characters, with no slack:
  the overlap is shrunk to the next word start, never grown, and dropped when
  keeping it would force a cut inside a word;
* spans start and end at word boundaries, except inside a single run of
  non-space text longer than ``size`` (a URL, unspaced Chinese), which is cut
  hard -- but never between a character and its combining marks, inside a
  ZWJ emoji sequence, or between the halves of a surrogate pair.

Where to cut, in order of preference, looking at the second half of the
window: the last paragraph break, the last sentence end, the last line
break; failing those the last space anywhere in the window.

>>> spans("One. Two. Three.", size=10, overlap=0)
[(0, 9), (10, 16)]
>>> spans("One. Two. Three.", size=12, overlap=5)
[(0, 9), (5, 16)]
"""

from __future__ import annotations

import re
import unicodedata

from quire.model import Chunk, Unit

_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")
# Latin/Arabic sentence ends need a following space; CJK ones do not.
_SENTENCE = re.compile(r"[.!?…؟]['\"”’»)\]]*(?=\s)|[。！？][」』”’）)]*")
_LINE = re.compile(r"\n")
_SPACE = re.compile(r"\s")
_NONSPACE = re.compile(r"\S")
_WORD_START = re.compile(r"(?<=\s)\S")

PREFIX_MAX = 400  # characters of a unit's prefix (breadcrumb, header row) repeated per chunk
PREFIX_SLACK = 200_000  # prefix characters every source may spend before the 2x-its-text budget applies


def _is_extender(ch: str) -> bool:
    """Characters that belong to the one before them and so cannot start a chunk."""
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or ch in "\u200d\u200c"
        or "\ufe00" <= ch <= "\ufe0f"  # variation selectors
        or "\U0001f3fb" <= ch <= "\U0001f3ff"  # skin-tone modifiers
        or "\udc00" <= ch <= "\udfff"  # low surrogate, only in strings built from UTF-16
    )


def _hard_cut(text: str, pos: int, cut: int) -> int:
    """Move a mid-word cut left until it does not split a character cluster."""
    c = cut
    while c > pos + 1 and (_is_extender(text[c]) or text[c - 1] == "\u200d"):
        c -= 1
    return c


def _last(pattern: re.Pattern, text: str, lo: int, limit: int, use_end: bool = False) -> int | None:
    """Last cut from pattern in (lo, limit]: a match's start, or its end if use_end."""
    best = None
    for m in pattern.finditer(text, lo + 1 if not use_end else lo, limit + 1):
        cut = m.end() if use_end else m.start()
        if lo < cut <= limit:
            best = cut
    return best


def _cut(text: str, pos: int, size: int) -> int:
    """Exclusive end of the chunk that starts at pos, before trimming whitespace."""
    limit = pos + size
    if limit >= len(text):
        return len(text)
    half = pos + size // 2
    for pattern in (_PARAGRAPH, _SENTENCE, _LINE):
        cut = _last(pattern, text, half, limit, use_end=pattern is _SENTENCE)
        if cut is not None:
            return cut
    cut = _last(_SPACE, text, pos, limit)
    return cut if cut is not None else _hard_cut(text, pos, limit)


def _end(text: str, pos: int, size: int) -> int:
    end = _cut(text, pos, size)
    while end > pos + 1 and text[end - 1].isspace():
        end -= 1
    return end


def spans(text: str, size: int = 1000, overlap: int = 100) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the chunks of one text."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got size={size}, overlap={overlap}")
    out: list[tuple[int, int]] = []
    first = _NONSPACE.search(text)
    pos = first.start() if first else None
    while pos is not None:
        end = _end(text, pos, size)
        out.append((pos, end))
        after = _NONSPACE.search(text, end)
        if after is None:
            break
        pos = after.start()
        if overlap:
            # Back up to the first word start within `overlap` chars of the end.
            lo = max(out[-1][0] + 1, end - overlap)
            back = _WORD_START.search(text, lo, end) if lo < end else None
            # ...unless the overlapping chunk would end no later than this one.
            if back is not None and _end(text, back.start(), size) > end:
                pos = back.start()
    return out


def fit_prefix(prefix: str) -> str:
    """A prefix cut to ``PREFIX_MAX`` characters, still ending in its line break.

    >>> fit_prefix("[Section: " + "x" * 500 + "]\\n")[-4:]
    'xx…\\n'
    """
    if len(prefix) <= PREFIX_MAX:
        return prefix
    return prefix[: PREFIX_MAX - 2] + "…\n"


def chunk_units(source_id: str, units: list[Unit], size: int = 1000, overlap: int = 100) -> list[Chunk]:
    """Chunks for all units of one source; each text is ``unit.prefix + slice``.

    Once the prefixes have cost twice the units' own text (plus ``PREFIX_SLACK``),
    later chunks go without one: their location still says where they are.

    >>> [c.text for c in chunk_units("s", [Unit("Alpha beta.", {"page": 1}, "[p1]\\n")], size=20, overlap=5)]
    ['[p1]\\nAlpha beta.']
    """
    budget = 2 * sum(len(unit.text) for unit in units) + PREFIX_SLACK
    chunks = []
    for unit in units:
        prefix = fit_prefix(unit.prefix)
        for start, end in spans(unit.text, size, overlap):
            if len(prefix) > budget:
                prefix = ""
            budget -= len(prefix)
            chunks.append(Chunk(source_id, dict(unit.location), start, end, prefix + unit.text[start:end],
                                n=len(chunks)))
    return chunks
