"""The study hub behind ``window.quire``: make, keep, play and export study sets.

A *set* is one record in the ``study`` bucket::

    {"id", "kind": "quiz" | "flashcards" | "workshop" | "mindmap", "title", "created",
     "scope", "scope_label", "sources": [source ids], "made_without_ai", "report",
     "items": [...]            # quiz questions or cards, each with "chunk_ids"
     "session": {...}          # quiz: quire.study.quiz state (resume, attempt history)
     "schedules": {id: card}   # flashcards: fsrs card per item
     "outline", "lessons", "done"  # workshop: lessons are generated when first opened
     "map": {...}}             # mind map tree

Items cite library chunk ids (``<source id>:<n>``), so the page can open the
passage with ``QuirePassage.open``.  With a chat model set, material comes from
the model (``quire.study.generate``); otherwise, or when the server cannot be
reached, from the no-LLM generators, labelled "made without an AI model".

Python use (CPython or Pyodide)::

    ctx = Context()
    deck = await METHODS["studyGenerate"](engine, ctx, "flashcards", {"scope": {"sources": [sid]}, "count": 10})
    queue = await METHODS["review"](engine, ctx, deck["id"])
    await METHODS["rate"](engine, ctx, deck["id"], queue["cards"][0]["id"], "good")
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import logging
import time
from datetime import datetime, timezone

from quire import prompts
from quire.llm.events import LLMError
from quire.model import Chunk
from quire.study import fsrs_sched, quiz
from quire.study.generate import DIFFICULTIES, TEMPLATE_VARIABLES, generate
from quire.study.items import item_id, location_label, stamp
from quire.study.validate import StudyError

KINDS = ("quiz", "flashcards", "workshop", "mindmap")
BUCKET = "study"
OVERRIDES_KEY = "prompt_overrides"  # in the "settings" bucket: {template name: text}
STUDY_TEMPLATES = ("quiz", "flashcards", "workshop_outline", "workshop_lesson", "mindmap")
TEMPERATURE = 0.1  # structured output: stay close to the passages
MAX_OFFLINE_CHUNKS = 400  # the no-LLM map/outline reads structure; beyond this it only gets slower
NO_AI = "made without an AI model"

# Progress hooks: each is called with {"kind": "quiz_answer" | "card_review" | "lesson_open" | ...,
# "scoped", "sources", "correct" | "rating", "item", "t"}; a failing hook never breaks studying.
ON_STUDY_ACTION: list = []
log = logging.getLogger(__name__)


class _NeedReply(Exception):
    """Raised inside ``generate``'s (sync) model call: ask the (async) model, then replay."""


# ---------------------------------------------------------------- helpers
def _now(now=None) -> datetime:
    if isinstance(now, str) and now:
        return datetime.fromisoformat(now.replace("Z", "+00:00"))
    return now or datetime.now(timezone.utc)


def _iso(dt: datetime) -> str:
    return dt.isoformat()


async def _emit_action(event: dict) -> None:
    event = {"t": int(time.time() * 1000), **event}
    for hook in list(ON_STUDY_ACTION):
        try:
            result = hook(event)
            if inspect.isawaitable(result):
                await result
        except Exception:  # progress tracking must never break studying
            log.exception("study action hook failed")


async def _action(record: dict, kind: str, **extra) -> None:
    await _emit_action({"kind": kind, "scoped": bool(record.get("scope")), "sources": list(record.get("sources", [])),
                        **extra})


async def _load(engine, set_id: str) -> dict:
    record = await engine.store.get(BUCKET, set_id)
    if record is None:
        raise StudyError("That study set no longer exists (it may have been deleted).")
    return record


async def _save(engine, record: dict) -> dict:
    await engine.store.commit([(BUCKET, record["id"], record)])
    return record


