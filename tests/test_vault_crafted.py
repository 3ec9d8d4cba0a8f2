"""Strangers' vaults: crafted files with valid checksums may add data, never change where
data goes; bombs, deep JSON and broken library records are refused with a reason and
change nothing; the search index always comes from the imported passages."""

import asyncio

import numpy as np
import pytest

from quire import jsonlimits, vault
from quire.app import Quire
from quire.extract.base import Limits
from quire.library_index import INDEX_KEY
from quire.model import sha256_hex
from quire.retrieval.dense import cache_key
from quire.retrieval.index import HybridIndex
from quire.services import Context
from quire.services import vault as vs
from quire.services.llm import DEFAULTS
from quire.store import BUCKETS, MemoryStore
from vault_crafts import (EVIL, HOSTILE_PAGE, HOSTILE_SETTINGS, bomb_vault, crafted, deep_json, lying_size,
                          nested_vault, zipped)

ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground.\n"
MINE = "http://127.0.0.1:11500"


def run(coro):
    return asyncio.run(coro)


async def importing(q, data, mode, page=None):
    return await vs.METHODS["importVault"](q, Context(payload=data), mode, None, page)


async def snapshot(store):
    return {b: await store.all(b) for b in BUCKETS}


async def mine(own_server: bool):
    q = await Quire.open(MemoryStore())
    await q.stage("notes.md", b"# Notes\nPhotosynthesis happens in chloroplasts.")
    await q.train()
    if own_server:
        await q.llm.save({"url": MINE, "chat_model": "mine"})
    return q


def source_record(sid="s1", name="rocks.md", **extra):
    return {"id": sid, "name": name, "status": "trained", "added": 1.0, "category": None, "language": "en",
            "size": len(ROCKS), "chunks": 1, **extra}


def chunk(sid="s1", n=0, text=ROCKS):
    return {"chunk_id": f"{sid}:{n}", "n": n, "text": text, "hash": sha256_hex(text), "location": {"section": ["Rocks"]},
            "source_id": sid, "start": 0, "end": len(text)}


# ---------------------------------------------------------------- where data goes
@pytest.mark.parametrize("mode", ["merge", "replace"])
@pytest.mark.parametrize("own_server", [False, True], ids=["default-server", "own-server"])
def test_a_vault_never_changes_the_model_server_or_network_switches(mode, own_server):
    data = crafted({"settings": HOSTILE_SETTINGS, "sources": {"s1": source_record()}, "chunks": {"s1": [chunk()]}})

    async def go():
        q = await mine(own_server)
        before = dict(q.llm.settings)
        page = {"quire.llm.url": before["url"], "quire.allowUrlFetch": "0"}
        r = await importing(q, data, mode, page)
        return before, r, dict(q.llm.settings), await q.store.get("settings", "llm"), await q.search("basalt")
    before, r, after, stored, hits = run(go())
    assert after["url"] == before["url"] and after["kind"] == before["kind"] == "ollama"
    assert after["chat_model"] == before["chat_model"] and after["embed_model"] == before["embed_model"]
    assert (stored or {}).get("url", DEFAULTS["url"]) == before["url"]
    assert f"The vault named the model server {EVIL}; your own setting ({before['url']}) was kept." in r["ignored"]
    assert any("web pages by address" in m for m in r["ignored"])
    assert any("'network'" in m for m in r["ignored"]) and any("quire.privacy.confirmed" in m for m in r["ignored"])
    assert r["page_settings"] == {"quire.maxFileMB": "300"}  # the one harmless page setting
    assert hits[0]["source"] == "rocks.md"  # the data itself was imported


def test_model_choice_is_imported_only_for_the_same_server():
    same = crafted({"settings": {"llm": {"url": MINE + "/", "kind": "ollama", "chat_model": "theirs", "num_ctx": 4096}}})

    async def go():
        q = await mine(own_server=True)
        r = await importing(q, same, "replace")
        return r, dict(q.llm.settings)
    r, settings = run(go())
    assert r["ignored"] == [] and settings["url"] == MINE
    assert settings["chat_model"] == "theirs" and settings["num_ctx"] == 4096


