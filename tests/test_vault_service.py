"""The vault as engine methods: export, erase, import gives everything back; bad or
crafted files are refused and change nothing; settings that decide where data goes
are never taken from a vault; the search index is rebuilt from the imported passages."""

import base64
import io
import json
import zipfile

import pytest

from quire import vault
from quire.app import Quire
from quire.errors import LibraryError
from quire.progress.clock import to_ms
from quire.services import Context
from quire.services import progress as ps
from quire.services import vault as vs
from quire.store import MemoryStore, StoreFullError

M = {**ps.METHODS, **vs.METHODS}
# The same small library and helpers as the progress tests.
from test_progress_service import DOCS, NOW, library, run, snapshot  # noqa: E402


async def call(q, name, *args, payload=None):
    return await M[name](q, Context(payload=payload), *args)


async def study_for_a_while(q):
    """Chat, quiz and card actions over three days, plus a flashcard deck with schedules."""
    cells = next(s for s in q.sources() if s["name"] == "cells.md")
    chunks = await q.chunks(cells["id"])
    deck = {"id": "deck1", "kind": "flashcards", "items": [
        {"id": "c1", "type": "basic", "chunk_ids": [chunks[0]["chunk_id"]], "schedule": {"due": "2025-03-10T12:00:00+00:00"}},
        {"id": "c2", "type": "basic", "chunk_ids": [chunks[-1]["chunk_id"]], "schedule": {"due": "2025-03-20T12:00:00+00:00"}}]}
    await q.store.commit([("study", "deck1", deck)])
    for day in ("2025-03-08", "2025-03-09", "2025-03-10"):
        base = to_ms(f"{day}T09:00:00Z")
        await call(q, "recordProgress", {"kind": "chat", "t": base, "scoped": True, "sources": [cells["id"]]}, 0)
        await call(q, "recordProgress", {"kind": "quiz_answer", "t": base + 60_000, "correct": True}, 0)
        await call(q, "recordProgress", {"kind": "quiz_answer", "t": base + 120_000, "correct": day != "2025-03-09"}, 0)
        await call(q, "recordProgress", {"kind": "card_review", "t": base + 180_000, "rating": "good", "item": "c1"}, 0)


# ----------------------------------------------------------------------- vault
def observe(q):
    async def go():
        hits = await q.search("lava cools")
        board = await call(q, "progress", 0, NOW)
        return {"hits": [(h["chunk_id"], round(h["fused"], 6) if "fused" in h else h["rank"]) for h in hits],
                "cards": board["cards"], "heatmap": board["heatmap"], "badges": board["badges"]["earned"],
                "sources": sorted(s["name"] for s in q.sources())}
    return go()


def test_export_erase_import_gives_everything_back():
    async def go():
        q = await library()
        await study_for_a_while(q)
        await q.llm.save({"chat_model": "llama3.2:3b"})
        exported = await call(q, "exportVault", {"quire.maxFileMB": "300"})
        before, stored = await observe(q), await snapshot(q.store)
        await q.erase_all()
        assert await observe(q) != before
        result = await call(q, "importVault", "replace", payload=base64.b64decode(exported["base64"]))
        return exported, before, stored, result, await observe(q), await snapshot(q.store), q
    exported, before, stored, result, after, restored, q = run(go())
    assert exported["bytes"] > 0 and exported["name"].endswith(".quire")
    assert after == before and restored == stored
    assert result["page_settings"] == {"quire.maxFileMB": "300"} and result["read_version"] == vault.VERSION
    assert q.llm.settings["chat_model"] == "llama3.2:3b"
    assert any(k.startswith("ev:") and v["kind"] == "vault_export" for k, v in restored["progress"].items())


def test_merge_adds_the_other_library_and_keeps_local_settings():
    async def go():
        other = await library({"rocks.md": DOCS["rocks.md"]})
        await other.llm.save({"chat_model": "from-the-other-machine"})
        data = base64.b64decode((await call(other, "exportVault"))["base64"])
        q = await library({"cells.md": DOCS["cells.md"]})
        await q.llm.save({"chat_model": "mine"})
        await call(q, "importVault", "merge", payload=data)
        return q, await q.search("basalt lava"), await q.search("mitochondria")
    q, rocks, cells = run(go())
    assert sorted(s["name"] for s in q.sources()) == ["cells.md", "rocks.md"]
    assert rocks[0]["source"] == "rocks.md" and cells[0]["source"] == "cells.md"
    assert q.llm.settings["chat_model"] == "mine"


def of_files(docs, category=None):
    """vaultOfFiles as the page calls it: the documents in one payload, cut by their sizes."""
    sizes = [[name, len(data)] for name, data in docs.items()]
    return call(None, "vaultOfFiles", sizes, category, payload=b"".join(docs.values()))


