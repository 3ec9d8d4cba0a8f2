"""The progress service on CPython: inferred sessions, badges as data, privacy rows and
a full disk, through the same handlers the page calls (the vault: test_vault_service.py)."""

import asyncio
import json

import pytest

from quire.app import Quire
from quire.bus import BADGES_EARNED
from quire.errors import LibraryError
from quire.progress import badges
from quire.progress.clock import to_ms
from quire.services import Context
from quire.services import progress as ps
from quire.store import BUCKETS, MemoryStore, StoreFullError

M = ps.METHODS
DOCS = {
    "cells.md": b"# Cells\n## Energy\nMitochondria make ATP for the cell.\n## Division\nMitosis splits one cell into two.\n",
    "rocks.md": b"# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground.\n",
}
NOW = to_ms("2025-03-10T18:00:00Z")


def run(coro):
    return asyncio.run(coro)


async def call(q, name, *args, payload=None):
    return await M[name](q, Context(payload=payload), *args)


def announced(q) -> list[str]:
    """The codes of the badges the engine announces on its bus from now on (the tab shows these)."""
    codes = []
    q.events.subscribe(lambda e: codes.extend(b["code"] for b in e["badges"]) if e["kind"] == BADGES_EARNED else None)
    return codes


async def library(docs=DOCS, store=None):
    q = await Quire.open(store or MemoryStore())
    for name, data in docs.items():
        await q.stage(name, data)
    await q.train()
    return q


async def snapshot(store):
    return {b: await store.all(b) for b in BUCKETS}


async def study_for_a_while(q):
    """Chat, quiz and card actions over three days, plus a flashcard deck with schedules."""
    cells = next(s for s in q.sources() if s["name"] == "cells.md")
    chunks = await q.chunks(cells["id"])
    deck = {"id": "deck1", "kind": "flashcards", "items": [
        {"id": "c1", "type": "basic", "chunk_ids": [chunks[0]["chunk_id"]]},
        {"id": "c2", "type": "basic", "chunk_ids": [chunks[-1]["chunk_id"]]}],
        "schedules": {"c1": {"due": "2025-03-10T12:00:00+00:00"}, "c2": {"due": "2025-03-20T12:00:00+00:00"}}}
    await q.store.commit([("study", "deck1", deck)])
    for day in ("2025-03-08", "2025-03-09", "2025-03-10"):
        base = to_ms(f"{day}T09:00:00Z")
        await call(q, "recordProgress", {"kind": "chat", "t": base, "scoped": True, "sources": [cells["id"]]}, 0)
        await call(q, "recordProgress", {"kind": "quiz_answer", "t": base + 60_000, "correct": True}, 0)
        await call(q, "recordProgress", {"kind": "quiz_answer", "t": base + 120_000, "correct": day != "2025-03-09"}, 0)
        await call(q, "recordProgress", {"kind": "card_review", "t": base + 180_000, "rating": "good", "item": "c1"}, 0)


# ------------------------------------------------------------------ sessions
@pytest.mark.parametrize("gap_s, sessions", [(14 * 60 + 59, 1), (15 * 60, 1), (15 * 60 + 1, 2)])
def test_sessions_are_inferred_from_pauses(gap_s, sessions):
    async def go():
        q = await Quire.open(MemoryStore())
        t0 = to_ms("2025-03-10T10:00:00Z")
        for t in (t0, t0 + 5 * 60_000, t0 + 5 * 60_000 + gap_s * 1000):
            assert (await call(q, "recordProgress", {"kind": "card_review", "t": t}))["recorded"]
        return await call(q, "progress", 0, NOW)
    board = run(go())
    assert board["today"]["sessions"] == len(board["sessions"]) == sessions
    if sessions == 1:
        assert board["sessions"][0]["duration_ms"] == (5 * 60 + gap_s) * 1000 + 60_000
    else:  # the action after 15:01 starts a new one, silently
        assert [s["actions"] for s in board["sessions"]] == [1, 2]


