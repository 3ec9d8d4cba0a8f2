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
    """What api-sources.js does with an answer."""
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


def fill(q, page: int) -> tuple[dict, int]:
    """What api-sources.js does with a whole list in pages (syncSources, pages): every page of the list
    as it was at the first, then what changed since that first answer.  Returns the copy and how
    many answers it took."""
    q.library.LIST_PAGE = page
    first = METHODS["sourcesSince"](q, Context())
    head, by_id, answers, d = first, {}, 1, first
    while True:
        if d["all"]:
            head, by_id = d, {}
        by_id.update({s["id"]: s for s in d["changed"]})
        if d["more"] is None:
            break
        d = METHODS["sourcesSince"](q, Context(), head["epoch"], head["revision"], d["more"])
        answers += 1
    copy = {"by_id": by_id, "epoch": head["epoch"], "revision": head["revision"]}
    return apply(copy, METHODS["sourcesSince"](q, Context(), copy["epoch"], copy["revision"])), answers + 1


def listed(copy: dict) -> list[dict]:
    return sorted(copy["by_id"].values(), key=lambda s: (s["added"], s["name"]))


async def notes(n: int, page: int | None = None, stem: str = "note"):
    """A library of ``n`` staged one-passage notes; ``page``: records per answer of a long list."""
    q = await Quire.open(MemoryStore())
    for i in range(n):
        await q.stage_text(f"{stem}-{i}", f"Note {i} about enzymes and cells number {i}.")
    if page:
        q.library.LIST_PAGE = page
    return q


def test_a_long_list_comes_in_pages_cut_from_the_list_as_it_was_at_the_first():
    async def go():
        q = await notes(25, page=10)
        first = METHODS["sourcesSince"](q, Context())
        ids = [s["id"] for s in q.sources()]
        # Between the pages someone renames a note already sent, removes one still to come and adds one.
        await q.set_category(ids[2], "Biology")
        await q.remove(ids[20])
        await q.stage_text("late", "A note added while the list was on its way.")
        second = METHODS["sourcesSince"](q, Context(), first["epoch"], first["revision"], first["more"])
        third = METHODS["sourcesSince"](q, Context(), first["epoch"], first["revision"], second["more"])
        after = METHODS["sourcesSince"](q, Context(), first["epoch"], first["revision"])
        whole, answers = fill(q, 10)
        return first, second, third, after, ids, q.sources(), whole, answers
    first, second, third, after, ids, now, whole, answers = run(go())
    assert first["all"] and first["more"] == 10 and [s["id"] for s in first["changed"]] == ids[:10]
    assert not second["all"] and second["more"] == 20 and [s["id"] for s in second["changed"]] == ids[10:20]
    # The last page is the list as it was: the note removed since is still in it, the new one not.
    assert third["more"] is None and [s["id"] for s in third["changed"]] == ids[20:]
    # What changed meanwhile comes after, since the first answer's revision.
    assert after["removed"] == [ids[20]]
    assert sorted(s["name"] for s in after["changed"]) == ["late.md", first["changed"][2]["name"]]
    copy = {"by_id": {}}
    for d in (first, second, third, after):
        apply(copy, d)
    assert listed(copy) == now
    assert listed(whole) == now and answers == 4  # three pages of 26 and one look for changes


def test_a_page_of_a_list_that_is_gone_starts_over():
    async def go():
        q = await notes(12, page=5)
        first = METHODS["sourcesSince"](q, Context())
        await q.erase_all()  # a new table (as a reload after another tab's change makes)
        for i in range(7):
            await q.stage_text(f"new-{i}", f"New note {i} on respiration.")
        again = METHODS["sourcesSince"](q, Context(), first["epoch"], first["revision"], first["more"])
        whole, _ = fill(q, 5)
        return first, again, q.sources(), whole
    first, again, now, whole = run(go())
    assert first["all"] and len(first["changed"]) == 5
    assert again["all"] and again["epoch"] != first["epoch"] and again["more"] == 5
    assert [s["id"] for s in again["changed"]] == [s["id"] for s in now[:5]]
    assert listed(whole) == now and len(now) == 7


def test_a_short_list_is_one_answer():
    async def go():
        q = await notes(3)
        return METHODS["sourcesSince"](q, Context()), q.library._listing
    d, listing = run(go())
    assert d["all"] and d["more"] is None and len(d["changed"]) == 3 and listing is None


def test_what_a_train_changed_comes_in_pages_too():
    async def go():
        q = await notes(23, page=10)
        copy, _ = fill(q, 10)
        await q.remove(q.sources()[0]["id"])
        await q.train()  # every other record changes: 22 of them
        first = METHODS["sourcesSince"](q, Context(), copy["epoch"], copy["revision"])
        copy = apply(copy, first)
        d = first
        while d["more"] is not None:
            d = METHODS["sourcesSince"](q, Context(), first["epoch"], first["revision"], d["more"])
            copy = apply(copy, d)
        return first, copy, q.sources()
    first, copy, now = run(go())
    assert not first["all"] and first["more"] == 10 and len(first["changed"]) == 10 and len(first["removed"]) == 1
    assert listed(copy) == now and {s["status"] for s in now} == {"trained"}
