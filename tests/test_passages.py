"""quire.passages: a passage's id is keyed "chunk_id" everywhere; libraries and vaults written
before vault format 3 keyed it "id" in stored passages, and still open, search, answer, study
and travel as vaults.  "Today's format" below is built the way Train and the vault wrote it
until then: ``{**chunk.to_dict(), "id": chunk.id}`` (no "chunk_id") in vault format 2."""

import asyncio

import pytest

from ollama_server import OllamaStub
from quire import passages, vault
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import vault as vs
from quire.store import BUCKETS, MemoryStore, SQLiteStore
from test_study_service import BIO, ROCKS
from vault_crafts import old_passages, v2_vault

DOCS = {  # the study tests' two documents: enough full sentences for cards made without a model
    "cells.md": BIO,
    "rocks.md": ROCKS,
}

def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("records, want", [
    ([{"id": "s:0", "n": 0}], [{"chunk_id": "s:0", "n": 0}]),                            # today's stored form
    ([{"chunk_id": "s:0", "n": 0}], [{"chunk_id": "s:0", "n": 0}]),                      # the new form
    ([{"id": "s:0"}, {"chunk_id": "s:1"}], [{"chunk_id": "s:0"}, {"chunk_id": "s:1"}]),  # mixed
    ([{"id": "s:7", "chunk_id": "s:0"}], [{"chunk_id": "s:0"}]),                         # never both keys
    ([], []),
    ([{"id": "s:0"}, "junk"], [{"chunk_id": "s:0"}, "junk"]),  # not a record: left for the vault's checks
    ({"id": "s:0"}, {"id": "s:0"}),                            # not a list: the same
])
def test_upgraded(records, want):
    got = passages.upgraded(records)
    assert got == want and all("id" not in r for r in got if isinstance(got, list) and isinstance(r, dict))


def test_upgraded_copies_old_records_and_keeps_new_lists():
    old = [{"id": "s:0", "text": "a"}]
    assert passages.upgraded(old) is not old and old == [{"id": "s:0", "text": "a"}]
    new = [{"chunk_id": "s:0", "text": "a"}]
    assert passages.upgraded(new) is new


# ------------------------------------------------------------------ today's format, by hand
async def to_old_form(store) -> None:
    """Rewrite a library's stored passages into today's format (nothing else in the store changes)."""
    chunks = await store.all("chunks")
    await store.commit([("chunks", sid, old_passages(cs)) for sid, cs in chunks.items()])


