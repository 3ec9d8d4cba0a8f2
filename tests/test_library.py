"""Library: staging, Train with change detection, atomic commits, bad input, removal, reopening."""

import asyncio
import base64
import io
import zipfile

import pytest

from quire import originals

from quire.app import Quire
from quire.errors import LibraryError
from quire.training import TrainCancelled
from quire.store import MemoryStore, SQLiteStore, StoreFullError


def run(coro):
    return asyncio.run(coro)


async def open_quire(store=None):
    return await Quire.open(store or MemoryStore())


def md(title, body):
    return f"# {title}\n{body}\n".encode()


def test_counts_added_changed_skipped():
    async def go():
        q = await open_quire()
        await q.stage("a.md", md("Alpha", "Photosynthesis turns light into sugar."))
        await q.stage("b.md", md("Beta", "Mitochondria make ATP."))
        first = await q.train()
        assert (first["added"], first["changed"], first["skipped"]) == (2, 0, 0)
        await q.stage("a.md", md("Alpha", "Photosynthesis turns light into sugar."))  # unchanged
        await q.stage("b.md", md("Beta", "Ribosomes build proteins."))  # changed
        await q.stage("c.md", md("Gamma", "Osmosis moves water."))  # new
        second = await q.train()
        assert (second["added"], second["changed"], second["skipped"]) == (1, 1, 1)
        names = sorted(s["name"] for s in q.sources())
        assert names == ["a.md", "b.md", "c.md"]
        assert await q.search("mitochondria") == []  # the old content of b.md is gone
        assert [h["source"] for h in await q.search("ribosomes")] == ["b.md"]
    run(go())


def test_staging_costs_nothing_until_train_and_remove_before_train():
    async def go():
        q = await open_quire()
        rec = await q.stage("notes.md", md("N", "Enzymes lower activation energy."))
        assert rec["status"] == "staged"
        assert await q.search("enzymes") == []
        await q.remove(rec["id"])
        assert q.sources() == []
        assert (await q.train())["added"] == 0
    run(go())


def test_same_file_staged_twice_is_one_entry():
    async def go():
        q = await open_quire()
        a = await q.stage("x.md", md("X", "Same text."))
        b = await q.stage("x.md", md("X", "Same text."))
        assert b["note"] == "already staged" and a["id"] == b["id"]
        assert len(q.sources()) == 1
    run(go())


def test_duplicate_names_with_different_content_are_both_kept():
    async def go():
        q = await open_quire()
        await q.stage("report.md", md("One", "The first report covers glaciers."))
        second = await q.stage("report.md", md("Two", "The second report covers deserts."))
        assert second["name"] == "report (2).md" and "already called report.md" in second["warnings"][0]
        counts = await q.train()
        assert counts["added"] == 2
        assert [h["source"] for h in await q.search("deserts")] == ["report (2).md"]
    run(go())


def zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", b"\0" * (600 * 2**20))
    return buf.getvalue()


BAD_INPUTS = [
    ("locked.pdf", "py-pdf-sample-files/libreoffice-writer-password.pdf", "password-protected"),
    ("cut.pdf", None, "cut off"),
    ("bomb.docx", "BOMB", "zip bomb"),
    ("binary.txt", b"\x00\x01\x02\xff" * 500, "binary"),
    ("empty.md", b"", "empty"),
    ("slides.key", b"some keynote bytes", "unsupported type .key"),
]


