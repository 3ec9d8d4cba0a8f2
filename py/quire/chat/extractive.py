"""The answer when no model is connected: the best passages, with the query's words marked.

Highlighting uses the retrieval tokenizer, so it marks exactly the words
search matched: "dividing" is marked for the query "division" when both stem
to the same term, and stopwords are never marked.

>>> from quire.retrieval.tokenize import Tokenizer
>>> text = "Cells divide by mitosis. Dividing cells copy their DNA first."
>>> spans = highlight_spans(text, query_terms("How do cells divide?", Tokenizer("en")), Tokenizer("en"))
>>> [text[a:b] for a, b in spans]
['Cells', 'divide', 'Dividing', 'cells']
"""

from __future__ import annotations

import re
from typing import Callable

from quire.chat.answer import citations_for
from quire.retrieval.query import query_terms as search_terms
from quire.retrieval.relevance import WEAK_MESSAGE, coverage, is_weak
from quire.retrieval.tokenize import TOKEN, Tokenizer  # the same word pattern search uses

LABEL = "Search results — no AI summary (no model connected)"
FAILED_LABEL = "Search results — no AI summary (the model server failed; see the message above)"
TOP_PASSAGES = 5  # passages shown without a model
SNIPPET_CHARS = 240  # a best-sentence snippet longer than this is cut around its first match
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+[\"')\]]*|\n|$)")
_WORD = re.compile(r"\w+")


def query_terms(query: str, tokenizer: Tokenizer) -> set[str]:
    return set(tokenizer(query))


def terms_by_language(query: str, languages, tokenizer_for: Callable[[str], Tokenizer]) -> dict[str, set[str]]:
    """The terms search scored for each language (function words of the query's language dropped
    everywhere, as ``quire.retrieval.query`` does), so highlights agree with the ranking.

    >>> terms_by_language("What is it in German?", ["de"], Tokenizer)
    {'de': {'german'}}
    """
    cache: dict = {}

    def with_extra(lang: str, extra: frozenset) -> Tokenizer:
        own = tokenizer_for(lang)
        if not extra:
            return own
        if (lang, extra) not in cache:
            cache[lang, extra] = Tokenizer(lang, stopwords=own.stopwords | extra)
        return cache[lang, extra]

    return {lang: set(terms) for lang, terms in search_terms(query, sorted(set(languages)), with_extra).items()}


def highlight_spans(text: str, terms: set[str], tokenizer: Tokenizer) -> list[tuple[int, int]]:
    """``(start, end)`` of every word in ``text`` whose term is one of ``terms``.

    A compound such as ``ISO-9001`` is marked whole when the query named it
    whole, otherwise only its matching parts.
    """
    if not terms:
        return []
    spans = []
    for m in TOKEN.finditer(text):
        got = tokenizer(m.group())
        if not terms.intersection(got):
            continue
        parts = list(_WORD.finditer(m.group()))
        if len(parts) > 1 and got[0] in terms:  # a compound's first term is the whole identifier
            spans.append((m.start(), m.end()))
            continue
        spans += [(m.start() + p.start(), m.start() + p.end()) for p in parts if terms.intersection(tokenizer(p.group()))]
    return spans


def best_sentence(text: str, terms: set[str], tokenizer: Tokenizer, max_chars: int = SNIPPET_CHARS) -> dict:
    """The sentence with the most distinct query terms (ties: more matches, then earliest).

    Returns ``{"text", "start", "end", "highlights"}``; highlights are relative to the snippet.
    """
    best, best_key = None, None
    for m in _SENTENCE.finditer(text):
        sentence = m.group()
        if not sentence.strip():
            continue
        found = set(tokenizer(sentence)) & terms
        key = (len(found), sum(1 for t in tokenizer(sentence) if t in terms))
        if best_key is None or key > best_key:
            best, best_key = m, key
    if best is None:
        return {"text": "", "start": 0, "end": 0, "highlights": []}
    start, end = best.start(), best.end()
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end - start > max_chars:
        spans = highlight_spans(text[start:end], terms, tokenizer)
        focus = start + (spans[0][0] if spans else 0)
        start = max(start, min(focus - max_chars // 3, end - max_chars))
        end = min(end, start + max_chars)
    snippet = text[start:end]
    return {"text": snippet, "start": start, "end": end,
            "highlights": highlight_spans(snippet, terms, tokenizer)}


def hit_relevance(hit: dict, terms: set[str], passage: str, tokenizer: Tokenizer) -> float:
    """The hit's relevance from search (idf-weighted share of the query it matches); for a hit
    without one, the plain share of the query's terms in the passage.

    >>> hit_relevance({"relevance": 0.4}, set(), "", Tokenizer("en"))
    0.4
    >>> hit_relevance({}, {"cell", "divid"}, "Cells grow.", Tokenizer("en"))
    0.5
    """
    given = hit.get("relevance")
    if given is not None:
        return float(given)
    return round(coverage(dict.fromkeys(terms, 1.0), set(tokenizer(passage))), 3)


def extractive_answer(query: str, hits: list[dict], *, tokenizer_for: Callable[[str], Tokenizer] | None = None,
                      language: str = "en", top: int = TOP_PASSAGES) -> dict:
    """The no-model answer for ``hits`` (dicts as ``answer.citations_for`` takes).

    ``tokenizer_for(language)`` should be the index's own (``HybridIndex.tokenizer``)
    so highlighting agrees with search; a hit's ``language`` picks the tokenizer.
    Each result's ``relevance`` (0..1) says how much of the query the passage
    matches; when even the best is below ``relevance.WEAK`` the answer says so
    (``weak``, and in the label) instead of presenting a poor match as the answer.
    """
    cache: dict[str, Tokenizer] = {}
    tokenizer_for = tokenizer_for or (lambda lang: cache.setdefault(lang, Tokenizer(lang)))
    citations = citations_for(hits, limit=top)
    shown = hits[:len(citations)]
    terms = terms_by_language(query, [h.get("language") or language for h in shown] or [language], tokenizer_for)
    results = []
    for citation, hit in zip(citations, shown):
        lang = hit.get("language") or language
        tokenizer = tokenizer_for(lang)
        passage = citation["passage"]
        results.append({**citation, "relevance": hit_relevance(hit, terms[lang], passage, tokenizer),
                        "highlights": highlight_spans(passage, terms[lang], tokenizer),
                        "snippet": best_sentence(passage, terms[lang], tokenizer)})
    weak = bool(results) and is_weak(max(r["relevance"] for r in results))
    return {"kind": "extractive", "label": f"{LABEL}. {WEAK_MESSAGE}" if weak else LABEL, "query": query,
            "results": results, "weak": weak,
            "message": WEAK_MESSAGE if weak else "" if results else "Nothing in the chosen documents matches these words."}