def test_streaks_follow_the_persons_time_zone():
    async def go(tz):
        q = await Quire.open(MemoryStore())
        for t in ("2025-03-08T23:30:00Z", "2025-03-09T23:30:00Z"):  # late evening in London
            await call(q, "recordProgress", {"kind": "chat", "t": t})
        return await call(q, "progress", tz, to_ms("2025-03-10T12:00:00Z"))
    london, berlin = run(go(0)), run(go(60))
    assert london["streak"] == {"current": 2, "longest": 2}
    # in Berlin both actions fall after midnight: 9 and 10 March, so today counts
    assert berlin["streak"] == {"current": 2, "longest": 2} and berlin["today"]["actions"] == 1
    assert london["today"]["actions"] == 0 and [h["count"] for h in london["heatmap"][-3:]] == [1, 1, 0]


def test_recording_never_raises():
    async def go():
        q = await Quire.open(MemoryStore())
        bad = [await call(q, "recordProgress", e) for e in
               ({"kind": "nap"}, {"kind": "quiz_answer"}, "not a dict", {"kind": "chat", "t": "yesterday"})]
        q.store.fail_next_commit = StoreFullError("QuotaExceededError")
        full = await call(q, "recordProgress", {"kind": "chat"})
        ok = await call(q, "recordProgress", {"kind": "chat"})
        return bad, full, ok
    bad, full, ok = run(go())
    assert all(r["recorded"] is False and r["error"] for r in bad)
    assert full["recorded"] is False and "storage is full" in full["error"].lower()
    assert ok["recorded"] is True


# -------------------------------------------------------------------- badges
def test_badges_are_awarded_once_through_the_service():
    async def go():
        q = await Quire.open(MemoryStore())
        said = announced(q)
        first = await call(q, "recordProgress", {"kind": "chat"})
        second = await call(q, "recordProgress", {"kind": "chat"})
        recorded = list(said)
        await q.stage("notes.md", b"# Notes\nSome text.")
        await q.train()
        await q.events.drain()  # the Train's "source added" is recorded, and its badge checked, in the background
        after_train = said[len(recorded):]
        board = await call(q, "progress", 0)
        return first, second, recorded, after_train, board
    first, second, recorded, after_train, board = run(go())
    assert [b["code"] for b in first["awarded"]] == recorded == ["first_question"]
    assert first["awarded"][0]["name"] == "Curious" and first["awarded"][0]["icon"]
    assert second["awarded"] == []
    assert after_train == ["first_source"]
    earned = {b["code"] for b in board["badges"]["earned"]}
    assert earned == {"first_question", "first_source"} and board["badges"]["total"] == 25
    shelf = next(b for b in board["badges"]["all"] if b["code"] == "shelf")
    assert (shelf["ladder"], shelf["step"], shelf["value"], shelf["fraction"]) == ("first_source", 1, 1, 0.2)


def test_a_26th_badge_is_one_json_entry(tmp_path, monkeypatch):
    defs = json.loads(badges.DEFINITIONS.read_text(encoding="utf-8"))
    defs["badges"].append({"code": "two_sittings", "name": "Came back", "icon": "🔁",
                           "description": "Study in two separate sessions.", "metric": "sessions", "target": 2})
    path = tmp_path / "badges.json"
    path.write_text(json.dumps(defs), encoding="utf-8")
    monkeypatch.setattr(ps, "BADGES_FILE", path)

    async def go():
        q = await Quire.open(MemoryStore())
        t0 = to_ms("2025-03-10T10:00:00Z")
        await call(q, "recordProgress", {"kind": "card_review", "t": t0})
        r = await call(q, "recordProgress", {"kind": "card_review", "t": t0 + 16 * 60_000})
        return r, await call(q, "progress", 0, NOW)
    r, board = run(go())
    assert "two_sittings" in [b["code"] for b in r["awarded"]]
    assert board["badges"]["total"] == 26


def test_study_actions_on_the_engine_bus_become_events():
    async def go():
        q = await Quire.open(MemoryStore())
        said = announced(q)
        q.events.emit({"kind": "quiz_answer", "correct": True, "scoped": False, "sources": ["a"], "question": "long text"})
        q.events.emit({"kind": "lesson_open", "scoped": True, "sources": [{"id": "b"}]})
        q.events.emit({"kind": "chat", "scoped": False, "sources": [], "text": "What is ATP?"})
        await q.events.drain()
        return said, await q.store.all("progress")
    news, stored = run(go())
    events = [v for k, v in stored.items() if k.startswith("ev:")]
    assert sorted(e["kind"] for e in events) == ["chat", "lesson_open", "quiz_answer"]
    assert all(set(e) <= set(ps.KEEP) for e in events)  # no question text in the progress log
    assert news == ["first_question"]  # earned in the background, announced once


