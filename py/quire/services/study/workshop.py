"""Workshops: lessons written the first time they are opened, and marked done."""

from __future__ import annotations

from quire.llm.events import LLMError
from quire.model import Chunk, location_label
from quire.study.items import stamp
from quire.study.validate import StudyError

from .common import record_action, load_set, scope_chunks, update_set, use_model
from .generation import generate_with_model
from .sets import set_view


# ---------------------------------------------------------------- workshops
def _lesson_at(record: dict, module: int, lesson: int) -> tuple[dict, dict]:
    try:
        m = record["outline"]["modules"][int(module)]
        return m, m["lessons"][int(lesson)]
    except (IndexError, KeyError, ValueError):
        raise StudyError("That lesson is not in this workshop's outline.") from None


def _offline_lesson(lesson: dict, chunks: dict[str, Chunk]) -> dict:
    from quire.study.text import key_phrases, study_sentences

    from quire.study.select import study_chunks

    cited = [chunks[c] for c in lesson.get("chunk_ids", []) if c in chunks][:4] or study_chunks(list(chunks.values()))[:3]
    sections = []
    for chunk in cited:
        heading = location_label(chunk.location) or chunk.source
        sections.append({"heading": f"{chunk.source} · {heading}", "body": chunk.text.strip()[:1500],
                         "chunk_ids": [chunk.id]})
    sentences = [s for c in cited for s in study_sentences(c)][:4]
    phrases = key_phrases([" ".join(c.text for c in cited)], per_text=5)[0] if cited else []
    return stamp({"title": lesson["title"], "introduction": lesson.get("objective", ""), "sections": sections,
                  "key_points": sentences,
                  "exercises": [{"prompt": f"In your own words, explain “{p}” as these passages use it.", "answer": ""}
                                for p, _ in phrases[:3]]}, cited, made_without_ai=True)


async def _lesson(engine, ctx, set_id, module, lesson, opts=None):
    """A lesson's content: generated the first time it is opened, then kept."""
    opts = dict(opts or {})
    record = await load_set(engine, set_id)
    m, l = _lesson_at(record, module, lesson)
    key = f"{int(module)}.{int(lesson)}"
    if key not in record["lessons"]:
        sources = [s for s in engine.sources() if s["id"] in set(record["sources"])]
        if not sources:
            raise StudyError("The sources of this workshop were removed, so the lesson cannot be written.")
        chunks = await scope_chunks(engine, sources)
        content = None
        if use_model(engine, opts) and not record.get("made_without_ai"):
            try:
                out = await generate_with_model(engine, ctx, "workshop_lesson", chunks, count=1,
                                                 difficulty=record.get("difficulty", "medium"),
                                                 scope=record["scope_label"], module_title=m["title"],
                                                 lesson_title=l["title"], objective=l.get("objective", ""),
                                                 max_chunks=8)
                content = out["items"][0]
            except LLMError as exc:
                if exc.kind != "connection":
                    raise
        if content is None:
            content = _offline_lesson(l, {c.id: c for c in chunks})
        # the set as it is now: a lesson marked done or written (the same one, opened twice) while
        # this one was being written stays; the first lesson written is the one kept
        record = await update_set(engine, set_id, lambda r: r["lessons"].setdefault(key, content))
    record_action(engine, record, "lesson_open", item=f"{record['id']}/{key}")
    return {"key": key, "module": m["title"], "lesson": record["lessons"][key], "done": key in record["done"]}


async def _lesson_done(engine, ctx, set_id, module, lesson, done=True):
    _lesson_at(await load_set(engine, set_id), module, lesson)
    key = f"{int(module)}.{int(lesson)}"

    def mark(record):
        record["done"] = sorted(set(record["done"]) - {key} | ({key} if done else set()))
    record = await update_set(engine, set_id, mark)
    if done:
        record_action(engine, record, "lesson_complete", item=f"{record['id']}/{key}")  # "0.0" is in every workshop
    return await set_view(engine, record)


METHODS = {
    "openLesson": _lesson,
    "lessonDone": _lesson_done,
}
