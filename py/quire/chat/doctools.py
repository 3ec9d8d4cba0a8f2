"""The document tools an agent may call: list, search, analyse, compare.

``analyze_document`` and ``compare_documents`` ask the model outside the agent loop, one
structured request each (asked once more if the answer is no JSON object).  They never
call it: they yield a ``quire.llm.ask.Ask`` and are sent the reply (``services.chat``
drives them against the chat's model; tests drive them against a fake).

>>> import asyncio; from quire.llm.ask import drive
>>> async def fake(ask):
...     return '{"summary": "About cells.", "topics": ["mitosis"], "entities": [], "key_facts": [{"fact": "Cells divide.", "citations": [1]}]}'
>>> out = asyncio.run(drive(analyze_document([{"chunk_id": "bio:0", "location": {"page": 2}, "text": "Cells divide by mitosis."}], document="bio.pdf"), fake))
>>> out["topics"], out["key_facts"][0]["sources"]
(['mitosis'], [{'chunk_id': 'bio:0', 'location_label': 'p. 2'}])
"""

from __future__ import annotations

from typing import Callable

from quire import prompts
from quire.errors import InvalidInput
from quire.llm.ask import Ask, Steps
from quire.model import Chunk, location_label
from quire.study.schemas import token_budget
from quire.study.select import MAX_CHUNKS, select_chunks
from quire.study.validate import StudyError, parse_json
from quire.chat.agent import MAX_TOOL_RESULT

SEARCH_K = 7  # passages search_knowledge_base returns unless asked otherwise
MAX_SEARCH_K = 20  # the tool schema's maximum
COMPARE_PER_DOCUMENT = 8  # passages of each document in a comparison prompt
ASPECTS = {
    "summary": "Summarise the whole document.",
    "outline": "Describe the document's structure: put its parts, in order, in the summary, one sentence per part.",
    "key_terms": "Find the key terms the document defines; put each term and its definition in key_facts.",
    "question": "Answer this question about the document as a whole: {question}",
}

# Bounded like quire.study.schemas: grammar-constrained decoding of an unbounded array or
# string runs until the token limit cuts the JSON.
_CITED = {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": 3}


def _text(n: int) -> dict:
    return {"type": "string", "maxLength": n}


def _list(item: dict, n: int) -> dict:
    return {"type": "array", "items": item, "maxItems": n}


ANALYSIS_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": _text(1200),
        "topics": _list(_text(80), 8),
        "entities": _list({"type": "object", "properties": {
            "name": _text(80), "type": _text(40)}, "required": ["name", "type"]}, 10),
        "key_facts": _list({"type": "object", "properties": {
            "fact": _text(300), "citations": _CITED}, "required": ["fact", "citations"]}, 8),
    },
    "required": ["summary", "topics", "entities", "key_facts"],
}
_POINT = {"type": "object", "properties": {"point": _text(300), "citations": _CITED},
          "required": ["point", "citations"]}
COMPARISON_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": _text(800),
        "similarities": _list(_POINT, 5),
        "differences": _list({"type": "object", "properties": {
            "point": _text(200), "a": _text(300), "b": _text(300), "citations": _CITED},
            "required": ["point", "a", "b", "citations"]}, 5),
        "only_in_a": _list(_POINT, 4),
        "only_in_b": _list(_POINT, 4),
    },
    "required": ["summary", "similarities", "differences", "only_in_a", "only_in_b"],
}


# --- chunks and documents ----------------------------------------------------------
def as_chunk(chunk) -> Chunk:
    """A ``model.Chunk`` from a Chunk, a stored chunk or a hit dict (``chunk_id``, ``location``, ``text``)."""
    return chunk if isinstance(chunk, Chunk) else Chunk.from_dict(chunk)


def _size(n) -> str:
    """A human file size.

    >>> _size(1_234_567)
    '1.2 MB'
    """
    if not isinstance(n, (int, float)) or n <= 0:
        return ""
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return ""


