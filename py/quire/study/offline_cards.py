"""Cloze flashcards made without a model: key sentences with key terms blanked.

For each chunk, TF-IDF key phrases (scored against the whole scope) mark what
the chunk is about; a sentence that contains one or two of them becomes a
card with those phrases hidden.  Chunks take turns, so a deck covers the scope
instead of the first chapter.

Example: the sentence "The literature graph is a property graph with directed
edges." with key phrase "directed edges" becomes
"The literature graph is a property graph with {{c1::directed edges}}."
"""

from __future__ import annotations

from quire.model import Chunk, location_label
from quire.study.items import stamp
from quire.study.select import study_chunks
from quire.study.text import find_phrase, scope_phrases, study_sentences

MAX_DELETIONS = 2  # more blanks per sentence make a card a guessing game


def candidate_sentences(chunks: list[Chunk], per_chunk_phrases: int = 8) -> list[list[dict]]:
    """Per chunk, its study sentences with the key phrases found in each, best first.

    Each entry: ``{"sentence", "spans": [(start, end, phrase)], "score"}``.
    """
    phrases = scope_phrases(chunks, per_chunk_phrases)
    out = []
    for chunk, chunk_phrases in zip(chunks, phrases):
        found = []
        for sentence in study_sentences(chunk):
            spans, score = [], 0.0
            for phrase, weight in chunk_phrases:
                where = find_phrase(sentence, phrase)
                if where and not any(where[0] < e and s < where[1] for s, e, _ in spans):
                    spans.append((where[0], where[1], phrase))
                    score += weight
            if spans:
                found.append({"sentence": sentence, "spans": sorted(spans), "score": score})
        found.sort(key=lambda c: -c["score"])
        out.append(found)
    return out


def cloze_text(sentence: str, spans: list[tuple[int, int, str]]) -> str:
    """Hide each span as ``{{cN::...}}`` in reading order, keeping the original words.

    >>> cloze_text("BM25 ranks documents by term weight.", [(0, 4, "bm25"), (24, 35, "term weight")])
    '{{c1::BM25}} ranks documents by {{c2::term weight}}.'
    """
    out, last = [], 0
    for n, (start, end, _) in enumerate(sorted(spans), 1):
        out.append(sentence[last:start])
        out.append("{{c%d::%s}}" % (n, sentence[start:end]))
        last = end
    out.append(sentence[last:])
    return "".join(out)


def round_robin(lists: list[list]):
    """Yield ``(index, item)`` taking one from each list in turn."""
    depth = 0
    while any(depth < len(items) for items in lists):
        for i, items in enumerate(lists):
            if depth < len(items):
                yield i, items[depth]
        depth += 1


def make_cloze_cards(chunks: list[Chunk], count: int = 20) -> list[dict]:
    """Up to ``count`` cloze cards; each answer is a phrase of its source sentence.

    No phrase is the answer of two cards, so the deck does not drill one term.
    """
    chunks = study_chunks(chunks)
    cards, used = [], set()
    for index, cand in round_robin(candidate_sentences(chunks)):
        if len(cards) >= count:
            break
        spans = [s for s in cand["spans"] if s[2] not in used][:MAX_DELETIONS]
        if not spans:
            continue
        used.update(phrase for _, _, phrase in spans)
        chunk = chunks[index]
        item = {
            "type": "cloze",
            "text": cloze_text(cand["sentence"], spans),
            "extra": ", ".join(x for x in (chunk.source, location_label(chunk.location)) if x),
        }
        cards.append(stamp(item, [chunk], made_without_ai=True))
    return cards