def _scope_sources(engine, scope) -> tuple[list[dict], str]:
    """Trained sources in ``scope`` (None = all, {"category"}, {"sources": [ids]}) and a label."""
    trained = [s for s in engine.sources() if s["status"] == "trained"]
    if isinstance(scope, dict) and scope.get("category"):
        chosen = [s for s in trained if s.get("category") == scope["category"]]
        return chosen, scope["category"]
    if isinstance(scope, dict) and scope.get("sources"):
        wanted = set(scope["sources"])
        chosen = [s for s in trained if s["id"] in wanted]
        label = chosen[0]["name"] if len(chosen) == 1 else f"{len(chosen)} sources"
        return chosen, label
    return trained, "all your documents"


async def _scope_chunks(engine, sources: list[dict]) -> tuple[list[Chunk], dict[str, str]]:
    """Chunks for the generators, named by source name (what a model should see).

    Their ``source_id`` is the source *name* and ``start`` is the chunk number, so
    ``items.chunk_id`` gives ``<name>:<n>``; ``rename`` maps that back to the
    library's ``<source id>:<n>``.
    """
    chunks, rename, taken = [], {}, set()
    for source in sources:
        name, k = source["name"], 2
        while name in taken:
            name, k = f"{source['name']} ({k})", k + 1
        taken.add(name)
        rename[name] = source["id"]
        for c in await engine.library.chunks_of(source["id"]):
            chunks.append(Chunk(name, c["location"], c["n"], c["n"] + 1, c["text"], c.get("hash") or ""))
    return chunks, rename


