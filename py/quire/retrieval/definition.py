"""Definitional passages: where a text says what a term *is*, for "What is X?" questions.

A question asking what something is wants the passage that defines it, not the one
that mentions it most.  Plain BM25 counts mentions: in the SPECTER paper "What is
SPECTER and how is it trained?" found page 8 ("as when training SPECTER", six
"training"s) before the abstract ("We propose SPECTER, a new method ... based on
pretraining").  Definition-question answering has long used surface patterns for
this (appositives, "X is a", "called X", "X: ..."; Hildebrandt, Katz & Lin 2004).

So the index gets a second field, as in BM25F: the terms a passage *defines*,
stored as terms of their own (``def:`` + term) next to its words, with their own
idf.  A definitional question ("What is X?", "Was ist X?", "Wann heißt ... X?",
"What does X mean?") adds X's terms of that field to the query.  Any other
question is scored exactly as before.  Cue words exist for English and German; in other
languages only the shape of titles and glossaries ("Term: what it is") counts.

>>> from quire.retrieval.tokenize import Tokenizer
>>> defined_terms("We propose SPECTER, a new method to embed papers.", Tokenizer("en"))
['def:specter']
>>> defined_terms("Eine Abbildung d heißt Metrik, wenn gilt:", Tokenizer("de"))
['def:metrik']
>>> focus("What is SPECTER and how is it trained?"), focus("How is SPECTER trained?")
('SPECTER', None)
"""

from __future__ import annotations

import re
import unicodedata

FIELD = "def:"  # tokens never contain ":", so a field term cannot collide with a word

_WORD = r"[^\W_][\w'’\-]*"
# The term being defined: one to four words, ending where a clause does.
_TERM = rf"({_WORD}(?:[ \t]+{_WORD}){{0,3}}?)"
_AFTER = r"(?=\s*(?:[,.;:!?(\n]|$|wenn\b|falls\b|if\b|when\b))"

# Where a text defines a term (group 1), per language: (cue words, pattern matched where a cue
# word starts).  Looking for the cue words first with str.find and trying the pattern only
# there keeps this cheap on every passage at Train (a regex scan from every position cost as
# much as tokenizing; most passages define nothing).
_RULES = {
    "en": [
        (("we", "they", " i "),
         rf"(?<!\w)(?:we|they|i)\s+(?:propose|introduce|present|define|call|name|term|dub)\s+{_TERM}{_AFTER}"),
        (("call", "known", "term", "referred", "denote"),
         rf"(?<!\w)(?:called|known\s+as|termed|referred\s+to\s+as|denoted\s+(?:as|by))\s+"
         rf"(?:(?:its|their|the|an?)\s+)?[‘'\"“]*{_TERM}{_AFTER}"),
    ],
    "de": [
        (("heißt", "heißen", "nennt", "nennen", "bezeichne"),
         rf"(?<!\w)(?:heißt|heißen|nennt\s+man|nennen\s+wir|bezeichnet\s+man\s+als|bezeichnen\s+wir\s+als)"
         rf"\s+{_TERM}{_AFTER}"),
        (("wird",), rf"(?<!\w)wird\s+(?:auch\s+)?{_TERM}\s+genannt\b"),
    ],
}
# Cues *preceded* by the term ("A topological space is a ..."): the up to three words before
# the cue are taken.
_COPULA = {
    "en": (("is", "are", "refers", "stands", "denote", "means"),
           r"(?<=\s)(?:(?:is|are)\s+(?:an?|defined\s+as|called)|refers\s+to|stands\s+for|denotes|means)\b"),
    "de": (("ist", "sind"), r"(?<=\s)(?:ist|sind)\s+(?:eine?|einer|definiert\s+als)\b"),
}
_TAIL = re.compile(rf"(?<![\w'’\-])((?:{_WORD}[ \t]+){{0,2}}{_WORD})[ \t]+$")
_LOOK_BACK = 80  # characters before a copula searched for its subject
# In any language: a term opening a line and followed by a colon ("SPECTER: Document-level ...",
# "AOA: angle of attack"), the shape of titles and glossaries.
_LABEL = re.compile(rf"[ \t]*{_TERM}[ \t]*:[ \t]+\S")
# Patterns run on lower-cased text (the tokenizer casefolds anyway): no IGNORECASE, which is slower.
_RULES_RE = {lang: [(cues, re.compile(p)) for cues, p in rules] for lang, rules in _RULES.items()}
_COPULA_RE = {lang: (cues, re.compile(p)) for lang, (cues, p) in _COPULA.items()}


