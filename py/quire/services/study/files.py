"""Exports (Markdown, CSV, OPML, Anki .apkg) and imports (Anki, Quizlet)."""

from __future__ import annotations

import base64
import logging

from quire.errors import InvalidInput
from quire.study.items import item_id
from quire.study.validate import StudyError

from .common import record_action, load_set, save_set
from .generation import new_set_record
from .sets import set_view

log = logging.getLogger("quire.study")


# ---------------------------------------------------------------- exports and imports
def _slug(title: str) -> str:
    keep = "".join(ch if ch.isalnum() or ch in " -_" else " " for ch in title)
    return "-".join(keep.split())[:60] or "quire"


async def _export(engine, ctx, set_id, fmt):
    """``{"filename", "mime", "text"}`` or, for .apkg, ``{"filename", "mime", "base64"}``."""
    from quire.study import export  # lazy: .apkg needs sqlite3, which loads after the engine starts

    record = await load_set(engine, set_id)
    out = _export_file(export, record, fmt)
    record_action(engine, record, "export", item=record["id"])
    return out


def _export_file(export, record: dict, fmt: str) -> dict:
    kind, name = record["kind"], _slug(record["title"])
    formats = {"quiz": ("markdown", "csv"), "flashcards": ("apkg", "csv", "markdown"),
               "workshop": ("markdown",), "mindmap": ("markdown", "opml")}[kind]
    if fmt not in formats:
        raise InvalidInput(f"a {kind} exports as {', '.join(formats)} (not {fmt!r})")
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

    from quire.study.anki_read import AnkiError, read_deck

    data = ctx.payload or b""
    lower = filename.lower()
    deck_name = None
    if lower.endswith((".apkg", ".colpkg")):
        try:
            deck = read_deck(data)
        except AnkiError as exc:
            raise StudyError(f"{filename} could not be read as an Anki deck: {exc}.") from None
        except MemoryError:
            raise StudyError(f"{filename} is too large to read in this browser tab's memory.") from None
        except Exception as exc:  # a bug or an odd file: still say which file and what it is not
            log.error("%s could not be read as an Anki deck", filename, exc_info=True)
            raise StudyError(f"{filename} could not be read as an Anki deck ({type(exc).__name__}: {exc}).") from None
        cards, deck_name = deck.cards, deck.name
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
    record = new_set_record("flashcards", {"items": items, "report": {"kept": len(items), "dropped": []}}, scope=None,
                         label=filename, sources=[], title=title or deck_name or f"Flashcards: {filename}")
    record["imported"] = True
    await save_set(engine, record)
    return await set_view(engine, record)


METHODS = {
    "studyExport": _export,
    "studyImport": _import,
}
