"""The page keeps one copy of the source list and asks only for what changed (sourcesSince)."""

from __future__ import annotations

import asyncio

from quire.app import Quire
from quire.services import Context
from quire.services.library import METHODS
from quire.store import MemoryStore


def run(coro):
    return asyncio.run(coro)


def apply(copy: dict, d: dict) -> dict:
    """What api.js does with an answer."""
    if d["all"]:
        copy["by_id"] = {}
    for sid in d["removed"]:
        copy["by_id"].pop(sid, None)
    for s in d["changed"]:
        copy["by_id"][s["id"]] = s
    copy["epoch"], copy["revision"] = d["epoch"], d["revision"]
    return copy


async def since(q, copy):
    return METHODS["sourcesSince"](q, Context(), copy.get("epoch"), copy.get("revision", 0))


def test_only_what_changed_comes_back_and_the_copy_matches_the_list():
    async def go():
        q = await Quire.open(MemoryStore())
        for i in range(30):
            await q.stage_text(f"note-{i}", f"Note {i} about mitochondria and cells number {i}.")
        copy = {}
        first = await since(q, copy)
        apply(copy, first)
        await q.train()
        after_train = await since(q, copy)
        apply(copy, after_train)
        ids = [s["id"] for s in q.sources()]
        await q.set_category(ids[3], "Biology")
        renamed = await since(q, copy)
        apply(copy, renamed)
        await q.remove(ids[4])
        removed = await since(q, copy)
        apply(copy, removed)
        nothing = await since(q, copy)
        same = sorted(copy["by_id"].values(), key=lambda s: (s["added"], s["name"])) == q.sources()
        await q.erase_all()
        erased = await since(q, copy)
        return first, after_train, renamed, removed, nothing, same, erased, ids
    first, after_train, renamed, removed, nothing, same, erased, ids = run(go())
    assert first["all"] and len(first["changed"]) == 30
    assert not after_train["all"] and len(after_train["changed"]) == 30  # each became trained
    assert [s["id"] for s in renamed["changed"]] == [ids[3]] and renamed["changed"][0]["category"] == "Biology"
    assert renamed["removed"] == []
    assert removed["changed"] == [] and removed["removed"] == [ids[4]]
    assert nothing["changed"] == [] and nothing["removed"] == [] and not nothing["all"]
    assert same
    assert erased["all"] and erased["changed"] == []  # a new list: the copy starts over


def test_a_change_that_failed_to_save_is_not_reported():
    from quire.store import StoreFullError

    async def go():
        q = await Quire.open(MemoryStore())
        await q.stage_text("a", "Alpha text about enzymes.")
        await q.train()
        copy = apply({}, METHODS["sourcesSince"](q, Context()))
        sid = q.sources()[0]["id"]

        async def full(puts=(), deletes=()):
            raise StoreFullError("full")
        q.store.commit = full
        try:
            await q.set_category(sid, "Never")
        except Exception:
            pass
        return await since(q, copy), q.sources()[0]["category"]
    d, category = run(go())
    assert d["changed"] == [] and category is None
