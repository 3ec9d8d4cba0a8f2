"""quire.repair: opening a library repairs an index that does not match the stored passages.

Two tabs training at once (before writes were serialised) left sources listed as trained
but missing from the index; Train skips them as already known, so only opening can fix it.
"""

import asyncio

import pytest

from quire.library import Library
from quire.library_index import INDEX_KEY
from quire.store import MemoryStore

TEXTS = {"ice.md": "# Ice\nGlaciers carve valleys.", "sand.md": "# Sand\nBarchan dunes migrate.",
         "fire.md": "# Fire\nRhyolite is felsic."}
WORD = {"ice.md": "glaciers", "sand.md": "barchan", "fire.md": "rhyolite"}


async def trained_store() -> tuple[MemoryStore, dict[str, str]]:
    store = MemoryStore()
    lib = await Library.open(store)
    for name, text in TEXTS.items():
        await lib.stage(name, text.encode())
    await lib.train()
    return store, {s["name"]: s["id"] for s in lib.sources()}


def drop_source(store, sid):
    """The index lost a source: its record goes, so its rows are dead (quire.retrieval.segments)."""
    del store.data["index"][f"src:{sid}"]


def stray_source(store, sid):
    """A removed source whose passages stayed in the index."""
    del store.data["sources"][sid]
    del store.data["chunks"][sid]


CORRUPTIONS = {
    "a source missing from the index": (lambda store, ids: drop_source(store, ids["sand.md"]), ["sand.md"]),
    "no index at all": (lambda store, ids: store.data["index"].clear(), sorted(TEXTS)),
    "an unreadable index": (lambda store, ids: store.data["index"].update({"seg:1:0": b"not an index"}), sorted(TEXTS)),
    "an unreadable old-format index": (lambda store, ids: (store.data["index"].clear(),
                                                           store.data["index"].update({INDEX_KEY: b"not an index"})),
                                       sorted(TEXTS)),
    "a removed source still indexed": (lambda store, ids: stray_source(store, ids["fire.md"]), None),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_open_repairs_the_index_and_saves_the_repair(case):
    corrupt, expected = CORRUPTIONS[case]

    async def go():
        store, ids = await trained_store()
        corrupt(store, ids)
        lib = await Library.open(store)
        await lib.load_chunks()
        names = {s["name"] for s in lib.sources()}
        found = {n: [h["source"] for h in lib.search(WORD[n])][:1] == [n] for n in TEXTS}
        again = await Library.open(store)  # the repair was saved: nothing left to fix
        return lib.repaired, names, found, again.repaired

    repaired, names, found, again = asyncio.run(go())
    if expected is not None:
        assert sorted(repaired) == expected
    else:
        assert len(repaired) == 1
    assert all(found[n] for n in names) and not any(found[n] for n in set(TEXTS) - names)
    assert again == []


@pytest.mark.parametrize("original_kept, status", [(True, "staged"), (False, "failed")])
def test_a_source_whose_passages_are_lost_is_trained_again_or_says_so(original_kept, status):
    async def go():
        store, ids = await trained_store()
        sid = ids["ice.md"]
        del store.data["chunks"][sid]
        drop_source(store, sid)
        if not original_kept:
            del store.data["originals"][sid]
        lib = await Library.open(store)
        record = lib.source(sid)
        counts = await lib.train() if original_kept else None
        return record, counts, [h["source"] for h in lib.search("glaciers")]

    record, counts, hits = asyncio.run(go())
    assert record["status"] == status
    if original_kept:
        assert counts["changed"] + counts["added"] == 1 and hits == ["ice.md"]
    else:
        assert "add the file again" in record["error"] and hits == []


def test_a_consistent_library_is_left_alone():
    async def go():
        store, _ = await trained_store()
        before = dict(store.data["index"])
        lib = await Library.open(store)
        return lib.repaired, store.data["index"] == before

    assert asyncio.run(go()) == ([], True)


def test_repair_in_memory_waits_for_save_index():
    async def go():
        store, ids = await trained_store()
        drop_source(store, ids["sand.md"])
        lib = await Library.open(store, repair="memory")
        unsaved = (await Library.open(store, repair="memory")).repaired
        await lib.save_index()
        return unsaved, (await Library.open(store)).repaired

    assert asyncio.run(go()) == (["sand.md"], [])