# ------------------------------------------------------------------- dashboard
def test_dashboard_shows_cards_accuracy_and_coverage():
    async def go():
        q = await library()
        await study_for_a_while(q)
        return await call(q, "progress", 0, NOW)
    board = run(go())
    assert board["streak"] == {"current": 3, "longest": 3}
    assert [a["accuracy"] for a in board["quiz_accuracy"]] == [1.0, 0.5, 1.0]
    assert board["cards"]["total"] == 2 and board["cards"]["due_now"] == 1 and board["cards"]["reviewed_today"] == 1
    cov = {c["name"]: c for c in board["coverage"]}
    assert cov["cells.md"]["covered"] >= 1 and cov["rocks.md"]["covered"] == 0
    assert len(board["heatmap"]) == 90 and board["heatmap"][-1]["count"] == 4


def test_privacy_lists_every_kind_of_data_with_sizes():
    async def go():
        q = await library()
        await study_for_a_while(q)
        await q.store.commit([("settings", "prompt_overrides", {"answer": "Answer briefly."}), ("chats", "c1", {"m": ["hi"]})])
        return await call(q, "privacy")
    p = run(go())
    rows = {r["bucket"]: r for r in p["rows"]}
    assert list(rows) == ["originals", "chunks", "vectors", "chats", "study_items", "progress", "settings",
                          "prompt_overrides"]
    for name in ("originals", "chunks", "chats", "study_items", "progress", "prompt_overrides"):
        assert rows[name]["bytes"] > 0 and rows[name]["where"].startswith("quire.library"), name
    assert rows["prompt_overrides"]["count"] == 1
    assert p["total"]["bytes"] == sum(r["bytes"] for r in p["rows"])
    assert [s["name"] for s in p["largest_sources"]][0] == "cells.md"


# ------------------------------------------------------------------ full disk
def test_storage_full_during_train_damages_nothing():
    async def go():
        q = await library({"cells.md": DOCS["cells.md"]})
        await call(q, "recordProgress", {"kind": "chat"})
        await q.stage("rocks.md", DOCS["rocks.md"])
        await q.events.drain()  # the first Train's "source added" is recorded in the background; let it land
        before = await snapshot(q.store)
        q.store.fail_next_commit = StoreFullError("QuotaExceededError")
        with pytest.raises(LibraryError, match="disk is full: free at least") as err:
            await q.train()
        return q, before, err.value, await snapshot(q.store)
    q, before, err, after = run(go())
    assert "remove sources" in str(err) and after == before
    assert [s["status"] for s in q.sources() if s["name"] == "rocks.md"] == ["staged"]

    async def later():
        assert (await q.search("mitochondria"))[0]["source"] == "cells.md"
        assert (await call(q, "progress", 0))["today"]["questions"] == 1
        return await q.train()
    assert run(later())["added"] == 1  # once there is space, the same Train works


def test_real_study_service_actions_reach_the_dashboard():
    from quire.services import study

    async def go():
        text = ("# Cells\n" + " ".join([
            "Mitochondria produce most of the chemical energy needed to power the cell.",
            "The nucleus contains the genetic material of the cell in the form of chromosomes.",
            "Ribosomes translate messenger RNA into chains of amino acids called proteins.",
            "The cell membrane controls which substances enter and leave the cell.",
            "Chloroplasts capture light energy and convert it into sugar during photosynthesis.",
            "The Golgi apparatus packages proteins into vesicles for transport around the cell."] * 2)).encode()
        q = await library({"cells.md": text})
        sid = q.sources()[0]["id"]
        deck = await study.METHODS["studyGenerate"](q, Context(), "flashcards", {"scope": {"sources": [sid]}, "count": 3})
        queue = await study.METHODS["review"](q, Context(), deck["id"])
        await study.METHODS["rate"](q, Context(), deck["id"], queue["cards"][0]["id"], "good")
        return await call(q, "progress", 0), deck
    board, deck = run(go())
    assert board["cards"]["total"] == len(deck["items"]) and board["cards"]["reviewed_today"] == 1
    assert "first_deck" in {b["code"] for b in board["badges"]["earned"]}
    assert any(c["covered"] for c in board["coverage"] if c["name"] == "cells.md")
