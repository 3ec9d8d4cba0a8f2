"""From retrieval hits to the chat request, and from the answer back to citations.

Citations are built *before* the model writes: passage ``n`` in the prompt is
``citations[n - 1]``, so a marker ``[n]`` in the streamed text can become a
link the moment it arrives.

>>> hits = [{"chunk_id": "bio.pdf:0", "source": "Biology notes.pdf", "location": {"page": 5},
...          "text": "Mitosis makes two cells.", "score": 0.03}]
>>> print(format_context(citations_for(hits)))
[1] Biology notes.pdf, p. 5
Mitosis makes two cells.
>>> [m.numbers for m in find_markers("Two cells [1][3], see [2, 3].", 3)]
[(1,), (3,), (2, 3)]
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from quire import prompts
from quire.errors import InvalidInput
from quire.model import location_label, parse_chunk_id

ANSWER_HITS = 7  # passages in one answer's context (retrieval.fusion.ANSWER_K)
USER_MARKER = "=== user ==="  # chat.md: above is the system prompt, below the user message
MAX_MARKER_NUMBERS = 10  # "[1, 2, ..., 10]" at most; longer lists are not citations
NO_PASSAGES = "(No passages in the chosen documents matched this question.)"


# --- citations -------------------------------------------------------------------
def _source_id(hit: dict) -> str:
    if hit.get("source_id"):
        return str(hit["source_id"])
    return parse_chunk_id(hit.get("chunk_id", ""))[0]


def hit_scores(hit: dict) -> dict:
    """The retrieval evidence of a hit (fused score and each retriever's rank/score).

    >>> hit_scores({"chunk_id": "bio:0", "score": 0.03, "bm25_rank": 1, "dense_rank": None})
    {'score': 0.03, 'bm25_rank': 1}
    """
    return {key: hit[key] for key in ("score", "bm25_rank", "bm25_score", "dense_rank", "dense_score")
            if hit.get(key) is not None}


def citations_for(hits: list[dict], limit: int = ANSWER_HITS) -> list[dict]:
    """Numbered citations for the top ``limit`` hits; ``n`` is what the model cites."""
    out = []
    for n, hit in enumerate(hits[:limit], 1):
        source_id = _source_id(hit)
        out.append({
            "n": n, "chunk_id": hit.get("chunk_id", ""), "source_id": source_id,
            "source": hit.get("source") or hit.get("source_name") or source_id,
            "location": hit.get("location") or {}, "location_label": location_label(hit.get("location")),
            "passage": (hit.get("text") or "").strip(), "scores": hit_scores(hit),
        })
    return out


def format_context(citations: list[dict]) -> str:
    """Numbered context blocks ``[n] source, location`` + passage, blank-line separated."""
    if not citations:
        return NO_PASSAGES
    blocks = []
    for c in citations:
        where = ", ".join(x for x in (c["source"], c["location_label"]) if x)
        blocks.append(f"[{c['n']}] {where}\n{c['passage']}")
    return "\n\n".join(blocks)


# --- scope and prompt -----------------------------------------------------------------
def scope_statement(scope: dict | None) -> str:
    """The sentence that pins the answer to the chosen documents.

    >>> scope_statement({"sources": [{"id": "a", "name": "Biology notes.pdf"}, {"id": "b", "name": "Lecture 3.pptx"}]})
    'Answer only from: Biology notes.pdf, Lecture 3.pptx.'
    >>> scope_statement({"category": "Exam 2"})
    "Answer only from the documents in the category 'Exam 2'."
    """
    if not scope:
        return "Answer only from the documents in the student's library."
    if scope.get("category"):
        return f"Answer only from the documents in the category '{' '.join(str(scope['category']).split())}'."
    if scope.get("sources"):
        # one line each: a file name must not be able to break the template's "=== user ===" split
        names = [" ".join(str(s.get("name") or s.get("id", "") if isinstance(s, dict) else s).split())
                 for s in scope["sources"]]
        return f"Answer only from: {', '.join(names)}."
    raise InvalidInput(f"a chat scope is None, {{'category': ...}} or {{'sources': [...]}}, not {scope!r}")


def search_scope(scope: dict | None):
    """The ``scope`` argument ``HybridIndex.search`` takes: None, a category, or source ids."""
    if not scope:
        return None
    if scope.get("category"):
        return scope["category"]
    return [s["id"] if isinstance(s, dict) else s for s in scope.get("sources", [])]


def today_text(now: _dt.date | None = None) -> str:
    """The date line of the prompt.

    >>> today_text(_dt.date(2025, 3, 4))
    'Tuesday, 2025-03-04'
    """
    now = now or _dt.date.today()
    return f"{now.strftime('%A')}, {now.isoformat()}"


def split_roles(text: str) -> tuple[str, str]:
    """(system, user) from a rendered chat template; without the marker it is all user."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == USER_MARKER:
            return "\n".join(lines[:i]).strip(), "\n".join(lines[i + 1:]).strip()
    return "", text.strip()


def chat_values(question: str, citations: list[dict], scope: dict | None, today: str) -> dict:
    """Exactly the values ``prompts/chat.md`` gets (``TEMPLATE_VARIABLES["chat"]``)."""
    return {"question": question.strip(), "context": format_context(citations),
            "scope": scope_statement(scope), "today": today}


def build_request(question: str, hits: list[dict], *, scope: dict | None = None, history: list[dict] = (),
                  today: str | None = None, overrides: dict | None = None) -> dict:
    """``{"messages", "citations"}`` for one question: system prompt, earlier turns, then
    the question with its passages.  The scope is stated in both the system prompt and
    the user message, since small models follow the latter far more reliably."""
    citations = citations_for(hits)
    text = prompts.render("chat", chat_values(question, citations, scope, today or today_text()), overrides)
    system, user = split_roles(text)
    messages = ([{"role": "system", "content": system}] if system else []) + list(history)
    messages.append({"role": "user", "content": user})
    return {"messages": messages, "citations": citations}


# --- citation markers in the answer -----------------------------------------------
@dataclass(frozen=True)
class Marker:
    """``[2, 3]`` at ``text[start:end]`` citing passages 2 and 3."""

    start: int
    end: int
    numbers: tuple[int, ...]


# [1]  [2,3]  [2, 3]  [1-3]  [1–3]; not followed by "(" (that is a Markdown link).
_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3}|\s*[-–]\s*\d{1,3})*)\](?!\()")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TICKS = re.compile(r"`+")


def code_spans(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """Ranges of fenced blocks and inline code, and where the first unclosed one starts.

    An unclosed fence runs to the end (as Markdown renders it); an unclosed
    backtick run is literal text, but more text could still close it.

    >>> code_spans("a `x[1]` b\\n```\\ny[2]\\n```\\n")
    ([(2, 8), (11, 24)], None)
    >>> code_spans("a `b [1]")
    ([], 2)
    """
    ranges: list[tuple[int, int]] = []
    prose: list[tuple[int, int]] = []
    pos, fence, fence_start, prose_start = 0, None, 0, 0
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            prose.append((prose_start, pos))
            fence, fence_start = m.group(1), pos
        elif fence is None and not line.strip():  # code spans never cross a blank line
            prose.append((prose_start, pos))
            prose_start = pos + len(line)
        elif fence is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not line[m.end():].strip():
            ranges.append((fence_start, pos + len(line)))
            fence, prose_start = None, pos + len(line)
        pos += len(line)
    if fence is None:
        prose.append((prose_start, len(text)))
    unclosed = _inline(text, prose, ranges)
    if fence is not None:
        ranges.append((fence_start, len(text)))
        unclosed = fence_start if unclosed is None else min(unclosed, fence_start)
    ranges.sort()
    return ranges, unclosed


def _inline(text: str, prose: list[tuple[int, int]], ranges: list) -> int | None:
    """Add inline code ranges inside ``prose`` (a run closes at the next run of the same
    length); return where the first run without a closer starts."""
    first_unclosed = None
    for a, b in prose:
        runs = list(_TICKS.finditer(text, a, b))
        i = 0
        while i < len(runs):
            opener = runs[i]
            closer = next((j for j in range(i + 1, len(runs)) if len(runs[j].group()) == len(opener.group())), None)
            if closer is None:
                first_unclosed = opener.start() if first_unclosed is None else first_unclosed
                i += 1
                continue
            ranges.append((opener.start(), runs[closer].end()))
            i = closer + 1
    return first_unclosed


def _numbers(body: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in re.split(r"\s*[,;]\s*", body):
        if re.search(r"[-–]", part):
            lo, hi = (int(x) for x in re.split(r"\s*[-–]\s*", part))
            out += range(lo, hi + 1) if lo <= hi and hi - lo < MAX_MARKER_NUMBERS else []
        else:
            out.append(int(part))
    return tuple(dict.fromkeys(out))[:MAX_MARKER_NUMBERS]


def find_markers(text: str, max_n: int | None = None) -> list[Marker]:
    """Citation markers outside code, keeping numbers 1..max_n (a marker citing none is dropped)."""
    ranges, _ = code_spans(text)
    out = []
    for m in _MARKER.finditer(text):
        if any(a <= m.start() < b for a, b in ranges):
            continue
        numbers = tuple(n for n in _numbers(m.group(1)) if n >= 1 and (max_n is None or n <= max_n))
        if numbers:
            out.append(Marker(m.start(), m.end(), numbers))
    return out


def cited(text: str, citations: list[dict]) -> dict:
    """Which citations the answer used, in order of first use, and any numbers it made up.

    >>> cs = [{"n": 1}, {"n": 2}]
    >>> cited("A [2]. B [1][2]. C [9].", cs)
    {'used': [2, 1], 'unknown': [9]}
    """
    known = {c["n"] for c in citations}
    used, unknown = [], []
    for marker in find_markers(text):
        for n in marker.numbers:
            bucket = used if n in known else unknown
            if n not in bucket:
                bucket.append(n)
    return {"used": used, "unknown": unknown}


class MarkerStream:
    """``find_markers`` for text arriving in pieces: ``feed`` returns markers that are final.

    A marker is held back while what follows could still change it (``[1`` may
    become ``[12]``, ``[1]`` may become a link ``[1](...)``, a backtick may
    open code).  After ``close()`` the markers returned equal
    ``find_markers(whole_text, max_n)``.

    >>> s = MarkerStream(3)
    >>> s.feed("Cells divide [1"), s.feed("] and [2]"), s.close()
    ([], [Marker(start=13, end=16, numbers=(1,))], [Marker(start=21, end=24, numbers=(2,))])
    """

    def __init__(self, max_n: int | None = None):
        self.max_n, self.text, self._emitted = max_n, "", 0  # _emitted: end of the last marker returned

    def feed(self, piece: str) -> list[Marker]:
        self.text += piece
        return self._take(self._stable_end())

    def close(self) -> list[Marker]:
        return self._take(len(self.text))

    def _stable_end(self) -> int:
        text = self.text
        end = len(text) - 1  # the next character decides "[1]" vs "[1](link)"
        bracket = text.rfind("[")
        if bracket > text.rfind("]"):
            end = min(end, bracket)
        _, unclosed = code_spans(text)
        if unclosed is not None:
            end = min(end, unclosed)
        tail = len(text) - len(text.rstrip("`~"))  # a run of ticks may still grow into a fence
        if tail:
            end = min(end, len(text) - tail)
        return end

    def _take(self, limit: int) -> list[Marker]:
        new = [m for m in find_markers(self.text, self.max_n) if m.start >= self._emitted and m.end <= limit]
        if new:
            self._emitted = new[-1].end
        return new
