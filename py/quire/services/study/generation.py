"""Making sets: the model answers ``quire.study.generate``'s requests (``quire.llm.ask.drive``),
or the no-LLM fallback makes them."""

from __future__ import annotations

import hashlib
import time
from datetime import datetime, timezone

from quire.errors import InvalidInput
from quire.llm import budget
from quire.llm.ask import Ask, drive
from quire.llm.events import LLMError
from quire.model import Chunk
from quire.study import fsrs_sched, quiz
from quire.study.generate import DIFFICULTIES, CutReply, generate
from quire.study.validate import StudyError

from .common import (KINDS, MAX_OFFLINE_CHUNKS, NO_AI, TEMPERATURE, record_action, iso_time, prompt_overrides, save_set, scope_chunks,
                     scope_sources, use_model)
from .sets import set_view


async def _ask(engine, ctx, ask: Ask) -> str:
    """One structured-output call, streamed so Stop works and progress shows.  Its length is
    bounded by what the schema allows (``ask.max_tokens``, so sized from the items asked); an
    answer the server cut at that bound comes back as a ``CutReply``."""
    ctx.emit({"stage": "ask", "message": f"Asking {engine.llm.chat_model}…", "chars": 0})
    client, messages = engine.llm.client(), [{"role": "user", "content": ask.prompt}]
    context = (await client.props())["context_length"] if engine.llm.settings["kind"] == "openai" else None
    options = budget.fit(engine.llm.options(temperature=TEMPERATURE, num_predict=ask.max_tokens), context, messages)
    stream = client.chat(engine.llm.chat_model, messages, stream=True, format=ask.schema, options=options)
    n = 0
    async for _ in stream:
        n += 1
        if ctx.cancelled():
            await stream.close()
            raise StudyError("Stopped. Nothing was saved.")
        if n % 16 == 0:
            ctx.emit({"stage": "ask", "message": f"{engine.llm.chat_model} is writing…", "chars": len(stream.reply.text)})
    done = stream.reply.done
    if done is not None and done.reason == "length":
        ctx.emit({"stage": "ask", "message": f"The answer reached its limit of {options['num_predict']} tokens; "
                                             "keeping its complete items and asking for fewer…"})
        return CutReply(stream.reply.text)
    return stream.reply.text


async def generate_with_model(engine, ctx, kind: str, chunks: list[Chunk], **kw) -> dict:
    """``generate``, its requests answered by the chat model."""
    overrides = await prompt_overrides(engine)

    async def answer(ask: Ask) -> str:
        reply = await _ask(engine, ctx, ask)
        ctx.emit({"stage": "check", "message": "Checking every item…"})
        return reply

    ctx.emit({"stage": "select", "message": "Choosing representative passages…"})
    return await drive(generate(kind, chunks, overrides=overrides, **kw), answer)


# ---------------------------------------------------------------- making sets
def _offline(kind: str, chunks: list[Chunk], count: int, title: str, topic: str) -> dict:
    from quire.study import offline_cards, offline_maps, offline_quiz
    from quire.study.select import select_chunks, study_chunks

    chunks = study_chunks(chunks)  # a table of contents is no chapter, card or question
    if kind in ("quiz", "flashcards"):
        picked = select_chunks(chunks, max(15, count), topic=topic, max_chars=10**9)
        items = (offline_quiz.make_quiz if kind == "quiz" else offline_cards.make_cloze_cards)(picked, count)
        if not items:
            raise StudyError("These documents have too few full sentences to make questions from without an AI model.")
        return {"items": items}
    picked = chunks[:MAX_OFFLINE_CHUNKS]
    if kind == "mindmap":
        return {"map": offline_maps.make_mindmap(picked, title)}
    return {"outline": offline_maps.make_outline(picked, title)}