def test_state_keys_are_neither_imported_nor_reported():
    kept, ignored = vs.vault_settings.engine_settings({"library_generation": 41}, {"library_generation": 7}, "replace")
    assert kept == {"library_generation": 7} and ignored == []


def test_page_settings_rule_table():
    kept, ignored = vs.vault_settings.page_settings(HOSTILE_PAGE, {"quire.llm.url": MINE})
    assert kept == {"quire.maxFileMB": "300"}
    assert f"The vault named the model server {EVIL}; your own setting was kept." in ignored
    assert vs.vault_settings.page_settings({"quire.maxFileMB": "99999"})[0] == {}


# ---------------------------------------------------------------- refusals
def small(**kw):
    return Limits(**{"max_zip_entries": 20_000, "max_unzipped_bytes": 1 << 20, **kw})


REFUSALS = [
    ("5,000 deep JSON in a bucket", lambda: nested_vault(5000), None, "buckets/settings.json is nested 5001 levels deep"),
    ("deep JSON in vault.json", lambda: zipped({"vault.json": b'{"format":"quire-vault","x":' + deep_json(300) + b"}"}),
     None, "vault.json is nested 302 levels deep"),
    ("64 MiB from about 64 KiB", lambda: bomb_vault(64), None, "inflate .* times .*zip bomb"),
    ("a member that claims 4 GiB", lambda: lying_size(crafted({"settings": {"a": 1}})), None,
     "would unpack to 8191 MB \\(limit 2048 MB\\).*zip bomb"),
    ("more bytes than the vault's budget", lambda: crafted({}, {"originals/a": bytes(range(256)) * 8192}), small(),
     "would unpack to 2 MB \\(limit 1 MB\\)"),
    ("more members than allowed", lambda: crafted({f"b{i}": {} for i in range(30)}), small(max_zip_entries=10),
     "too many parts"),
    ("passage ids that do not match", lambda: crafted({"sources": {"s1": source_record()},
                                                       "chunks": {"s1": [{**chunk(), "chunk_id": "s1:7"}]}}),
     None, "has the id 's1:7', not 's1:0'"),
    ("a passage that does not match its hash", lambda: crafted({"sources": {"s1": source_record()},
                                                                "chunks": {"s1": [{**chunk(), "text": "other"}]}}),
     None, "does not match its hash"),
    ("a trained source without passages", lambda: crafted({"sources": {"s1": source_record()}}), None,
     "marked trained but its passages are missing"),
    *((f"a source id {label}", (lambda sid: lambda: crafted({"sources": {sid: source_record(sid)},
                                                             "chunks": {sid: [chunk(sid)]}}))(sid),
       None, "has an id Quire never makes")
      for label, sid in [("with a colon", "a:1"), ("ending in U+FFFF", "x\uffff"), ("that is empty", ""),
                         ("with a path", "../p"), ("of 5,000 characters", "k" * 5000), ("with #", "a#0")]),
    ("a source record filed under another id", lambda: crafted({"sources": {"s1": source_record("s2")},
                                                               "chunks": {"s1": [chunk()]}}), None,
     "is filed under 's1' but says its id is 's2'"),
    ("a source record without a date", lambda: crafted({"sources": {"s1": source_record(added="yesterday")},
                                                        "chunks": {"s1": [chunk()]}}), None, "no valid date added"),
]


