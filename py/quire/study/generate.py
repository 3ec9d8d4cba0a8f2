"""The recipe for LLM-made study material: select, prompt, call, validate, retry.

``generate`` never calls a model: it yields each request as a ``quire.llm.ask.Ask`` and is
sent the reply (``quire.llm.ask.drive`` runs it against a chat client with ``format=schema``,
and against a fake in tests).

>>> import asyncio; from quire.llm.ask import drive
>>> async def fake(ask):
...     return '{"cards": [{"type": "basic", "front": "What is BM25?", "back": "A ranking function.", "citations": [1]}]}'
>>> from quire.model import Chunk
>>> out = asyncio.run(drive(generate("flashcards", [Chunk("doc", {"page": 1}, 0, 40, "BM25 is a ranking function.")], count=1), fake))
>>> out["items"][0]["chunk_ids"], out["report"]["kept"]
(['doc:0'], 1)
"""

from __future__ import annotations

from quire import prompts
from quire.errors import InvalidInput
from quire.llm.ask import Ask, Steps
from quire.model import Chunk, location_label
from quire.study.items import stamp
from quire.study.schemas import schema_for, token_budget
from quire.study.select import MAX_CHUNKS, select_chunks
from quire.study.validate import StudyError, parse_json, salvage_json, validate

# The variables the code passes to each prompt template; tests/test_prompts.py
# checks every prompts/*.md against this, so template and code cannot drift.
TEMPLATE_VARIABLES: dict[str, set[str]] = {
    "quiz": {"context", "count", "difficulty", "scope"},
    "flashcards": {"context", "count", "difficulty", "scope"},
    "workshop_outline": {"context", "count", "difficulty", "scope"},
    "workshop_lesson": {"context", "difficulty", "scope", "module_title", "lesson_title", "objective"},
    "mindmap": {"context", "scope"},
    "chat": {"context", "question", "scope", "today"},  # quire.chat.answer.chat_values
    "analyze_document": {"context", "document", "focus"},  # quire.chat.doctools.analyze_document
    "compare_documents": {"context_a", "context_b", "name_a", "name_b", "topic"},  # quire.chat.doctools
}
DIFFICULTIES = ("easy", "medium", "hard")
LIST_KINDS = ("quiz", "flashcards")  # the others return one document


class CutReply(str):
    """A model's answer that the server stopped at the token limit (``done_reason``/
    ``finish_reason`` ``length``); the driver sends one so ``generate`` can salvage the
    complete items and ask again for fewer.

    >>> CutReply('{"items": [').cut
    True
    """

    cut = True


def format_context(chunks: list[Chunk]) -> str:
    """Numbered passages for the prompt; the numbers are what the model cites.

    >>> print(format_context([Chunk("a.pdf", {"page": 2}, 0, 5, "Hello")]))
    [1] (a.pdf, p. 2)
    Hello
    """
    parts = []
    for n, chunk in enumerate(chunks, 1):
        where = ", ".join(x for x in (chunk.source, location_label(chunk.location)) if x)
        parts.append(f"[{n}] ({where})\n{chunk.text.strip()}")
    return "\n\n".join(parts)


def template_values(kind: str, context: str, *, count: int, difficulty: str, scope: str,
                    module_title: str = "", lesson_title: str = "", objective: str = "") -> dict:
    """Exactly the values ``prompts/<kind>.md`` gets (``TEMPLATE_VARIABLES[kind]``)."""
    offered = {"context": context, "count": count, "difficulty": difficulty, "scope": scope or "the selected documents",
               "module_title": module_title, "lesson_title": lesson_title, "objective": objective}
    return {name: offered[name] for name in sorted(TEMPLATE_VARIABLES[kind])}


def _stamp_all(kind: str, items: list[dict], passages: list[Chunk]) -> list[dict]:
    """Replace passage numbers with the chunk ids (and hashes) they stand for."""
    out = []
    for item in items:
        numbers = sorted(_cited(item))
        cited = [passages[n - 1] for n in numbers] or passages
        clean = {k: v for k, v in item.items() if k != "citations"}
        if kind not in LIST_KINDS:
            clean = _renumber(clean, passages)
        out.append(stamp(clean, cited, made_without_ai=False))
    return out


def _cited(node) -> set[int]:
    """Every passage number cited anywhere inside an item."""
    if isinstance(node, dict):
        found = set(node.get("citations", []))
        for value in node.values():
            if isinstance(value, (list, dict)):
                found |= _cited(value)
        return found
    if isinstance(node, list):
        return set().union(*(_cited(v) for v in node)) if node else set()
    return set()