def _at_cues(text: str, cues, pattern):
    """Matches of ``pattern`` where one of the ``cues`` starts in ``text``."""
    for cue in cues:
        i = text.find(cue)
        while i >= 0:
            m = pattern.match(text, i)
            if m:
                yield m
            i = text.find(cue, i + 1)


# Questions asking what a term is; the term is group "x".  "head": the term is a noun phrase
# whose modifiers after it only say where it lives ("the pitch attitude *of an airplane*",
# "ein Homöomorphismus *zwischen zwei Räumen*"): they are cut, or passages defining the
# airplane or the spaces would count as answers.  "Wann heißt X Y?" keeps all: Y is the term.
_X = r"(?P<x>.+?)"
_END = r"\s*(?:[?.!,;]|\band\b|\bor\b|\bund\b|\boder\b|$)"
_QUESTIONS = [(re.compile(p, re.IGNORECASE), head) for p, head in (
    (rf"^\s*(?:what|who)\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?{_X}{_END}", True),
    (rf"^\s*what\s+(?:does|do)\s+{_X}\s+(?:mean|stand\s+for)\b", True),
    (rf"^\s*what\s+is\s+meant\s+by\s+{_X}{_END}", True),
    (rf"^\s*(?:define|definition\s+of)\s+{_X}{_END}", True),
    (rf"^\s*was\s+(?:ist|sind|war|waren)\s+(?:eine?\s+|der\s+|die\s+|das\s+)?{_X}{_END}", True),
    (rf"^\s*was\s+(?:bedeutet|bedeuten|heißt|versteht\s+man\s+unter)\s+{_X}{_END}", True),
    (rf"^\s*wie\s+(?:ist|sind|wird|werden)\s+(?:eine?\s+|der\s+|die\s+|das\s+)?{_X}\s+definiert\b", True),
    (rf"^\s*wann\s+(?:heißt|heißen|nennt\s+man|ist|sind)\s+{_X}{_END}", False),
)]
# Words that open a modifier after the head noun (prepositions, articles of a genitive, relatives).
_MODIFIER = re.compile(
    r"\s(?:of|in|on|for|with|between|from|to|at|by|within|that|which|who|"
    r"zwischen|von|vom|für|mit|im|auf|an|am|bei|aus|über|unter|eines|einer|des|der|dem|den|die|das|"
    r"ein|eine|einem|einen|welche|welcher|welches|dass)\s.*$", re.IGNORECASE)


def focus(question: str) -> str | None:
    """The term a definitional question asks about, or None for any other question.

    >>> focus("Was ist ein topologischer Raum und welche Eigenschaften muss er haben?")
    'topologischer Raum'
    >>> focus("Wie ist die Euler-Charakteristik eines Simplizialkomplexes definiert?")
    'Euler-Charakteristik'
    >>> focus("What is the pitch attitude of an airplane?")
    'pitch attitude'
    """
    for pattern, head in _QUESTIONS:
        m = pattern.search(question)
        if m and m.group("x").strip():
            term = m.group("x").strip()
            return _MODIFIER.sub("", term) if head else term
    return None


def defined_terms(text: str, tokenize) -> list[str]:
    """Field terms (``def:`` + term) for what ``text`` defines, by ``tokenize``'s language.

    >>> from quire.retrieval.tokenize import Tokenizer
    >>> defined_terms("Ein topologischer Raum ist ein Paar (X, T).", Tokenizer("de"))
    ['def:topolog', 'def:raum']
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()  # not casefold: it turns "heißt" into "heisst"
    found: list[str] = []
    for cues, pattern in _RULES_RE.get(tokenize.language, ()):
        found.extend(t for m in _at_cues(text, cues, pattern) for t in tokenize(m.group(1)))
    if tokenize.language in _COPULA_RE:
        for m in _at_cues(text, *_COPULA_RE[tokenize.language]):
            subject = _TAIL.search(text, max(0, m.start() - _LOOK_BACK), m.start())
            if subject:
                found.extend(tokenize(subject.group(1)))
    if ":" in text:
        found.extend(t for line in text.splitlines() if ":" in line and (m := _LABEL.match(line))
                     for t in tokenize(m.group(1)))
    return [FIELD + t for t in dict.fromkeys(found)]


def field(terms) -> list[str]:
    """Query terms turned into terms of the definition field.

    >>> field(["topolog", "raum"])
    ['def:topolog', 'def:raum']
    """
    return [FIELD + t for t in terms]