def test_one_bad_file_in_ten_leaves_the_rest_trained(pdf_dir):
    async def go():
        q = await open_quire()
        good = [(f"good{i}.md", md(f"Topic {i}", f"Fact number {i} is about volcano{i}.")) for i in range(9)]
        for name, data in good:
            await q.stage(name, data)
        whole = (pdf_dir / "acl-papers/N18-3011.pdf").read_bytes()
        for name, source, expected in BAD_INPUTS:
            if source == "BOMB":
                data = zip_bomb()
            elif source is None:
                data = whole[: len(whole) // 3]
            elif isinstance(source, bytes):
                data = source
            else:
                data = (pdf_dir / source).read_bytes()
            batch = MemoryStore()
            one = await Quire.open(batch)
            for n, d in good:
                await one.stage(n, d)
            rec = await one.stage(name, data)
            counts = await one.train()
            failed = [s for s in one.sources() if s["status"] == "failed"]
            assert counts["added"] == 9, name
            assert len(failed) == 1 and expected in failed[0]["error"].lower(), (name, failed[0]["error"] if failed else rec)
            assert (await one.search("volcano4"))[0]["source"] == "good4.md"
    run(go())


def test_file_over_the_size_limit_is_refused_with_the_limit():
    async def go():
        q = await Quire.open(MemoryStore(), max_bytes=1000)
        rec = await q.stage("big.md", b"# Big\n" + b"word " * 400)
        assert rec["status"] == "failed" and "too large" in rec["error"] and "limit is" in rec["error"]
    run(go())


def test_a_refused_write_changes_nothing():
    async def go():
        store = MemoryStore()
        q = await open_quire(store)
        await q.stage("keep.md", md("Keep", "Granite is an igneous rock."))
        await q.train()
        before = await store.all("sources"), await store.all("index")
        await q.stage("new.md", md("New", "Basalt cools quickly."))
        await q.events.drain()  # the first Train's progress record is written in the background
        store.fail_next_commit = StoreFullError("QuotaExceededError")
        with pytest.raises(LibraryError, match="disk is full: free at least"):
            await q.train()
        assert await store.all("index") == before[1]
        assert [s["status"] for s in q.sources()] == ["trained", "staged"]
        assert await q.search("basalt") == []  # the in-memory index was restored too
        assert [h["source"] for h in await q.search("granite")] == ["keep.md"]
        assert (await q.train())["added"] == 1  # and the next Train succeeds
    run(go())


def test_cancelled_train_changes_nothing():
    async def go():
        store = MemoryStore()
        q = await open_quire(store)
        for i in range(3):
            await q.stage(f"f{i}.md", md(f"F{i}", f"Lesson {i} about rivers."))
        seen = []
        with pytest.raises(TrainCancelled):
            await q.train(progress=seen.append, cancelled=lambda: len(seen) >= 3)
        assert all(s["status"] == "staged" for s in q.sources())
        assert await store.all("index") == {} and await store.all("chunks") == {}
    run(go())


def test_removing_a_trained_source_removes_its_passages():
    async def go():
        q = await open_quire()
        a = await q.stage("a.md", md("A", "Quartz is hard."))
        await q.stage("b.md", md("B", "Quartz is common in sand."))
        await q.train()
        await q.remove(a["id"])
        assert [h["source"] for h in await q.search("quartz")] == ["b.md"]
    run(go())


def test_library_survives_a_restart_with_the_same_results(tmp_path, pdf_dir):
    async def go():
        path = tmp_path / "library.sqlite"
        q = await Quire.open(SQLiteStore(path))
        await q.stage("N18-3011.pdf", (pdf_dir / "acl-papers/N18-3011.pdf").read_bytes(), category="papers")
        await q.stage("notes.md", md("Notes", "Semantic Scholar links papers and authors."))
        await q.train()
        first = await q.search("literature graph entity linking", k=5)
        again = await Quire.open(SQLiteStore(path))
        assert [s["name"] for s in again.sources()] == [s["name"] for s in q.sources()]
        second = await again.search("literature graph entity linking", k=5)
        assert [(h["chunk_id"], h["location"]) for h in second] == [(h["chunk_id"], h["location"]) for h in first]
        assert first[0]["location"]["page"] >= 1
        scoped = await again.search("papers authors", scope={"category": "papers"})
        assert scoped and {h["source"] for h in scoped} == {"N18-3011.pdf"}
    run(go())


def test_category_change_moves_scope():
    async def go():
        q = await open_quire()
        rec = await q.stage("x.md", md("X", "Tectonic plates drift."))
        await q.train()
        assert await q.search("plates", scope={"category": "geo"}) == []
        await q.set_category(rec["id"], "geo")
        assert [h["source"] for h in await q.search("plates", scope={"category": "geo"})] == ["x.md"]
        assert q.categories() == ["geo"]
    run(go())


def test_passage_shows_the_whole_page_with_the_passage(pdf_dir):
    async def go():
        q = await open_quire()
        await q.stage("N18-3011.pdf", (pdf_dir / "acl-papers/N18-3011.pdf").read_bytes())
        await q.train()
        hit = (await q.search("literature graph", k=1))[0]
        p = await q.passage(hit["chunk_id"], "literature graph")
        start, end = p["span"]
        body = hit["text"][len(hit["text"]) - (end - start):]
        assert p["context"][start:end] == body
        assert len(p["context"]) > len(body)  # the page is longer than one passage
        assert p["location_label"] == f"p. {hit['location']['page']}"
        assert any(p["context"][a:b].lower().startswith("literatur") for a, b in p["highlights"])
    run(go())


def test_erase_all_forgets_everything():
    async def go():
        store = MemoryStore()
        q = await open_quire(store)
        await q.stage("a.md", md("A", "Lava flows."))
        await q.train()
        await q.erase_all()
        assert q.sources() == [] and await q.search("lava") == []
        assert all(v == {"count": 0, "bytes": 0} for v in (await store.usage()).values())
    run(go())


def test_pasted_text_becomes_markdown_sections():
    async def go():
        q = await open_quire()
        rec = await q.stage_text("Lecture 3", "# Setup\n## Install\nRun the installer twice.")
        assert rec["name"] == "Lecture 3.md"
        await q.train()
        hit = (await q.search("installer"))[0]
        assert hit["location_label"] == "Setup › Install" and hit["text"].startswith("[Section: Setup > Install]")
    run(go())


def test_language_override_retokenizes_the_source():
    async def go():
        q = await open_quire()
        rec = await q.stage("haus.md", md("Häuser", "Die Häuser stehen am Fluss, und die Kinder spielen dort mit den Hunden. "
                                          "Wir wissen nicht, ob es morgen regnet, aber das ist auch nicht so wichtig."))
        await q.train()
        assert q.sources()[0]["language"] == "de"
        assert [h["source"] for h in await q.search("Haus")] == ["haus.md"]  # German stemming
        await q.set_language(rec["id"], "en")
        assert q.sources()[0]["language"] == "en"
        assert await q.search("Haus") == []  # English stems no longer fold Häuser -> haus
        assert [h["source"] for h in await q.search("Häuser")] == ["haus.md"]
    run(go())


def test_a_held_file_stages_as_its_bytes_would_and_is_read_a_stretch_at_a_time():
    # In the tab a staged file stays in the page's array (quire.browser.idb.PageBytes): the
    # engine hashes it HASH_STEP at a time and stores it in views of it.  Same record, same
    # stored original as the bytes themselves, and no read of more than HASH_STEP at once.
    class Counted(originals.Bytes):
        reads = []

        def __getitem__(self, where):
            got = super().__getitem__(where)
            Counted.reads.append(len(got))
            return got

        def part(self, start, stop):
            return Counted(self.data, self.start + start, self.start + min(stop, len(self)))

    async def go():
        data = bytes(range(256)) * (3 * originals.HASH_STEP // 256 + 77)  # three steps and a bit
        plain, held = await open_quire(), await open_quire()
        a = await plain.stage("talk.mp3", data)
        b = await held.stage("talk.mp3", Counted(data))
        assert {**a, "added": 0} == {**b, "added": 0} and a["status"] == "staged"
        assert await held.original(b["id"]) == data
        # hashed a step at a time; the one whole read is MemoryStore's copy (IndexedDB keeps views)
        steps, whole = Counted.reads[:-1], Counted.reads[-1]
        assert len(steps) == 4 and max(steps) <= originals.HASH_STEP and sum(steps) == whole == len(data)
        # a recording may be larger than the Settings limit; a text file may not
        plain.library.max_bytes = held.library.max_bytes = 1024
        assert (await held.stage("big.mp3", Counted(data + b"1")))["status"] == "staged"
        refused = await held.stage("big.md", Counted(data + b"2"))
        assert refused["status"] == "failed" and "the limit is 0 MB" in refused["error"], refused
    run(go())


def test_recording_names_the_original_while_originals_are_kept_and_none_after():
    # What the passage dialog plays a cited moment from (window.quire.recording): the page reads
    # the bytes from the store under this id itself (a lecture video never crosses the engine).
    async def go():
        q = await open_quire()
        data = md("A", "Kept original.") * 5000
        rec = await q.stage("a.md", data)
        await q.train()
        got = await q.call("recording", rec["id"])
        assert got == {"name": "a.md", "id": rec["id"]} and await q.original(got["id"]) == data
        await q.set_keep_originals(False)
        assert await q.call("recording", rec["id"]) is None
        with pytest.raises(LibraryError, match="no source with id"):
            await q.call("recording", "gone")
    run(go())


def test_turning_off_originals_frees_them_and_later_trains_keep_none():
    async def go():
        store = MemoryStore()
        q = await open_quire(store)
        await q.stage("a.md", md("A", "Kept original."))
        await q.train()
        assert await store.keys("originals") != []
        result = await q.set_keep_originals(False)
        assert result == {"keep_originals": False, "removed": 1} and await store.keys("originals") == []
        await q.stage("b.md", md("B", "Not kept."))
        assert len(await store.keys("originals")) == 1  # a staged file keeps its bytes until Train
        await q.train()
        assert await store.keys("originals") == []
        again = await open_quire(store)  # the choice persists
        assert again.library.keep_originals is False
    run(go())


def test_a_folder_of_many_notes_stages_in_one_commit_and_trains_with_steady_progress():
    # 5,000 notes staged one commit each, and a Train reporting three steps per note, kept the
    # tab busy for minutes; a batch is one commit now, and past 50 files a note's own steps
    # are reported a few times a second.  Failures and the Train's stages are never dropped.
    async def go():
        q = await open_quire()
        commits = []
        orig = q.store.commit

        async def counted(puts=(), deletes=()):
            commits.append(1)
            await orig(puts, deletes)
        q.store.commit = counted
        notes = [(f"note-{i}.md", f"# Note {i}\nGneiss and basalt, marker{i}.".encode()) for i in range(300)]
        notes += [("empty.txt", b""), (notes[0][0], notes[0][1])]  # one refused, one already staged
        records = await q.stage_many(notes)
        staged_commits = len(commits)
        reads, get, get_many = [], q.store.get, q.store.get_many

        async def one(bucket, key, default=None):
            reads.append((bucket, 1))
            return await get(bucket, key, default)

        async def many(bucket, keys):
            reads.append((bucket, len(keys)))
            return await get_many(bucket, keys)
        q.store.get, q.store.get_many = one, many
        events = []
        counts = await q.train(progress=events.append)
        hits = await q.search("marker217")
        return records, staged_commits, events, counts, hits, [n for b, n in reads if b == "originals"]
    records, staged_commits, events, counts, hits, reads = run(go())
    assert staged_commits == 1
    assert reads == [200, 100], reads  # the originals in two reads, not 300
    assert [r["status"] for r in records[-2:]] == ["failed", "staged"] and records[-1].get("note") == "already staged"
    assert counts["added"] == 300 and hits[0]["source"] == "note-217.md"
    steps = [e for e in events if e.get("stage") in ("extract", "chunk", "chunked")]
    assert 0 < len(steps) < 300, len(steps)  # three per note before
    assert [e["stage"] for e in events if e.get("stage") in ("index", "save", "done")] == ["index", "save", "done"]


def test_a_few_files_report_every_step():
    async def go():
        q = await open_quire()
        for i in range(3):
            await q.stage_text(f"n{i}", f"Note {i} about basalt.")
        events = []
        await q.train(progress=events.append)
        return events
    events = run(go())
    assert [e["stage"] for e in events if e.get("file") == "n1.md"] == ["extract", "chunk", "chunked"]


def test_get_many_reads_the_keys_that_exist_in_every_store(tmp_path):
    # More keys than SQLite binds in one statement; missing keys are left out, values kept as stored.
    async def go(store):
        await store.commit([("originals", f"k{i}", bytes([i % 256]) * 3) for i in range(1200)] + [("sources", "s", {"a": 1})])
        got = await store.get_many("originals", [f"k{i}" for i in range(0, 1300, 7)])
        return got, await store.get_many("sources", ["s", "nope"])
    for store in (MemoryStore(), SQLiteStore(tmp_path / "many.sqlite")):
        got, json_values = run(go(store))
        assert sorted(got) == sorted(f"k{i}" for i in range(0, 1200, 7))
        assert got["k7"] == bytes([7]) * 3 and json_values == {"s": {"a": 1}}
