"""Text helpers shared by the study tools: clean-up, sentences, key phrases.

PDF text arrives with hard line breaks, words split across lines and
ligatures.  ``normalize`` undoes just that, so that a sentence shown on a card
can be found again in ``normalize(chunk.text)``.

>>> normalize("the litera-\\nture graph\\n is  big")
'the literature graph is big'
"""

from __future__ import annotations

import re
import unicodedata

from quire.model import Chunk

# Words that end with a dot but do not end a sentence.
_ABBREVIATIONS = {
    "e.g", "i.e", "al", "fig", "figs", "eq", "eqs", "sec", "cf", "vs", "etc",
    "dr", "mr", "mrs", "ms", "prof", "no", "vol", "pp", "approx", "resp", "st",
}
_HYPHEN_BREAK = re.compile(r"([a-z])-\s*\n\s*([a-z])")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]?\s+(?=[\"'(\[]?[A-Z])")
_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+([A-Z][A-Za-z][^.!?:;]{0,70})$")
_REFERENCES = re.compile(r"^(\d{1,2}\.?\s+)?(References|Bibliography|Works Cited)$", re.IGNORECASE)
_URL = re.compile(r"\S*(?:https?://|www\.|\.com\b|\.org\b|@)\S*")
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)

# What a sentence must look like to become a card or a quiz question.
MIN_WORDS, MAX_WORDS = 8, 40