@pytest.mark.parametrize("mode", ["merge", "replace"])
@pytest.mark.parametrize("make, limits, message", [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_crafted_files_are_refused_with_a_reason_and_change_nothing(make, limits, message, mode, monkeypatch):
    if limits is not None:
        monkeypatch.setattr(vault, "LIMITS", limits)
    data = make()

    async def go():
        q = await mine(own_server=False)
        before = await snapshot(q.store)
        with pytest.raises(vault.VaultError, match=message) as err:
            await importing(q, data, mode)
        return before, await snapshot(q.store), await q.search("chloroplasts"), str(err.value)
    before, after, hits, reason = run(go())
    assert after == before and hits[0]["source"] == "notes.md"
    assert "import" in reason.lower()  # every refusal says nothing was imported


def test_the_depth_scan_skips_strings_and_matches_the_parser():
    assert jsonlimits.depth(deep_json(10)) == 11
    assert jsonlimits.depth(b'["[[[[[[", "\\"[[[", {"a": "}}}}"}]') == 2
    jsonlimits.check(b'"' + b"[" * 5000 + b'"', "x")  # brackets in a string are text
    with pytest.raises(jsonlimits.JSONLimitError, match="15 bytes \\(at most 10 are allowed\\)"):
        jsonlimits.check(b"[1, 2, 3, 4, 5]", "x", max_bytes=10)


# ---------------------------------------------------------------- the index is never trusted
def test_an_imported_index_is_ignored_and_rebuilt_from_the_passages():
    """The vault's index lists chunk ids its passages do not have: search used to fail with IndexError."""
    bogus = HybridIndex()
    bogus.add_chunks("s1", [f"s1:{n}" for n in range(40)], [f"basalt lava {n}" for n in range(40)], language="en")
    data = crafted({"sources": {"s1": source_record()}, "chunks": {"s1": [chunk()]}},
                   {f"index/{INDEX_KEY}": bogus.to_bytes(), "index/stale": b"junk"})

    async def go():
        q = await mine(own_server=False)
        r = await importing(q, data, "merge")
        return r, await q.search("basalt lava"), await q.search("chloroplasts"), await q.store.keys("index")
    r, rocks, notes, keys = run(go())
    assert [h["chunk_id"] for h in rocks] == ["s1:0"] and rocks[0]["text"] == ROCKS
    assert notes[0]["source"] == "notes.md" and INDEX_KEY not in keys and "stale" not in keys
    assert "manifest" in keys  # written as segments (quire.retrieval.segments)


def test_vault_vectors_are_only_an_embedding_cache_keyed_by_hash_and_model():
    model = "nomic-embed-text"
    good = np.arange(1, 9, dtype=np.float32)
    other = chunk(text="Granite is not in any passage here.")
    data = crafted({"sources": {"s1": source_record()}, "chunks": {"s1": [chunk()]}},
                   {f"vectors/{cache_key(chunk()['hash'], model)}": good.tobytes(),
                    f"vectors/{cache_key(other['hash'], model)}": np.ones(8, np.float32).tobytes()})

    async def go():
        q = await mine(own_server=False)
        await q.llm.save({"embed_model": model})
        own_key = cache_key((await q.chunks(q.sources()[0]["id"]))[0]["hash"], model)
        await q.store.commit([("vectors", own_key, np.full(8, 2, np.float32).tobytes())])
        poisoned = crafted({"vectors": {}}, {f"vectors/{own_key}": np.full(8, -1, np.float32).tobytes()})
        await importing(q, poisoned, "merge")
        ours_after = await q.store.get("vectors", own_key)
        await importing(q, data, "merge")
        return q.library.index, ours_after
    index, ours_after = run(go())
    assert np.frombuffer(ours_after, np.float32).tolist() == [2.0] * 8  # a merge never overwrites our cache
    assert index.dense_model == model and index.dense.n_live == 2  # our passage and theirs, both from the cache
    assert not index.missing_vectors()


def test_replace_is_one_commit():
    data = crafted({"sources": {"s1": source_record()}, "chunks": {"s1": [chunk()]}})

    async def go():
        q = await mine(own_server=False)
        await q.events.drain()  # the progress records of mine()'s Train are written in the background
        commits = []
        real = q.store.commit

        async def counting(puts=(), deletes=()):
            puts, deletes = list(puts), list(deletes)
            commits.append((len(puts), len(deletes)))
            return await real(puts, deletes)
        q.store.commit = counting
        await importing(q, data, "replace")
        return commits, [s["name"] for s in q.sources()]
    commits, names = run(go())
    assert len(commits) == 1 and commits[0][1] > 0 and names == ["rocks.md"]


def test_running_out_of_memory_is_a_reason_not_an_empty_error(monkeypatch):
    def exhausted(data):
        raise MemoryError()
    monkeypatch.setattr(vault, "unpack", exhausted)

    async def go():
        q = await mine(own_server=False)
        with pytest.raises(vault.VaultError, match="too large to import .* Nothing was imported"):
            await importing(q, crafted({}), "replace")
        return [s["name"] for s in q.sources()]
    assert run(go()) == ["notes.md"]