def doc_name(doc: dict) -> str:
    return str(doc.get("name") or doc.get("title") or doc.get("id") or "")


def list_documents(library_view: list[dict]) -> dict:
    """What the model sees of the library: names, kinds, sizes, categories."""
    docs = []
    for doc in library_view:
        entry = {"name": doc_name(doc), "kind": doc.get("kind", "")}
        for key in ("category", "language", "pages", "slides", "chunks"):
            if doc.get(key) not in (None, "", []):
                entry[key] = doc[key]
        if _size(doc.get("size")):
            entry["size"] = _size(doc.get("size"))
        docs.append(entry)
    return {"count": len(docs), "documents": docs}


def find_document(library_view: list[dict], name: str) -> dict:
    """The document a model named: exact, then case-insensitive, then a unique partial match."""
    wanted = " ".join(str(name).split()).casefold()
    for test in (lambda d: doc_name(d) == name, lambda d: doc_name(d).casefold() == wanted,
                 lambda d: str(d.get("id", "")).casefold() == wanted):
        found = [d for d in library_view if test(d)]
        if found:
            return found[0]
    partial = [d for d in library_view if wanted and (wanted in doc_name(d).casefold()
                                                      or doc_name(d).casefold().rsplit(".", 1)[0] in wanted)]
    if len(partial) == 1:
        return partial[0]
    known = "; ".join(doc_name(d) for d in library_view) or "the library is empty"
    raise InvalidInput(f"no document named {name!r}; documents: {known}")


# --- the model's structured answers -------------------------------------------------
def _strings(value, limit: int) -> list[str]:
    if not isinstance(value, list):
        return []
    return [" ".join(v.split()) for v in value if isinstance(v, str) and v.strip()][:limit]


def _citations(value, n_passages: int) -> list[int]:
    if not isinstance(value, list):
        return []
    return [n for n in dict.fromkeys(value) if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= n_passages]


def _points(value, passages: list[Chunk], text_keys: tuple[str, ...], limit: int = 10) -> list[dict]:
    """Items with every ``text_keys`` field a non-empty string; citations checked and resolved."""
    out = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) and item[k].strip() for k in text_keys):
            continue
        numbers = _citations(item.get("citations"), len(passages))
        out.append({**{k: item[k].strip() for k in text_keys}, "citations": numbers,
                    "sources": [{"chunk_id": passages[n - 1].id,
                                 "location_label": location_label(passages[n - 1].location)} for n in numbers]})
    return out[:limit]


def _ask(prompt: str, schema: dict) -> Steps:
    """One structured request, asked once more if the answer is not a JSON object."""
    errors = []
    for _ in range(2):
        try:
            data = parse_json((yield Ask(prompt, schema, token_budget(schema))))
        except StudyError as err:
            errors.append(str(err))
            continue
        if isinstance(data, dict):
            return data
        errors.append("the model answered with JSON that is not an object")
    raise StudyError("; ".join(errors))


def _numbered(passages: list[Chunk], first: int = 1) -> str:
    blocks = []
    for n, chunk in enumerate(passages, first):
        where = location_label(chunk.location)
        blocks.append(f"[{n}]{' (' + where + ')' if where else ''}\n{chunk.text.strip()}")
    return "\n\n".join(blocks) or "(no text)"


def _passage_list(passages: list[Chunk], first: int = 1) -> list[dict]:
    return [{"n": n, "chunk_id": c.id, "location_label": location_label(c.location)}
            for n, c in enumerate(passages, first)]


