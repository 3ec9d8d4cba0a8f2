"""Export everything as one vault file; import one (merge or replace), as engine methods.

Import is safe with a stranger's file:

1. ``quire.vault.unpack`` reads the whole file within the vault's limits and
   checks every checksum before anything else happens.
2. Sources and passages are checked record by record (``quire.vault_library``);
   the vault's own search index is dropped and rebuilt from its passages.
3. Settings that decide where data goes are never taken from a vault
   (``quire.vault_settings``); the result lists what was ignored, host named.
4. Every write, the rebuilt index included, goes to the store in ONE commit:
   a damaged file or a full disk leaves the library exactly as it was.

``vaultOfFiles`` makes a vault from documents alone, trained in a library of its own in
memory (the kiosk's sample library: a replacing import of it resets a kiosk in one commit).

>>> import asyncio
>>> from quire.app import Quire
>>> from quire.services import Context
>>> from quire.store import MemoryStore
>>> async def demo():
...     q = await Quire.open(MemoryStore())
...     await q.stage("a.md", b"# Rocks\\nBasalt forms when lava cools quickly.")
...     await q.train()
...     data = base64.b64decode((await METHODS["exportVault"](q, Context()))["base64"])
...     fresh = await Quire.open(MemoryStore())
...     r = await METHODS["importVault"](fresh, Context(payload=data), "replace")
...     return r["sources"], r["ignored"], (await fresh.search("basalt"))[0]["source"]
>>> asyncio.run(demo())
(1, [], 'a.md')
"""

from __future__ import annotations

import base64
import time

from quire import passages, vault, vault_course, vault_settings
from quire.errors import LibraryError
from quire.library import Library
from quire.retrieval import segments
from quire.services.llm import DEFAULTS as LLM_DEFAULTS, SETTINGS_KEY as LLM_KEY
from quire.store import BUCKETS, MemoryStore, StoreFullError
from quire.vault_library import LibraryDataError, check_library, rebuild_index

PAGE_SETTINGS = vault_settings.PAGE_SETTINGS  # the page's own settings, carried in the vault but never stored here
OURS_WIN = ("vectors", "ocr")  # caches keyed by content: on merge, a vault never overwrites what we computed


async def _stores(store, skip: str | None = None) -> dict:
    """Every bucket as ``{key: value}``, passages in the current form (a library stored before
    vault format 3 still holds some keyed the old way: an export writes them new, and an
    import compares and rebuilds with them new)."""
    out = {b: await store.all(b) if b != skip else {} for b in BUCKETS}
    out["chunks"] = {sid: passages.upgraded(cs) for sid, cs in out["chunks"].items()}
    return out


def _final(current: dict, p: dict) -> dict:
    """The stores as they will be after committing plan ``p``."""
    out = {b: dict(v) for b, v in current.items()}
    for bucket, key in p["deletes"]:
        out.setdefault(bucket, {}).pop(key, None)
    for bucket, key, value in p["puts"]:
        out.setdefault(bucket, {})[key] = value
    return out


def _progress(engine):
    from quire.services import progress  # lazy: progress imports study hooks

    return progress.service(engine)


async def export_vault(engine, page_settings: dict | None = None) -> dict:
    engine.events.emit({"kind": "vault_export"})
    await _progress(engine).flush()  # the export is in the vault it writes
    # The search index stays out: an import never trusts one and rebuilds it from the passages.
    snapshot = await _stores(engine.store, skip="index")
    if page_settings:
        snapshot["settings"][PAGE_SETTINGS] = {k: str(v) for k, v in page_settings.items() if str(k).startswith("quire.")}
    buckets, blobs = vault.from_store(snapshot)
    data = vault.pack(buckets, blobs)
    return {"base64": base64.b64encode(data).decode("ascii"), "bytes": len(data),
            "counts": {b: len(v) for b, v in snapshot.items()},
            "name": f"quire-vault-{time.strftime('%Y-%m-%d')}.quire"}