def test_a_vault_of_files_resets_a_library_in_one_import():
    """The kiosk's reset: a vault made from documents alone (the library in the store is not
    touched), imported with replace, leaves exactly its sources and none of the visit's chats,
    study sets and progress."""
    async def go():
        made = await of_files({"rocks.md": DOCS["rocks.md"]}, "Sample")
        q = await library()
        await study_for_a_while(q)
        await q.ask("What makes ATP?")
        visit = await snapshot(q.store)
        await call(q, "importVault", "replace", payload=base64.b64decode(made["base64"]))
        return made, visit, await snapshot(q.store), q, await q.search("basalt lava")
    made, visit, after, q, hits = run(go())
    assert visit["chats"] and visit["study"] and visit["progress"]
    assert [(s["id"], s["name"], s["category"], s["status"]) for s in q.sources()] == [
        (made["ids"][0], "rocks.md", "Sample", "trained")]
    assert after["chats"] == {} and after["study"] == {} and after["progress"] == {}
    assert hits[0]["source"] == "rocks.md"


def test_a_vault_of_files_refuses_a_document_it_cannot_read():
    with pytest.raises(LibraryError, match="empty.md"):
        run(of_files({"rocks.md": DOCS["rocks.md"], "empty.md": b""}))
    with pytest.raises(ValueError, match="sizes add up"):
        run(call(None, "vaultOfFiles", [["a.md", 5]], None, payload=b"abc"))


def test_an_older_format_still_loads():
    meta_v1 = {"format": "quire-vault", "version": 1, "created": "2024-11-01T08:00:00Z", "app_version": "0.0.9"}
    members = {"data/progress.json": json.dumps([{"key": "ev:1", "value": {"t": 1, "kind": "chat", "scoped": False,
                                                                         "sources": []}}]).encode(),
               "data/settings.json": json.dumps([{"key": "theme", "value": "dark"}]).encode()}
    meta_v1["checksums"] = {n: vault.sha256(b) for n, b in members.items()}
    data = zipped({"vault.json": json.dumps(meta_v1).encode(), **members})

    async def go():
        q = await Quire.open(MemoryStore())
        r = await call(q, "importVault", "merge", payload=data)
        return r, await call(q, "progress", 0, NOW)
    r, board = run(go())
    assert r["read_version"] == 1 and board["events"] == 1


def zipped(members):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def unzipped(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def future(data):
    m = unzipped(data)
    meta = json.loads(m["vault.json"])
    meta["version"] = vault.VERSION + 1
    meta["checksum"] = vault._meta_checksum(meta)
    return zipped({**m, "vault.json": vault.canonical(meta)})


def wrong_checksum(data):
    m = unzipped(data)
    name = next(n for n in m if n.startswith("buckets/sources"))
    return zipped({**m, name: m[name].replace(b"cells.md", b"cellz.md")})


@pytest.mark.parametrize("damage, message", [
    (lambda d: d[: len(d) // 2], "damaged or incomplete"),
    (lambda d: d[:-30], "damaged or incomplete"),
    (wrong_checksum, "checksum mismatch"),
    (future, "newer Quire"),
    (lambda d: b"", "damaged or incomplete"),
])
@pytest.mark.parametrize("mode", ["merge", "replace"])
def test_bad_vault_files_are_refused_and_change_nothing(damage, message, mode):
    async def go():
        source = await library()
        data = base64.b64decode((await call(source, "exportVault"))["base64"])
        q = await library({"notes.md": b"# Notes\nPhotosynthesis happens in chloroplasts."})
        before = await snapshot(q.store)
        with pytest.raises(vault.VaultError, match=message):
            await call(q, "importVault", mode, payload=damage(data))
        return before, await snapshot(q.store), await q.search("chloroplasts")
    before, after, hits = run(go())
    assert after == before and hits[0]["source"] == "notes.md"


def test_storage_full_during_import_damages_nothing():
    async def go():
        data = base64.b64decode((await call(await library(), "exportVault"))["base64"])
        q = await library({"notes.md": b"# Notes\nPhotosynthesis happens in chloroplasts."})
        before = await snapshot(q.store)
        q.store.fail_next_commit = StoreFullError("QuotaExceededError")
        with pytest.raises(LibraryError) as err:
            await call(q, "importVault", "replace", payload=data)
        return q, before, str(err.value), await snapshot(q.store), await q.search("chloroplasts")
    q, before, message, after, hits = run(go())
    assert "storage is full" in message and "Nothing was changed" in message and "notes.md" in message
    assert after == before and hits[0]["source"] == "notes.md"
