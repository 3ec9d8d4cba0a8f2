"""The library and search methods, as the page (and kiosk scripts) call them."""

from __future__ import annotations


async def _train(engine, ctx):
    return await engine.train(progress=ctx.emit, cancelled=ctx.cancelled)


async def _stage(engine, ctx, name, category=None, language=None, max_bytes=None):
    if max_bytes:  # the page's size limit (Settings can raise the default) also binds the engine
        engine.library.max_bytes = int(max_bytes)
    return await engine.stage(name, ctx.payload, category=category, language=language)


async def _stage_many(engine, ctx, sizes, category=None, language=None, max_bytes=None):
    """Files sent as one payload, cut by ``sizes`` (``[[name, bytes], ...]``): one call and
    one commit for a batch of a folder instead of one each."""
    if max_bytes:
        engine.library.max_bytes = int(max_bytes)
    data, files, at = ctx.payload or b"", [], 0
    if sum(int(n) for _, n in sizes) != len(data):
        raise ValueError(f"stageMany: the sizes add up to {sum(int(n) for _, n in sizes)} bytes, the payload has {len(data)}")
    for name, n in sizes:
        files.append((name, data[at:at + int(n)]))
        at += int(n)
    return await engine.stage_many(files, category=category, language=language)


async def _recording(engine, ctx, source_id):
    """A recording's name, to play a cited moment: ``{name, id}``, or None when this library does
    not keep originals (Settings).  The page reads the bytes from the store itself (a lecture
    video of hundreds of MB must not pass through the engine's heap).  A source that is gone:
    LibraryError."""
    source = engine.library.source(source_id)
    if not (engine.library.keep_originals or source["status"] == "staged"):
        return None
    return {"name": source["name"], "id": source["id"]}


METHODS = {
    "stage": _stage,
    "stageMany": _stage_many,
    "stageText": lambda engine, ctx, name, text, category=None: engine.stage_text(name, text, category),
    "reject": lambda engine, ctx, name, size, reason: engine.reject(name, size, reason),
    "train": _train,
    "sources": lambda engine, ctx: engine.sources(),
    "sourcesSince": lambda engine, ctx, epoch=None, revision=0, offset=0: engine.library.sources_since(epoch, revision, offset),
    "categories": lambda engine, ctx: engine.categories(),
    "setCategory": lambda engine, ctx, source_id, category: engine.set_category(source_id, category),
    "remove": lambda engine, ctx, source_id: engine.remove(source_id),
    "setForceOcr": lambda engine, ctx, source_id, force: engine.library.set_force_ocr(source_id, force),
    "setOcrLanguage": lambda engine, ctx, choice: engine.library.set_ocr_language(choice),
    "setLanguage": lambda engine, ctx, source_id, language: engine.set_language(source_id, language),
    "librarySettings": lambda engine, ctx: engine.library.settings(),
    "setKeepOriginals": lambda engine, ctx, keep: engine.set_keep_originals(keep),
    "eraseAll": lambda engine, ctx: engine.erase_all(),
    "chunks": lambda engine, ctx, source_id: engine.chunks(source_id),
    "search": lambda engine, ctx, query, k=7, scope=None: engine.search(query, k=k, scope=scope),
    "passage": lambda engine, ctx, chunk_id, query="": engine.passage(chunk_id, query),
    "recording": _recording,
    "usage": lambda engine, ctx: engine.usage(),
}