# --- the tools ----------------------------------------------------------------------
def analyze_document(chunks, *, document: str, aspect: str = "summary", question: str = "",
                     overrides: dict | None = None, max_chunks: int = MAX_CHUNKS) -> Steps:
    """Topics, entities, key facts and a summary of one document (``chunks`` are its chunks)."""
    if aspect not in ASPECTS:
        raise InvalidInput(f"unknown aspect {aspect!r}; valid: {', '.join(ASPECTS)}")
    if aspect == "question" and not question.strip():
        raise InvalidInput("aspect 'question' needs the question")
    chunks = [c for c in (as_chunk(c) for c in chunks) if c.text.strip()]
    if not chunks:
        raise InvalidInput(f"{document!r} has no text to analyse (it may need OCR)")
    passages = select_chunks(chunks, max_chunks, topic=question if aspect == "question" else "")
    values = {"document": document, "focus": ASPECTS[aspect].format(question=question.strip()),
              "context": _numbered(passages)}
    data = yield from _ask(prompts.render("analyze_document", values, overrides), ANALYSIS_SCHEMA)
    entities = [{"name": e["name"].strip(), "type": str(e.get("type") or "").strip()}
                for e in data.get("entities") or [] if isinstance(e, dict) and isinstance(e.get("name"), str)
                and e["name"].strip()][:12]
    return {"document": document, "aspect": aspect,
            "summary": data["summary"].strip() if isinstance(data.get("summary"), str) else "",
            "topics": _strings(data.get("topics"), 8), "entities": entities,
            "key_facts": _points(data.get("key_facts"), passages, ("fact",), 8),
            "passages": _passage_list(passages)}


def compare_documents(question: str, chunks_a, chunks_b, *, names: tuple[str, str] = ("A", "B"),
                      overrides: dict | None = None, per_document: int = COMPARE_PER_DOCUMENT) -> Steps:
    """Similarities and differences of two documents on ``question`` (a topic).

    Passages are numbered across both: A's first, then B's, so one citation
    list can point into either document.
    """
    picked = []
    for name, chunks in zip(names, (chunks_a, chunks_b)):
        chunks = [c for c in (as_chunk(c) for c in chunks) if c.text.strip()]
        if not chunks:
            raise InvalidInput(f"{name!r} has no text to compare")
        picked.append(select_chunks(chunks, per_document, topic=question, max_chars=12_000))
    a, b = picked
    values = {"topic": question.strip() or "their main ideas", "name_a": names[0], "name_b": names[1],
              "context_a": _numbered(a), "context_b": _numbered(b, len(a) + 1)}
    data = yield from _ask(prompts.render("compare_documents", values, overrides), COMPARISON_SCHEMA)
    passages = a + b
    return {"documents": list(names), "topic": values["topic"],
            "summary": data["summary"].strip() if isinstance(data.get("summary"), str) else "",
            "similarities": _points(data.get("similarities"), passages, ("point",)),
            "differences": _points(data.get("differences"), passages, ("point", "a", "b")),
            "only_in_a": _points(data.get("only_in_a"), passages, ("point",)),
            "only_in_b": _points(data.get("only_in_b"), passages, ("point",)),
            "passages": {"a": _passage_list(a), "b": _passage_list(b, len(a) + 1)}}


def search_knowledge_base(search_fn: Callable, query: str, top_k: int = SEARCH_K, document: str | None = None) -> dict:
    """``search_fn(query, k, document) -> [hit dict]`` (as ``answer.citations_for`` takes),
    trimmed so the whole result fits in one tool message."""
    if not str(query).strip():
        raise InvalidInput("the search query is empty")
    top_k = max(1, min(int(top_k), MAX_SEARCH_K))
    hits = list(search_fn(query, top_k, document))[:top_k]
    room = max(200, (MAX_TOOL_RESULT - 200) // max(1, len(hits)) - 120)  # per passage, leaving room for the JSON
    results = []
    for n, hit in enumerate(hits, 1):
        text = " ".join((hit.get("text") or "").split())
        results.append({"n": n, "source": hit.get("source") or hit.get("source_id") or "",
                        "location_label": location_label(hit.get("location")), "chunk_id": hit.get("chunk_id", ""),
                        "text": text if len(text) <= room else text[:room].rsplit(" ", 1)[0] + " …"})
    return {"query": query, "results": results,
            **({} if results else {"note": "No passage matched; try other words or list_documents."})}