async def vault_of_files(files, category: str | None = None) -> dict:
    """A vault holding only ``files`` (``[(name, bytes)]``), trained under ``category`` in a
    library of its own in memory: the library in the store is neither read nor touched.

    >>> import asyncio
    >>> r = asyncio.run(vault_of_files([("a.md", b"# Rocks\\nBasalt forms when lava cools.")], "Sample"))
    >>> r["ids"], vault.unpack(base64.b64decode(r["base64"]))[0]["sources"][r["ids"][0]]["category"]
    (['72a4424aeb13c551'], 'Sample')
    """
    library = await Library.open(MemoryStore())
    records = await library.stage_many(files, category=category)
    failed = [f"{r['name']}: {r['error']}" for r in records if r["status"] == "failed"]
    counts = await library.train()
    failed += [f"{f['name']}: {f.get('error')}" for f in counts["files"] if f["outcome"] == "failed"]
    if failed:  # a document of the bundle itself: a broken build, not the person's doing
        raise LibraryError(f"these documents could not be trained: {'; '.join(failed)}")
    data = vault.pack(*vault.from_store(await _stores(library.store, skip="index")))
    return {"base64": base64.b64encode(data).decode("ascii"), "bytes": len(data),
            "ids": [r["id"] for r in records]}


def _incoming(data: bytes) -> tuple[dict, dict]:
    """The vault's stores and meta, refused (``VaultError``) before anything changes."""
    buckets, blobs, meta = vault.unpack(data)
    incoming = vault.to_store(buckets, blobs)
    unknown = sorted(set(incoming) - set(BUCKETS))
    if unknown:
        raise vault.VaultError(f"this vault holds unknown data ({', '.join(unknown)}); it was not made by "
                               "this Quire or was changed. Nothing was imported.")
    try:
        check_library(incoming.get("sources") or {}, incoming.get("chunks") or {})
    except LibraryDataError as exc:
        raise vault.VaultError(f"{exc}; nothing was imported.") from None
    return incoming, meta


def _as_course(incoming: dict, current: dict, data: bytes, mode: str, course: dict) -> tuple[dict, dict, str, dict]:
    """``(incoming, scope, mode, info)`` for a course import (``quire.vault_course``): only the library
    and the teacher's sets come in; a student's replace deletes only the library and earlier courses'
    sets (``scope``), a kiosk's deletes everything else.  Settings are never taken from a course."""
    kind = course.get("mode") if isinstance(course, dict) else None
    if kind not in vault_course.MODES:
        raise vault.VaultError(f"unknown course mode {kind!r}; choose one of: {', '.join(vault_course.MODES)}")
    title = course.get("title") or vault_course.title_of(incoming.get("sources") or {})
    info = {"id": vault.sha256(data), "title": vault_course.clean_title(title)}
    try:
        taken = vault_course.course_stores(incoming, info)
    except vault_course.CourseError as exc:
        raise vault.VaultError(f"{exc}; nothing was imported.") from None
    taken["settings"] = current["settings"]
    if kind == "kiosk":
        return taken, current, "replace", info
    if mode == "merge":  # a set the student already has from this course keeps their answers
        taken["study"] = {k: v for k, v in taken["study"].items() if k not in current["study"]}
    scope = {**vault_course.replaceable(current), "settings": current["settings"]} if mode == "replace" else current
    return taken, scope, mode, info


IMPORT_STAGES = ("checking", "index", "saving", "opening")  # in order; each event's fraction is its share