def normalize(text: str) -> str:
    """NFKC (ligatures), re-join words hyphenated across lines, collapse spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = _HYPHEN_BREAK.sub(r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of already-normalized text; abbreviations do not end one.

    >>> split_sentences("We use BM25 (e.g. Robertson et al. 2009). It works. ok")
    ['We use BM25 (e.g. Robertson et al. 2009).', 'It works. ok']
    """
    out, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start() + 1]
        last = before.rsplit(None, 1)[-1].rstrip(".").lower() if before.strip() else ""
        last = re.sub(r"^\W+", "", last)
        if last in _ABBREVIATIONS or re.fullmatch(r"[a-z]", last):
            continue
        out.append(text[start : match.end()].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def is_study_sentence(sentence: str) -> bool:
    """A clean, self-contained prose sentence (not a caption, header or reference).

    >>> is_study_sentence("The literature graph is a directed property graph which summarizes key information.")
    True
    >>> is_study_sentence("Figure 1: Part of the literature graph.")
    False
    """
    words = sentence.split()
    if not (MIN_WORDS <= len(words) <= MAX_WORDS):
        return False
    if not sentence[0].isupper() or sentence[-1] not in ".!?":
        return False
    if re.match(r"(Figure|Fig\.|Table|Proceedings|Copyright)\b", sentence):
        return False
    if any(mark in sentence for mark in ("@", "http", "www.", "�", "\u2022")):
        return False
    if sentence.count("(") != sentence.count(")"):
        return False
    letters = sum(ch.isalpha() for ch in sentence)
    return letters / len(sentence) > 0.7


def heading(line: str) -> tuple[str, str] | None:
    """``(number, title)`` of a numbered heading line, as papers and reports have.

    >>> heading("2.1 Node Types"), heading("2017). We describe")
    (('2.1', 'Node Types'), None)
    """
    match = _HEADING.match(line.strip())
    return (match.group(1), match.group(2).strip()) if match else None


def prose_blocks(raw: str) -> list[tuple[tuple[str, str] | None, str]]:
    """Split raw chunk text at heading lines; stop at a references section.

    Returns ``(heading or None, normalized text)`` pairs.  Every block's text is
    a substring of ``normalize(raw)``, so sentences found in it are too.
    """
    blocks: list[tuple[tuple[str, str] | None, list[str]]] = [(None, [])]
    for line in unicodedata.normalize("NFKC", raw).split("\n"):
        if _REFERENCES.match(line.strip()):
            break
        found = heading(line)
        if found:
            blocks.append((found, []))
        else:
            blocks[-1][1].append(line)
    return [(head, normalize("\n".join(lines))) for head, lines in blocks if head or any(lines)]


def study_sentences(chunk: Chunk) -> list[str]:
    """The study-worthy sentences of a chunk, verbatim from ``normalize(chunk.text)``."""
    return [s for _, block in prose_blocks(chunk.text) for s in split_sentences(block) if is_study_sentence(s)]


def find_phrase(sentence: str, phrase: str) -> tuple[int, int] | None:
    """Where ``phrase`` occurs in ``sentence`` as whole words, ignoring case.

    >>> find_phrase("The Literature Graph grows.", "literature graph")
    (4, 20)
    """
    words = [re.escape(w) for w in phrase.split()]
    pattern = r"(?<![\w-])" + r"\s+".join(words) + r"(?![\w-])"
    match = re.search(pattern, sentence, flags=re.IGNORECASE)
    return (match.start(), match.end()) if match else None


# Words that are never a key phrase on their own or at a phrase's edge.
_GENERIC = set("""
able also approach approaches based best better case cases different does done each
example examples first following general given gives good high important including large
like low make makes many may method methods more most much must new number order other
paper part present proposed provide provides result results second section several show
shown shows similar small some specific such table three two use used uses using various
way well work works yield yields figure et al fig
""".split())


def _phrase_analyzer(stop_words: frozenset, max_ngram: int):
    """Candidate phrases: n-grams inside runs of words with no stop word or punctuation."""
    token = re.compile(r"[^\W\d_][\w-]*[^\W_]|[.,;:!?()\[\]\"]")

    def analyze(text: str) -> list[str]:
        runs, run = [], []
        for tok in token.findall(_URL.sub(" . ", text.lower())):
            if tok in stop_words or not tok[0].isalpha():
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(tok)
        if run:
            runs.append(run)
        grams = []
        for run in runs:
            for n in range(1, max_ngram + 1):
                for i in range(len(run) - n + 1):
                    gram = run[i : i + n]
                    if gram[0] in _GENERIC or gram[-1] in _GENERIC:
                        continue
                    grams.append(" ".join(gram))
        return grams

    return analyze


def key_phrases(texts: list[str], *, per_text: int = 8, max_ngram: int = 3) -> list[list[tuple[str, float]]]:
    """Top TF-IDF phrases (1-3 words, no stop words) of each text, best first.

    A single word must occur at least twice in its text to count; a phrase
    that is part of a better one in the same text is dropped ("graph" under
    "literature graph").  Phrases are lowercase; ``find_phrase`` locates them.
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer  # lazy: heavy in the browser

    if not texts:
        return []
    analyzer = _phrase_analyzer(frozenset(ENGLISH_STOP_WORDS), max_ngram)
    vectorizer = TfidfVectorizer(analyzer=analyzer, sublinear_tf=True)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # no usable words at all
        return [[] for _ in texts]
    vocab = vectorizer.get_feature_names_out()
    corpus_counts: dict[str, int] = {}
    for text in texts:
        for gram in analyzer(text):
            corpus_counts[gram] = corpus_counts.get(gram, 0) + 1
    out = []
    for row, text in enumerate(texts):
        start, end = matrix.indptr[row], matrix.indptr[row + 1]
        counts: dict[str, int] = {}
        for gram in analyzer(text):
            counts[gram] = counts.get(gram, 0) + 1
        # Longer phrases get a small bonus: they read better as answers.
        scored = sorted(
            ((vocab[c], float(v) * (1 + 0.3 * vocab[c].count(" "))) for c, v in
             zip(matrix.indices[start:end], matrix.data[start:end])),
            key=lambda kv: (-kv[1], kv[0]),
        )
        chosen: list[tuple[str, float]] = []
        for phrase, score in scored:
            # A phrase seen once in the whole scope is usually an accident of wording.
            if len(phrase) < 4 or corpus_counts.get(phrase, 0) < 2:
                continue
            if " " not in phrase and counts.get(phrase, 0) < 2:
                continue
            if any(f" {phrase} " in f" {kept} " or f" {kept} " in f" {phrase} " for kept, _ in chosen):
                continue
            chosen.append((phrase, score))
            if len(chosen) >= per_text:
                break
        out.append(chosen)
    return out


def words(text: str) -> list[str]:
    """Words of ``text`` (letters first; numbers are not words).

    >>> words("A graph's 28 nodes")
    ['A', "graph's", 'nodes']
    """
    return _WORD.findall(text)


def surface_form(phrase: str, text: str) -> str:
    """The most common spelling of a lowercase phrase in ``text`` (ties: first seen).

    >>> surface_form("nlp tasks", "NLP tasks are hard. Some NLP tasks")
    'NLP tasks'
    """
    words = [re.escape(w) for w in phrase.split()]
    pattern = r"(?<![\w-])" + r"\s+".join(words) + r"(?![\w-])"
    counts: dict[str, int] = {}
    for match in re.finditer(pattern, text, flags=re.IGNORECASE):
        form = " ".join(match.group(0).split())
        counts[form] = counts.get(form, 0) + 1
    return max(counts, key=counts.get) if counts else phrase


def scope_phrases(chunks: list[Chunk], per_chunk: int = 8) -> list[list[tuple[str, float]]]:
    """Key phrases of each chunk's prose, scored against the whole scope, as spelled there."""
    texts = [" ".join(block for _, block in prose_blocks(c.text)) for c in chunks]
    return [[(surface_form(p, text), w) for p, w in phrases] for text, phrases in zip(texts, key_phrases(texts, per_text=per_chunk))]