def _renumber(node, passages: list[Chunk]):
    """Inside documents, turn each part's ``citations`` into ``chunk_ids``."""
    if isinstance(node, dict):
        out = {k: _renumber(v, passages) for k, v in node.items() if k != "citations"}
        if "citations" in node:
            out["chunk_ids"] = [passages[n - 1].id for n in node["citations"]]
        return out
    if isinstance(node, list):
        return [_renumber(v, passages) for v in node]
    return node


def generate(
    kind: str,
    chunks: list[Chunk],
    count: int = 10,
    difficulty: str = "medium",
    *,
    scope: str = "",
    topic: str = "",
    module_title: str = "",
    lesson_title: str = "",
    objective: str = "",
    overrides: dict | None = None,
    max_chunks: int = MAX_CHUNKS,
) -> Steps:
    """Make ``count`` items of ``kind`` from ``chunks``: a generator that yields its model
    requests (``Ask``) and returns ``{"kind", "items", "report"}``.

    The report says how many items the model offered, how many were kept and
    why the others were dropped.  If fewer than half the wanted items survive
    (or the answer was not JSON), the model is asked once more; after an answer cut
    at the token limit (a ``CutReply``) its complete items are kept and the second
    request asks for about half as many (a smaller document).
    """
    if difficulty not in DIFFICULTIES:
        raise InvalidInput(f"unknown difficulty {difficulty!r}; choose one of: {', '.join(DIFFICULTIES)}")
    if not any(c.text.strip() for c in chunks):
        raise StudyError("Nothing to study here: the chosen scope has no text. Add documents or widen the scope.")
    passages = select_chunks(chunks, max_chunks, topic=topic or lesson_title)
    context = format_context(passages)
    wanted = count if kind in LIST_KINDS else 1
    kept: list[dict] = []
    report = {"attempts": 0, "offered": 0, "kept": 0, "dropped": [], "errors": [], "cut": 0,
              "chunk_ids": [c.id for c in passages]}
    asked, shrink = count, 0
    for attempt in (1, 2):
        report["attempts"] = attempt
        values = template_values(kind, context, count=asked, difficulty=difficulty, scope=scope,
                                 module_title=module_title, lesson_title=lesson_title, objective=objective)
        prompt = prompts.render(kind, values, overrides)
        if attempt > 1:  # the same request again would get the same answer from a seeded server
            prompt += retry_note(report)
        schema = schema_for(kind, asked, len(passages), shrink)
        reply = yield Ask(prompt, schema, token_budget(schema))
        cut = bool(getattr(reply, "cut", False))
        if cut:
            report["cut"] += 1
            report["errors"].append("the answer reached the token limit and was cut")
            shrink += 1  # the retry asks for a smaller document / about half the items
        try:
            data = salvage_json(reply) if cut else parse_json(reply)
            items, dropped = validate(kind, data, len(passages))
        except StudyError as err:
            report["errors"].append(str(err))
            asked = max(1, (asked + 1) // 2) if cut else asked
            continue
        report["offered"] += len(items) + sum(1 for d in dropped if isinstance(d["index"], int))
        report["dropped"] += [dict(d, attempt=attempt) for d in dropped]
        seen = {_signature(i) for i in kept}
        kept += [i for i in items if _signature(i) not in seen]
        if cut and len(kept) < wanted:
            asked = max(1, min((asked + 1) // 2, wanted - len(kept)))  # the rest, at most half as many
            continue
        if len(kept) * 2 >= wanted and kept:
            break
    if not kept:
        reasons = "; ".join(report["errors"] + [d["reason"] for d in report["dropped"][:3]])
        raise StudyError(f"The model gave nothing usable for this {kind.replace('_', ' ')} ({reasons}).")
    items = _stamp_all(kind, kept[:wanted], passages)
    report["kept"] = len(items)
    return {"kind": kind, "items": items, "report": report}


def retry_note(report: dict) -> str:
    """What was wrong with the last answer, added to the prompt the second time: the model
    hears why, and a server that samples the same way for the same prompt (a fixed seed,
    a low temperature) does not send the same unusable answer again.

    >>> print(retry_note({"errors": [], "dropped": [{"reason": "options repeat"}, {"reason": "options repeat"}]}).strip())
    Your last answer could not be used (options repeat). Answer again and keep every rule above.
    """
    reasons = list(dict.fromkeys(report["errors"] + [d["reason"] for d in report["dropped"]]))[:4]
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return f"\n\nYour last answer could not be used{why}. Answer again and keep every rule above.\n"


def _signature(item: dict) -> str:
    return str(item.get("question") or item.get("front") or item.get("text") or item.get("title") or item).lower()