async def import_vault(engine, data: bytes, mode: str = "merge", page: dict | None = None,
                       course: dict | None = None, progress=None) -> dict:
    """Import a vault file; ``page`` is the page's current settings (localStorage), to compare.

    ``course`` (``{"mode": "offer" | "kiosk", "title"}``) imports it as a course: see ``_as_course``.
    ``progress(event)`` hears ``{"stage", "fraction"}`` as each of ``IMPORT_STAGES`` begins."""
    if mode not in vault.MODES:
        raise vault.VaultError(f"unknown import mode {mode!r}; choose one of: {', '.join(vault.MODES)}")
    tell = progress or (lambda event: None)

    def stage(name: str) -> None:
        tell({"stage": name, "fraction": round(IMPORT_STAGES.index(name) / len(IMPORT_STAGES), 2)})

    stage("checking")
    incoming, meta = _incoming(data)
    store = engine.store
    current = await _stores(store)
    info = None
    if course is not None:
        incoming, scope, mode, info = _as_course(incoming, current, data, mode, course)
        page_kept, ignored, page_ignored = {}, [], []
    else:
        scope = current
        theirs_settings = incoming.get("settings") or {}
        page_kept, page_ignored = vault_settings.page_settings(theirs_settings.get(PAGE_SETTINGS), page)
        incoming["settings"], ignored = vault_settings.engine_settings(theirs_settings, current["settings"], mode)
    incoming.pop("index", None)  # never trusted: rebuilt below from the passages
    if mode == "merge":
        for bucket in OURS_WIN:
            incoming[bucket] = {k: v for k, v in (incoming.get(bucket) or {}).items() if k not in current[bucket]}
    p = vault.plan(incoming, scope, mode)
    final = _final(current, p)
    model = {**LLM_DEFAULTS, **(final["settings"].get(LLM_KEY) or {})}["embed_model"]
    stage("index")
    index = segments.snapshot(rebuild_index(final["sources"], final["chunks"], final["vectors"], model),
                              extra_keys=current["index"])  # written as segments; every other index key goes
    deletes = [d for d in p["deletes"] if d[0] != "index"] + index.deletes
    puts = [x for x in p["puts"] if x[0] != "index"] + index.puts
    if mode == "replace":  # what began before it (an answer, a study set) saves nothing after it
        engine.wipes = getattr(engine, "wipes", 0) + 1
    stage("saving")
    try:
        await store.commit(puts, deletes)  # ONE commit: all of it, or nothing
    except StoreFullError:
        raise LibraryError(await _progress(engine).full_message("the imported vault", len(data))) from None
    stage("opening")
    old = engine.library
    options = {k: getattr(old, k) for k in ("chunk_size", "overlap", "max_bytes", "recognise", "transcribe")}
    engine.library = await Library.open(store, **options)
    await engine.library.load_chunks()
    if hasattr(engine, "llm"):
        await engine.llm.load()
    return {"mode": mode, "summary": p["summary"], "counts": {b: len(v) for b, v in incoming.items()},
            "read_version": meta["read_version"], "created": meta.get("created"), "course": info,
            "sources": len(engine.library.sources()), "page_settings": page_kept,
            "ignored": ignored + [m for m in page_ignored if m.split(";")[0] not in {i.split(";")[0] for i in ignored}]}


async def _export(engine, ctx, page_settings=None):
    return await export_vault(engine, page_settings)


def course_about(data: bytes, title: str | None = None) -> dict:
    """What the page offers of a course vault: its about record (``quire.vault_course.about``), its
    sha256 and size; a vault that would not import is refused (``VaultError``) with the reason."""
    incoming, meta = _incoming(data)
    found = vault_course.about(incoming.get("sources") or {}, incoming.get("chunks") or {},
                               incoming.get("study") or {}, meta.get("created"), title)
    return {**found, "sha256": vault.sha256(data), "size": len(data)}


async def _course_about(engine, ctx, title=None):
    try:
        return course_about(bytes(ctx.payload or b""), title)
    except MemoryError:
        raise vault.VaultError("this course vault is too large to read in this browser tab's memory.") from None


async def _import(engine, ctx, mode="merge", data_b64=None, page=None, course=None):
    data = ctx.payload if ctx.payload is not None else base64.b64decode(data_b64 or "")
    try:
        return await import_vault(engine, data, mode, page, course, ctx.emit)
    except MemoryError:  # its own message is empty; the store was not touched (one commit, at the end)
        raise vault.VaultError("this vault is too large to import in this browser tab's memory. Nothing was "
                               "imported; close other tabs, or import a vault with fewer originals.") from None


async def _of_files(engine, ctx, sizes, category=None):
    """Documents sent as one payload, cut by ``sizes`` (``[[name, bytes], ...]``), as stageMany does."""
    data, files, at = ctx.payload or b"", [], 0
    for name, n in sizes:
        files.append((name, bytes(data[at:at + int(n)])))
        at += int(n)
    if at != len(data):
        raise ValueError(f"vaultOfFiles: the sizes add up to {at} bytes, the payload has {len(data)}")
    return await vault_of_files(files, category)


METHODS = {
    "exportVault": _export,
    "importVault": _import,
    "courseAbout": _course_about,
    "vaultOfFiles": _of_files,
}
