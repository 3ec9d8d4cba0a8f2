"""Quiz questions made without a model, from real sentences of the documents.

- True/false: a true item is a verbatim sentence; a false one is the same
  sentence with one key phrase swapped for another phrase of the scope
  ("... with directed edges." -> "... with font size.").
- Multiple choice: a sentence with one key phrase blanked; the other options
  are key phrases from elsewhere in the scope, of the same length if possible.

Swaps are not checked for meaning, so a "false" statement can, rarely, be
true by accident; the explanation always quotes the original sentence.
"""

from __future__ import annotations

import hashlib
import random

from quire.errors import InvalidInput
from quire.model import Chunk
from quire.study.items import stamp
from quire.study.offline_cards import round_robin, candidate_sentences
from quire.study.select import study_chunks
from quire.study.text import find_phrase, scope_phrases

BLANK = "_____"


def _rng(text: str) -> random.Random:
    """A random stream fixed by the text, so the same document gives the same quiz."""
    return random.Random(int(hashlib.sha256(text.encode()).hexdigest()[:12], 16))


def _others(pool: list[str], phrase: str, sentence: str, k: int, rng: random.Random) -> list[str]:
    """``k`` phrases from ``pool`` unlike ``phrase`` and absent from ``sentence``; same length first."""
    fits = [p for p in pool if p != phrase and p not in phrase and phrase not in p and not find_phrase(sentence, p)]
    same = [p for p in fits if p.count(" ") == phrase.count(" ")]
    rest = [p for p in fits if p not in same]
    rng.shuffle(same)
    rng.shuffle(rest)
    return (same + rest)[:k]


def _match_case(original: str, replacement: str) -> str:
    """Keep an all-caps or capitalised look: ("BM25", "tf") -> "TF"."""
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def true_false(sentence: str, span: tuple[int, int, str], pool: list[str], make_false: bool) -> dict | None:
    """One true/false item from a sentence; ``None`` if no swap partner exists.

    >>> true_false("Papers cite papers.", (0, 6, "papers"), ["authors"], True)["question"]
    'Authors cite papers.'
    """
    quote = f"The source says: \u201c{sentence}\u201d"
    if not make_false:
        return {"type": "true_false", "question": sentence, "options": ["True", "False"], "answer": 0,
                "explanation": quote}
    start, end, phrase = span
    swap = _others(pool, phrase, sentence, 1, _rng(sentence))
    if not swap:
        return None
    statement = sentence[:start] + _match_case(sentence[start:end], swap[0]) + sentence[end:]
    return {"type": "true_false", "question": statement, "options": ["True", "False"], "answer": 1,
            "explanation": f"{quote} (not \u201c{swap[0]}\u201d)"}


def multiple_choice(sentence: str, span: tuple[int, int, str], pool: list[str], n_options: int = 4) -> dict | None:
    """A fill-in-the-blank question with distractors from ``pool``; ``None`` if too few."""
    start, end, phrase = span
    rng = _rng(sentence + phrase)
    distractors = _others(pool, phrase, sentence, n_options - 1, rng)
    if len(distractors) < n_options - 1:
        return None
    answer_text = sentence[start:end]
    options = [answer_text] + [_match_case(answer_text, d) for d in distractors]
    rng.shuffle(options)
    return {
        "type": "multiple_choice",
        "question": f"Which term completes the sentence? \u201c{sentence[:start]}{BLANK}{sentence[end:]}\u201d",
        "options": options,
        "answer": options.index(answer_text),
        "explanation": f"The source says: \u201c{sentence}\u201d",
    }


def make_quiz(chunks: list[Chunk], count: int = 10, kinds: tuple[str, ...] = ("multiple_choice", "true_false")) -> list[dict]:
    """Up to ``count`` questions alternating between ``kinds``, chunks taking turns.

    True/false items alternate between true and false; each sentence is used once.
    """
    unknown = set(kinds) - {"multiple_choice", "true_false"}
    if unknown or not kinds:
        raise InvalidInput(f"unknown question kinds {sorted(unknown)}; choose from multiple_choice, true_false")
    chunks = study_chunks(chunks)
    pool = sorted({p for phrases in scope_phrases(chunks) for p, _ in phrases})
    items = []
    for index, cand in round_robin(candidate_sentences(chunks)):
        if len(items) >= count:
            break
        kind = kinds[len(items) % len(kinds)]
        span = cand["spans"][0]
        if kind == "true_false":
            n_true_false = sum(i["type"] == "true_false" for i in items)
            item = true_false(cand["sentence"], span, pool, make_false=n_true_false % 2 == 1)
        else:
            item = multiple_choice(cand["sentence"], span, pool)
        if item:
            items.append(stamp(item, [chunks[index]], made_without_ai=True))
    return items