def _relink(node, rename: dict[str, str]):
    """Rewrite every ``chunk_ids`` / ``chunk_hashes`` from ``<name>:<n>`` to ``<source id>:<n>``."""
    def fix(cid: str) -> str:
        name, _, n = cid.rpartition(":")
        return f"{rename.get(name, name)}:{n}"

    if isinstance(node, list):
        return [_relink(v, rename) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "chunk_ids":
            out[key] = [fix(c) for c in value]
        elif key == "chunk_hashes":
            out[key] = {fix(c): h for c, h in value.items()}
        else:
            out[key] = _relink(value, rename)
    return out


async def _overrides(engine) -> dict:
    return await engine.store.get("settings", OVERRIDES_KEY) or {}


def _use_model(engine, opts: dict) -> bool:
    return bool(engine.llm.chat_model) and not opts.get("offline")


async def _ask(engine, ctx, prompt: str, schema: dict) -> str:
    """One structured-output call, streamed so Stop works and progress shows."""
    ctx.emit({"stage": "ask", "message": f"Asking {engine.llm.chat_model}…", "chars": 0})
    stream = engine.llm.client().chat(engine.llm.chat_model, [{"role": "user", "content": prompt}], stream=True,
                                      format=schema, options=engine.llm.options(temperature=TEMPERATURE))
    n = 0
    async for _ in stream:
        n += 1
        if ctx.cancelled():
            await stream.close()
            raise StudyError("Stopped. Nothing was saved.")
        if n % 16 == 0:
            ctx.emit({"stage": "ask", "message": f"{engine.llm.chat_model} is writing…", "chars": len(stream.reply.text)})
    return stream.reply.text


async def _generate_with_model(engine, ctx, kind: str, chunks: list[Chunk], **kw) -> dict:
    """``generate`` is synchronous; replay it with the model's answers gathered so far."""
    replies: list[str] = []
    overrides = await _overrides(engine)
    while True:
        queued = iter(list(replies))

        def call(prompt, schema):
            try:
                return next(queued)
            except StopIteration:
                raise _NeedReply(prompt, schema) from None

        try:
            ctx.emit({"stage": "check", "message": "Checking every item…"} if replies else
                     {"stage": "select", "message": "Choosing representative passages…"})
            return generate(kind, chunks, call, overrides=overrides, **kw)
        except _NeedReply as need:
            if len(replies) >= 2:
                raise StudyError("The model was asked twice and gave nothing usable.") from None
            replies.append(await _ask(engine, ctx, *need.args))


# ---------------------------------------------------------------- making sets
def _offline(kind: str, chunks: list[Chunk], count: int, title: str, topic: str) -> dict:
    from quire.study import offline_cards, offline_maps, offline_quiz
    from quire.study.select import select_chunks

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
        raise ValueError(f"unknown study tool {kind!r}; choose one of: {', '.join(KINDS)}")
    count = max(1, min(int(opts.get("count") or 10), 50))
    difficulty = opts.get("difficulty") or "medium"
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of: {', '.join(DIFFICULTIES)}")
    topic = (opts.get("topic") or "").strip()
    scope = opts.get("scope") or None
    sources, label = _scope_sources(engine, scope)
    if not sources:
        raise StudyError("Nothing to study here: no trained sources in this scope. Add documents in the Library "
                         "and press Train, or choose a wider scope.")
    ctx.emit({"stage": "read", "message": "Reading the passages…"})
    chunks, rename = await _scope_chunks(engine, sources)
    if not any(c.text.strip() for c in chunks):
        raise StudyError("Nothing to study here: the chosen sources have no text.")
    title = opts.get("title") or ""
    note = None
    made: dict | None = None
    if _use_model(engine, opts):
        gen_kind = {"workshop": "workshop_outline"}.get(kind, kind)
        try:
            out = await _generate_with_model(engine, ctx, gen_kind, chunks, count=count, difficulty=difficulty,
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
    made = _relink(made, rename)
    record = _new_record(kind, made, scope=scope, label=label, sources=[s["id"] for s in sources],
                         difficulty=difficulty, topic=topic, title=title)
    ctx.emit({"stage": "save", "message": "Saving…"})
    await _save(engine, record)
    return await _view(engine, record)


def _new_record(kind, made, *, scope, label, sources, difficulty="medium", topic="", title="") -> dict:
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
        record["session"] = quiz.start(items, _iso(now))
    elif kind == "flashcards":
        record["items"] = items
        record["schedules"] = {i["id"]: fsrs_sched.new_schedule(fsrs_sched.card_number(i["id"]), now) for i in items}
    elif kind == "workshop":
        record.update(outline=made["outline"], lessons={}, done=[])
    else:
        record["map"] = made["map"]
    return record


# ---------------------------------------------------------------- listing
def _summary(record: dict, now: datetime | None = None) -> dict:
    now = now or datetime.now(timezone.utc)
    out = {k: record.get(k) for k in ("id", "kind", "title", "created", "scope", "scope_label", "sources",
                                      "made_without_ai", "difficulty", "imported")}
    kind = record["kind"]
    if kind == "quiz":
        s = record["session"]
        done, total = quiz.resume(s)
        out["stats"] = {"status": s["status"], "position": done, "total": total, "score": quiz.score(s),
                        "attempts": len(s["history"]) + (s["status"] == "finished")}
    elif kind == "flashcards":
        scheds = record["schedules"]
        dues = sorted(fsrs_sched.due_at(v) for v in scheds.values())
        out["stats"] = {"total": len(scheds), "due": len(fsrs_sched.due_queue(scheds, now)),
                        "next_due": dues[0].isoformat() if dues else None}
    elif kind == "workshop":
        n = sum(len(m["lessons"]) for m in record["outline"]["modules"])
        out["stats"] = {"lessons": n, "done": len(record["done"])}
    else:
        def count(nodes):
            return sum(1 + count(n.get("children", [])) for n in nodes)
        out["stats"] = {"nodes": count(record["map"]["children"])}
    return out


async def _view(engine, record: dict) -> dict:
    """The record as the page sees it: summary, content, and cards flagged as stale."""
    out = {**record, **_summary(record)}
    if record["kind"] == "flashcards":
        out["flags"] = await _flags(engine, record)
    return out


async def _sets(engine, ctx):
    records = (await engine.store.all(BUCKET)).values()
    return sorted((_summary(r) for r in records), key=lambda s: -s["created"])


async def _open(engine, ctx, set_id):
    return await _view(engine, await _load(engine, set_id))


async def _delete(engine, ctx, set_id):
    await _load(engine, set_id)
    await engine.store.commit([], [(BUCKET, set_id)])
    return True


# ---------------------------------------------------------------- quiz play
def _public_session(record: dict) -> dict:
    s = record["session"]
    return {"session": s, "score": quiz.score(s), "position": quiz.resume(s)[0], "total": quiz.resume(s)[1],
            "current": quiz.current(s), "history": s["history"]}


async def _quiz_answer(engine, ctx, set_id, choice, now=None):
    record = await _load(engine, set_id)
    item = quiz.current(record["session"])
    if item is None:
        raise StudyError("This quiz run is finished; start it again to play once more.")
    record["session"] = quiz.answer(record["session"], choice, _iso(_now(now)))
    await _save(engine, record)
    correct = choice == item["answer"]
    await _action(record, "quiz_answer", correct=correct, item=item.get("id"))
    if record["session"]["status"] == "finished":
        sc = quiz.score(record["session"])
        await _action(record, "quiz_complete", score=sc["correct"], total=sc["total"])
    return {"correct": correct, "answer": item["answer"], "explanation": item.get("explanation", ""),
            "chunk_ids": item.get("chunk_ids", []), **_public_session(record)}


async def _quiz_submit(engine, ctx, set_id, now=None):
    """Finish the run now; unanswered questions count as skipped."""
    record = await _load(engine, set_id)
    while quiz.current(record["session"]) is not None:
        record["session"] = quiz.answer(record["session"], None, _iso(_now(now)))
    await _save(engine, record)
    return _public_session(record)


async def _quiz_restart(engine, ctx, set_id, only_wrong=False, now=None):
    record = await _load(engine, set_id)
    s = record["session"]
    if s["status"] != "finished" and not s["answers"]:
        return _public_session(record)
    record["session"] = quiz.restart(s, _iso(_now(now)), only_wrong=bool(only_wrong))
    await _save(engine, record)
    return _public_session(record)


# ---------------------------------------------------------------- flashcards
async def _current_hashes(engine, record: dict) -> dict[str, str]:
    """chunk id -> hash as the library is now; a retrained source answers for the one it replaced."""
    replaced_by = {s.get("replaces"): s["id"] for s in engine.sources() if s.get("replaces")}
    present = {s["id"] for s in engine.sources()}
    out = {}
    for sid in record.get("sources", []):
        current, hops = sid, 0
        while current not in present and current in replaced_by and hops < 20:
            current, hops = replaced_by[current], hops + 1
        if current in present:
            for c in await engine.library.chunks_of(current):
                out[f"{sid}:{c['n']}"] = c.get("hash") or ""
    return out


async def _flags(engine, record: dict) -> dict[str, list[str]]:
    items = [i for i in record.get("items", []) if i.get("chunk_hashes")]
    if not items:
        return {}
    return fsrs_sched.stale_items(items, await _current_hashes(engine, record))


def _card_view(item: dict, state: dict, now: datetime, flags: dict) -> dict:
    return {**item, "due": state["due"], "state": state, "intervals": fsrs_sched.next_intervals(state, now),
            "flagged": flags.get(item["id"], [])}


async def _review(engine, ctx, deck_id, now=None, limit=100):
    """The due queue (most overdue first; cards whose source changed come first), with button labels."""
    record = await _load(engine, deck_id)
    if record["kind"] != "flashcards":
        raise StudyError("Only flashcard decks can be reviewed.")
    now = _now(now)
    flags = await _flags(engine, record)
    by_id = {i["id"]: i for i in record["items"]}
    due = fsrs_sched.due_queue(record["schedules"], now)
    queue = [i for i in flags if i in by_id] + [i for i in due if i not in flags]
    cards = [_card_view(by_id[i], record["schedules"][i], now, flags) for i in queue[:limit]]
    dues = sorted((fsrs_sched.due_at(s), k) for k, s in record["schedules"].items())
    upcoming = [d for d in dues if d[0] > now]
    return {"deck_id": deck_id, "title": record["title"], "now": _iso(now), "cards": cards, "due": len(due),
            "total": len(record["items"]), "flagged": len(flags),
            "next_due": upcoming[0][0].isoformat() if upcoming else None,
            "schedule": {k: s["due"] for k, s in record["schedules"].items()}}


async def _rate(engine, ctx, deck_id, card_id, rating, now=None):
    record = await _load(engine, deck_id)
    if card_id not in record.get("schedules", {}):
        raise StudyError("That card is not in this deck any more.")
    now = _now(now)
    state, review_log = fsrs_sched.review(record["schedules"][card_id], rating, now)
    record["schedules"][card_id] = state
    record.setdefault("reviews", []).append({"card": card_id, "rating": str(rating).lower(), "at": _iso(now)})
    await _save(engine, record)
    item = next(i for i in record["items"] if i["id"] == card_id)
    rating_name = fsrs_sched.RATINGS[int(fsrs_sched._rating(rating)) - 1]
    await _action(record, "card_review", rating=rating_name, item=card_id)
    lapse = rating_name == "again"
    return {"card_id": card_id, "due": state["due"], "interval": fsrs_sched.format_interval(fsrs_sched.due_at(state) - now),
            "lapse": lapse, "chunk_ids": item.get("chunk_ids", []) if lapse else [],
            "next": await _review(engine, ctx, deck_id, _iso(now))}


async def _resolve_card(engine, ctx, deck_id, card_id, action="keep"):
    """A flagged card: "keep" accepts the source as it is now; "delete" drops the card."""
    record = await _load(engine, deck_id)
    if action == "delete":
        record["items"] = [i for i in record["items"] if i["id"] != card_id]
        record["schedules"].pop(card_id, None)
    elif action == "keep":
        current = await _current_hashes(engine, record)
        for item in record["items"]:
            if item["id"] == card_id:
                item["chunk_hashes"] = {c: current[c] for c in item.get("chunk_hashes", {}) if c in current}
    else:
        raise ValueError(f"unknown action {action!r}; choose keep or delete")
    await _save(engine, record)
    return await _view(engine, record)


# ---------------------------------------------------------------- workshops
def _lesson_at(record: dict, module: int, lesson: int) -> tuple[dict, dict]:
    try:
        m = record["outline"]["modules"][int(module)]
        return m, m["lessons"][int(lesson)]
    except (IndexError, KeyError, ValueError):
        raise StudyError("That lesson is not in this workshop's outline.") from None


def _offline_lesson(lesson: dict, chunks: dict[str, Chunk]) -> dict:
    from quire.study.text import key_phrases, study_sentences

    cited = [chunks[c] for c in lesson.get("chunk_ids", []) if c in chunks][:4] or list(chunks.values())[:3]
    sections = []
    for chunk in cited:
        heading = location_label(chunk.location) or chunk.source_id
        sections.append({"heading": f"{chunk.source_id} · {heading}", "body": chunk.text.strip()[:1500],
                         "chunk_ids": [f"{chunk.source_id}:{chunk.start}"]})
    sentences = [s for c in cited for s in study_sentences(c)][:4]
    phrases = key_phrases([" ".join(c.text for c in cited)], per_text=5)[0] if cited else []
    return stamp({"title": lesson["title"], "introduction": lesson.get("objective", ""), "sections": sections,
                  "key_points": sentences,
                  "exercises": [{"prompt": f"In your own words, explain “{p}” as these passages use it.", "answer": ""}
                                for p, _ in phrases[:3]]}, cited, made_without_ai=True)


async def _lesson(engine, ctx, set_id, module, lesson, opts=None):
    """A lesson's content: generated the first time it is opened, then kept."""
    opts = dict(opts or {})
    record = await _load(engine, set_id)
    m, l = _lesson_at(record, module, lesson)
    key = f"{int(module)}.{int(lesson)}"
    if key not in record["lessons"]:
        sources = [s for s in engine.sources() if s["id"] in set(record["sources"])]
        if not sources:
            raise StudyError("The sources of this workshop were removed, so the lesson cannot be written.")
        chunks, rename = await _scope_chunks(engine, sources)
        content = None
        if _use_model(engine, opts) and not record.get("made_without_ai"):
            try:
                out = await _generate_with_model(engine, ctx, "workshop_lesson", chunks, count=1,
                                                 difficulty=record.get("difficulty", "medium"),
                                                 scope=record["scope_label"], module_title=m["title"],
                                                 lesson_title=l["title"], objective=l.get("objective", ""),
                                                 max_chunks=8)
                content = out["items"][0]
            except LLMError as exc:
                if exc.kind != "connection":
                    raise
        if content is None:
            back = {sid: name for name, sid in rename.items()}
            by_id = {f"{c.source_id}:{c.start}": c for c in chunks}
            named = {f"{back.get(cid.rpartition(':')[0], '')}:{cid.rpartition(':')[2]}"
                     for cid in l.get("chunk_ids", [])}
            content = _offline_lesson({**l, "chunk_ids": [c for c in named if c in by_id]}, by_id)
        record["lessons"][key] = _relink(content, rename)
        await _save(engine, record)
    await _action(record, "lesson_open", item=key)
    return {"key": key, "module": m["title"], "lesson": record["lessons"][key], "done": key in record["done"]}


async def _lesson_done(engine, ctx, set_id, module, lesson, done=True):
    record = await _load(engine, set_id)
    _lesson_at(record, module, lesson)
    key = f"{int(module)}.{int(lesson)}"
    record["done"] = sorted(set(record["done"]) - {key} | ({key} if done else set()))
    await _save(engine, record)
    if done:
        await _action(record, "lesson_complete", item=key)
    return await _view(engine, record)


# ---------------------------------------------------------------- exports and imports
def _slug(title: str) -> str:
    keep = "".join(ch if ch.isalnum() or ch in " -_" else " " for ch in title)
    return "-".join(keep.split())[:60] or "quire"


async def _export(engine, ctx, set_id, fmt):
    """``{"filename", "mime", "text"}`` or, for .apkg, ``{"filename", "mime", "base64"}``."""
    from quire.study import export  # lazy: .apkg needs sqlite3, which loads after the engine starts

    record = await _load(engine, set_id)
    kind, name = record["kind"], _slug(record["title"])
    formats = {"quiz": ("markdown", "csv"), "flashcards": ("apkg", "csv", "markdown"),
               "workshop": ("markdown",), "mindmap": ("markdown", "opml")}[kind]
    if fmt not in formats:
        raise ValueError(f"a {kind} exports as {', '.join(formats)} (not {fmt!r})")
    if fmt == "apkg":
        data = export.write_apkg(record["items"], record["title"])
        return {"filename": f"{name}.apkg", "mime": "application/octet-stream", "base64": base64.b64encode(data).decode()}
    if fmt == "csv":
        cards = record["items"] if kind == "flashcards" else [
            {"type": "basic", "front": i["question"], "back": i["options"][i["answer"]]} for i in record["items"]]
        return {"filename": f"{name}.csv", "mime": "text/csv", "text": export.quizlet_text(cards, "comma")}
    if fmt == "opml":
        return {"filename": f"{name}.opml", "mime": "text/x-opml", "text": export.mindmap_opml(record["map"])}
    if kind == "quiz":
        text = export.quiz_markdown(record["items"], record["title"])
    elif kind == "flashcards":
        text = export.deck_markdown(record["items"], record["title"])
    elif kind == "mindmap":
        text = export.mindmap_markdown(record["map"])
    else:
        outline = record["outline"]
        parts = [export.outline_markdown(outline)]
        for m, module in enumerate(outline["modules"]):
            for l, _ in enumerate(module["lessons"]):
                lesson = record["lessons"].get(f"{m}.{l}")
                if lesson:
                    parts.append(export.lesson_markdown(lesson))
        text = "\n".join(parts)
    return {"filename": f"{name}.md", "mime": "text/markdown", "text": text}


async def _import(engine, ctx, filename, title=None):
    """A deck from an .apkg (Anki) or .csv/.txt (Quizlet) file in ``ctx.payload``."""
    from quire.study import export  # lazy: sqlite3 loads after the engine starts

    data = ctx.payload or b""
    lower = filename.lower()
    if lower.endswith((".apkg", ".colpkg")):
        try:
            cards = export.read_apkg(data)
        except Exception as exc:  # zipfile/sqlite errors: say what the file is not
            raise StudyError(f"{filename} could not be read as an Anki deck ({exc}).") from None
    elif lower.endswith((".csv", ".txt", ".tsv")):
        cards = export.read_quizlet(data.decode("utf-8", errors="replace"))
    else:
        raise StudyError(f"{filename}: import takes an Anki .apkg or a Quizlet .csv/.txt file.")
    if not cards:
        raise StudyError(f"{filename} holds no cards Quire can read.")
    items = [{**c, "chunk_ids": [], "chunk_hashes": {}, "made_without_ai": True} for c in cards]
    for item in items:
        item["id"] = item_id(item)
    items = list({i["id"]: i for i in items}.values())
    record = _new_record("flashcards", {"items": items, "report": {"kept": len(items), "dropped": []}}, scope=None,
                         label=filename, sources=[], title=title or f"Flashcards: {filename}")
    record["imported"] = True
    await _save(engine, record)
    return await _view(engine, record)


# ---------------------------------------------------------------- prompt templates
async def _templates(engine, ctx):
    overrides = await _overrides(engine)
    return [{"name": n, "variables": sorted(TEMPLATE_VARIABLES[n]), "overridden": n in overrides} for n in STUDY_TEMPLATES]


def _check_template_name(name: str) -> None:
    if name not in STUDY_TEMPLATES:
        raise ValueError(f"unknown template {name!r}; choose one of: {', '.join(STUDY_TEMPLATES)}")


async def _template(engine, ctx, name):
    _check_template_name(name)
    overrides = await _overrides(engine)
    default = prompts.load(name)
    return {"name": name, "text": overrides.get(name, default), "default": default, "overridden": name in overrides,
            "variables": sorted(TEMPLATE_VARIABLES[name])}


async def _save_override(engine, ctx, name, text):
    """Keep a person's edit; it must use exactly the variables the code passes."""
    _check_template_name(name)
    prompts.render_text(text, {v: "" for v in TEMPLATE_VARIABLES[name]}, name=f"your {name} template")
    overrides = {**await _overrides(engine), name: text}
    await engine.store.commit([("settings", OVERRIDES_KEY, overrides)])
    return await _template(engine, ctx, name)


async def _reset_override(engine, ctx, name):
    _check_template_name(name)
    overrides = {k: v for k, v in (await _overrides(engine)).items() if k != name}
    await engine.store.commit([("settings", OVERRIDES_KEY, overrides)])
    return await _template(engine, ctx, name)


METHODS = {
    "studyGenerate": _generate,
    "studySets": _sets,
    "studyOpen": _open,
    "studyDelete": _delete,
    "quizAnswer": _quiz_answer,
    "quizSubmit": _quiz_submit,
    "quizRestart": _quiz_restart,
    "review": _review,
    "rate": _rate,
    "resolveCard": _resolve_card,
    "openLesson": _lesson,
    "lessonDone": _lesson_done,
    "studyExport": _export,
    "studyImport": _import,
    "promptTemplates": _templates,
    "promptTemplate": _template,
    "savePromptOverride": _save_override,
    "resetPromptOverride": _reset_override,
}