async def library(store):
    q = await Quire.open(store, transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
    for name, text in DOCS.items():
        await q.stage(name, text.encode())
    await q.train()
    return q


def v2_vault_of(snapshot: dict) -> bytes:
    """A library's stores as today's export writes them (the index stays out, as there)."""
    return v2_vault(*vault.from_store({**snapshot, "index": {}}))


def keys_of(chunks: dict) -> set[str]:
    """Which id keys the stored passages use."""
    return {k for cs in chunks.values() for c in cs for k in ("id", "chunk_id") if k in c}


async def importing(q, data, mode):
    return await vs.METHODS["importVault"](q, Context(payload=data), mode)


async def call(q, method, *args):
    return await q.call(method, *args)


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


def test_a_library_stored_in_todays_format_searches_answers_studies_and_exports(tmp_path, stub):
    path = tmp_path / "quire.sqlite"

    async def before():
        q = await library(SQLiteStore(path))
        deck = await q.generate("flashcards", count=4)  # no model: cards cite passages by chunk id
        await to_old_form(q.store)
        return deck, await q.store.all("chunks")

    deck, stored = run(before())
    assert keys_of(stored) == {"id"} and deck["items"]

    async def after():
        q = await Quire.open(SQLiteStore(path), transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
        hits = await q.search("lava cools")
        shown = await q.passage(hits[0]["chunk_id"], "lava")
        review = await q.review(deck["id"])
        made = await q.generate("flashcards", count=3)
        await q.llm.save({"url": stub.url, "chat_model": "qwen3:4b"})
        stub.enqueue_chat(["Basalt forms when lava cools quickly [1]."])
        answer = await q.ask("How does basalt form?")
        exported = await q.export_vault()
        await q.stage("more.md", b"# More\nObsidian is volcanic glass.")
        await q.train()
        return q, hits, shown, review, made, answer, exported, await q.store.all("chunks")

    q, hits, shown, review, made, answer, exported, stored = run(after())
    rocks = next(s["id"] for s in q.sources() if s["name"] == "rocks.md")
    ids = {f"{sid}:{n}" for sid, cs in stored.items() for n in range(len(cs))}
    # Search: one key, the passage's text is there.
    assert hits[0]["source"] == "rocks.md" and "lava" in hits[0]["text"]
    assert all("id" not in h and h["chunk_id"] in ids for h in hits)
    assert shown["chunk"]["chunk_id"] == hits[0]["chunk_id"] and "id" not in shown["chunk"]
    assert shown["context"][shown["span"][0]:shown["span"][1]].startswith("Basalt")
    # Study: the deck made before still plays and nothing looks stale; a new set cites real passages.
    assert review["due"] == len(deck["items"]) and review["flagged"] == 0
    assert all(c in ids for c in review["cards"][0]["chunk_ids"])
    assert made["items"] and all(c in ids for i in made["items"] for c in i["chunk_ids"])
    # Ask: its references name the passages it quoted.
    assert answer["used"] == [1] and answer["citations"][0]["chunk_id"] == hits[0]["chunk_id"]
    assert answer["citations"][0]["source_id"] == rocks and "lava" in answer["citations"][0]["passage"]
    # Written from now on: the new key only (the old records stay readable as they are).
    more = next(s["id"] for s in q.sources() if s["name"] == "more.md")
    assert keys_of({more: stored[more]}) == {"chunk_id"}
    assert keys_of({sid: cs for sid, cs in stored.items() if sid != more}) == {"id"}
    # The export writes the new key only, and imports into a fresh library.
    import base64
    data = base64.b64decode(exported["base64"])
    buckets, _, meta = vault.unpack(data)
    assert meta["read_version"] == vault.VERSION == 3 and keys_of(buckets["chunks"]) == {"chunk_id"}

    async def fresh():
        other = await Quire.open(MemoryStore())
        result = await importing(other, data, "replace")
        return result, await other.search("lava cools"), await other.store.all("chunks")
    result, again, imported = run(fresh())
    assert result["read_version"] == 3 and keys_of(imported) == {"chunk_id"}
    assert [h["chunk_id"] for h in again] == [h["chunk_id"] for h in hits]


def test_a_library_in_todays_format_is_repaired_from_its_passages():
    async def go():
        store = MemoryStore()
        await library(store)
        await to_old_form(store)
        store.data["index"].clear()  # the index is rebuilt from the stored passages
        q = await Quire.open(store)
        return q.library.repaired, await q.search("mitochondria")
    repaired, hits = run(go())
    assert sorted(repaired) == sorted(DOCS) and hits[0]["source"] == "cells.md"


@pytest.mark.parametrize("mode", ["replace", "merge"])
def test_a_vault_exported_today_imports(mode):
    async def go():
        q = await library(MemoryStore())
        deck = await q.generate("flashcards", count=4)
        hits = await q.search("lava cools")
        data = v2_vault_of({b: await q.store.all(b) for b in BUCKETS})
        other = await Quire.open(MemoryStore())
        await other.stage("own.md", b"# Own\nGlaciers carve valleys.")
        await other.train()
        result = await importing(other, data, mode)
        again = await other.search("lava cools")
        shown = await other.passage(again[0]["chunk_id"])
        return (deck, hits, vault.unpack(data)[2], result, again, shown, await other.review(deck["id"]),
                await other.generate("flashcards", count=3), await other.store.all("chunks"))
    deck, hits, meta, result, again, shown, review, cards, stored = run(go())
    assert meta["read_version"] == 2 and result["read_version"] == 2
    assert [h["chunk_id"] for h in again[:2]] == [h["chunk_id"] for h in hits[:2]]
    assert "lava" in shown["chunk"]["text"] and "id" not in shown["chunk"]
    assert review["due"] == len(deck["items"]) and review["flagged"] == 0
    assert cards["items"]
    assert keys_of(stored) == {"chunk_id"}  # the vault's passages are stored in the new form


def test_a_vault_exported_today_is_checked_as_strictly():
    async def go():
        q = await library(MemoryStore())
        snapshot = {b: await q.store.all(b) for b in BUCKETS}
        sid = next(iter(snapshot["chunks"]))
        snapshot["chunks"][sid][0] = {**snapshot["chunks"][sid][0], "chunk_id": f"{sid}:7"}
        return await importing(await Quire.open(MemoryStore()), v2_vault_of(snapshot), "replace")
    with pytest.raises(vault.VaultError, match="has the id '.*:7', not '.*:0'"):
        run(go())