async def _generate(engine, ctx, kind, opts=None):
    opts = dict(opts or {})
    if kind not in KINDS:
        raise InvalidInput(f"unknown study tool {kind!r}; choose one of: {', '.join(KINDS)}")
    count = max(1, min(int(opts.get("count") or 10), 50))
    difficulty = opts.get("difficulty") or "medium"
    if difficulty not in DIFFICULTIES:
        raise InvalidInput(f"unknown difficulty {difficulty!r}; choose one of: {', '.join(DIFFICULTIES)}")
    topic = (opts.get("topic") or "").strip()
    scope = opts.get("scope") or None
    sources, label = scope_sources(engine, scope)
    if not sources:
        raise StudyError("Nothing to study here: no trained sources in this scope. Add documents in the Library "
                         "and press Train, or choose a wider scope.")
    wipes = getattr(engine, "wipes", 0)
    ctx.emit({"stage": "read", "message": "Reading the passages…"})
    chunks = await scope_chunks(engine, sources)
    if not any(c.text.strip() for c in chunks):
        raise StudyError("Nothing to study here: the chosen sources have no text.")
    title = opts.get("title") or ""
    note = None
    made: dict | None = None
    if use_model(engine, opts):
        gen_kind = {"workshop": "workshop_outline"}.get(kind, kind)
        try:
            out = await generate_with_model(engine, ctx, gen_kind, chunks, count=count, difficulty=difficulty,
                                             scope=label, topic=topic)
        except LLMError as exc:
            if exc.kind != "connection":
                raise
            note = f"The model server could not be reached, so this was {NO_AI}."
        else:
            report = out["report"]
            if kind in ("quiz", "flashcards"):
                made = {"items": out["items"]}
            else:
                made = {"map" if kind == "mindmap" else "outline": out["items"][0]}
            made["report"] = report
    if made is None:
        ctx.emit({"stage": "offline", "message": "Making it without an AI model…"})
        made = _offline(kind, chunks, count, title, topic)
        made["report"] = {"kept": len(made.get("items", [])) or 1, "dropped": [], "offered": None, "note": note}
    if ctx.cancelled():
        raise StudyError("Stopped. Nothing was saved.")
    if getattr(engine, "wipes", 0) != wipes:  # its passages are gone: keeping what quotes them would bring them back
        raise StudyError("Everything was erased (or a vault replaced the library) while this was being made, so it was not saved.")
    record = new_set_record(kind, made, scope=scope, label=label, sources=[s["id"] for s in sources],
                         difficulty=difficulty, topic=topic, title=title)
    ctx.emit({"stage": "save", "message": "Saving…"})
    await save_set(engine, record)
    record_action(engine, record, "study_generated", item=record["id"])  # badges on sets (decks, maps) are checked now
    return await set_view(engine, record)


def new_set_record(kind, made, *, scope, label, sources, difficulty="medium", topic="", title="") -> dict:
    now = datetime.now(timezone.utc)
    report = made.get("report") or {}
    items = made.get("items", [])
    no_ai = all(i.get("made_without_ai") for i in items) if items else bool(
        (made.get("map") or made.get("outline") or {}).get("made_without_ai"))
    name = {"quiz": "Quiz", "flashcards": "Flashcards", "workshop": "Workshop", "mindmap": "Mind map"}[kind]
    if not title:
        doc = made.get("map") or made.get("outline")
        title = (doc or {}).get("title") or (doc or {}).get("topic") if kind in ("workshop", "mindmap") else ""
        title = f"{name}: {title or topic or label}"
    record = {"id": hashlib.sha256(f"{kind}{now.isoformat()}{title}".encode()).hexdigest()[:12], "kind": kind,
              "title": title, "created": time.time(), "scope": scope, "scope_label": label, "sources": sources,
              "difficulty": difficulty, "topic": topic, "made_without_ai": no_ai, "report": report}
    if kind == "quiz":
        record["items"] = items
        record["session"] = quiz.start(items, iso_time(now))
    elif kind == "flashcards":
        record["items"] = items
        record["schedules"] = {i["id"]: fsrs_sched.new_schedule(fsrs_sched.card_number(i["id"]), now) for i in items}
    elif kind == "workshop":
        record.update(outline=made["outline"], lessons={}, done=[])
    else:
        record["map"] = made["map"]
    return record


METHODS = {
    "studyGenerate": _generate,
}
