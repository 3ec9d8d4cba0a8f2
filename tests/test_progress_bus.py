"""Progress through the engine's event bus, driven only by the page's methods (``Quire.call``):
one bus per engine, the first question counted, every badge in badges.json earned by
doing what it describes (and not one step earlier), and "cards due" agreeing with Study."""

import asyncio
import json

import pytest

from quire.app import Quire
from quire.progress import badges
from quire.progress.clock import to_ms
from quire.store import MemoryStore
from quire.study import quiz

FACTS = [
    "Mitochondria produce most of the chemical energy needed to power the cell.",
    "The nucleus contains the genetic material of the cell in the form of chromosomes.",
    "Ribosomes translate messenger RNA into chains of amino acids called proteins.",
    "The cell membrane controls which substances enter and leave the cell.",
    "Chloroplasts capture light energy and convert it into sugar during photosynthesis.",
    "The Golgi apparatus packages proteins into vesicles for transport around the cell.",
    "Basalt forms when lava cools quickly at the surface of the Earth.",
    "Granite cools slowly underground and therefore grows large visible crystals.",
    "Sandstone is a sedimentary rock made of cemented grains of quartz sand.",
    "Marble forms when limestone is heated and squeezed deep inside mountain belts.",
    "Glaciers carve U-shaped valleys as they slowly move downhill over many centuries.",
    "Rivers deposit fertile silt on their floodplains during seasonal floods.",
    "The French Revolution began in 1789 with the storming of the Bastille in Paris.",
    "Napoleon Bonaparte crowned himself emperor of the French in 1804.",
    "The Congress of Vienna redrew the map of Europe after the Napoleonic wars.",
    "Steam engines powered the factories of the Industrial Revolution in Britain.",
]
# Four chapters of three sections: enough full sentences for the no-model quiz, deck, workshop and map.
TEXT = "\n".join(f"# Chapter {c}\n" + "\n".join(
    f"## Section {c}.{k}\n" + " ".join(FACTS[(c * 4 + k + j) % len(FACTS)] for j in range(4)) for k in range(3))
    for c in range(4))
DAY0 = to_ms("2025-03-03T08:00:00Z")
MIN, DAY = 60_000, 86_400_000
DEFS = json.loads(badges.DEFINITIONS.read_text(encoding="utf-8"))["badges"]


def run(coro):
    return asyncio.run(coro)


async def library() -> Quire:
    q = await Quire.open(MemoryStore())
    await q.call("stageText", "cells", TEXT)
    await q.train()
    return q


async def board(q) -> dict:
    return await q.call("progress", 0)


def at(q, t):
    q.events.clock = lambda: t  # the bus stamps each action with this time


# ------------------------------------------------------------- badge triggers
# metric -> (needs a trained library first, setup(q, target) -> state, step(q, state, i)): doing step
# 0..target-1 takes the metric from 0 to the badge's target, one unit per step.
async def _train_one(q, state, i):
    await q.call("stageText", f"notes-{i}", f"# Notes {i}\n{FACTS[i % len(FACTS)]} Page {i} of the notes.")
    await q.train()


async def _ask(q, state, i):
    await q.call("ask", f"What do mitochondria produce? ({i})")


async def _ask_scoped(q, state, i):
    await q.call("ask", f"What forms basalt? ({i})", {"scope": {"sources": [q.sources()[0]["id"]]}})


async def _ask_on_day(q, state, i):
    at(q, DAY0 + i * DAY)
    await _ask(q, state, i)


async def _ask_in_new_session(q, state, i):
    at(q, DAY0 + i * 20 * MIN)  # more than 15 minutes apart: a new session each time
    await _ask(q, state, i)


async def _ask_a_minute_later(q, state, i):
    at(q, DAY0 + i * MIN)  # one session (pauses under 15 minutes): first to last action plus a minute
    await _ask(q, state, i)


async def _set(q, kind, count=10):
    return await q.call("studyGenerate", kind, {"count": count})


async def _answer_one(q, state, i):
    view = await q.call("studyOpen", state["id"])
    if quiz.current(view["session"]) is None:
        await q.call("quizRestart", state["id"])
        view = await q.call("studyOpen", state["id"])
    item = quiz.current(view["session"])
    await q.call("quizAnswer", state["id"], item["answer"] if i % 2 else (item["answer"] + 1) % len(item["options"]))


async def _perfect_run(q, state, i):
    if i:
        await q.call("quizRestart", state["id"])
    while (item := quiz.current((await q.call("studyOpen", state["id"]))["session"])) is not None:
        await q.call("quizAnswer", state["id"], item["answer"])


async def _decks(q, target):
    """A deck per hundred reviews: a deck keeps its review history, and copying one with a
    thousand reviews on every rating (MemoryStore copies values) would make this test slow."""
    return [await _set(q, "flashcards") for _ in range(max(1, target // 100))]


async def _review(q, decks, i):
    deck = decks[i % len(decks)]
    await q.call("rate", deck["id"], deck["items"][i // len(decks) % len(deck["items"])]["id"], "good")


async def _finish_lesson(q, state, i):
    lessons = [(m, n) for m, mod in enumerate(state["outline"]["modules"]) for n in range(len(mod["lessons"]))]
    await q.call("lessonDone", state["id"], *lessons[i])


async def _export(q, state, i):
    await q.call("studyExport", state["id"], "markdown")


TRIGGERS = {
    "sources_trained": (False, None, _train_one),
    "questions_asked": (True, None, _ask),
    "scoped_questions": (True, None, _ask_scoped),
    "quiz_answers": (True, lambda q, target: _set(q, "quiz"), _answer_one),
    "quiz_perfect_scores": (True, lambda q, target: _set(q, "quiz", 2), _perfect_run),
    "cards_reviewed": (True, _decks, _review),
    "streak_days": (True, None, _ask_on_day),
    "study_minutes": (True, None, _ask_a_minute_later),
    "sessions": (True, None, _ask_in_new_session),
    "flashcard_decks": (True, None, lambda q, s, i: _set(q, "flashcards")),
    "workshops_completed_lessons": (True, lambda q, target: _set(q, "workshop"), _finish_lesson),
    "mindmaps": (True, None, lambda q, s, i: _set(q, "mindmap")),
    "exports": (True, lambda q, target: _set(q, "mindmap"), _export),
}


def test_every_badge_metric_has_a_trigger():
    assert {d["metric"] for d in DEFS} <= set(TRIGGERS)


@pytest.mark.parametrize("badge", DEFS, ids=[d["code"] for d in DEFS])
def test_each_badge_is_earned_by_its_action_and_not_one_short(badge):
    needs_library, setup, step = TRIGGERS[badge["metric"]]
    target = badge["target"]

    async def go():
        q = await library() if needs_library else await Quire.open(MemoryStore())
        state = await setup(q, target) if setup else None
        for i in range(target - 1):
            await step(q, state, i)
        before = await board(q)
        await step(q, state, target - 1)
        return before, await board(q)
    before, after = run(go())
    short = next(b for b in before["badges"]["all"] if b["code"] == badge["code"])
    assert short["value"] == target - 1 and not short["earned"]
    assert badge["code"] in {b["code"] for b in after["badges"]["earned"]}


# ------------------------------------------------------------- one bus per engine
def test_two_engines_in_one_process_keep_their_own_events():
    async def go():
        a, b = await library(), await library()
        heard_by_b = []
        b.events.subscribe(heard_by_b.append)
        await a.call("ask", "What do mitochondria produce?")
        await a.call("ask", "What forms basalt?")
        await b.call("studyGenerate", "mindmap", {})
        return await board(a), await board(b), heard_by_b
    board_a, board_b, heard_by_b = run(go())
    assert board_a["today"]["questions"] == 2 and board_b["today"]["questions"] == 0
    assert "first_map" not in {x["code"] for x in board_a["badges"]["earned"]}
    assert "first_map" in {x["code"] for x in board_b["badges"]["earned"]}
    actions = [e["kind"] for e in heard_by_b if e["kind"] != "badges_earned"]  # (b's own badges are news on its bus too)
    assert actions == ["study_generated"]


def test_the_first_question_of_a_session_is_counted():
    async def go():
        q = await library()
        result = await q.call("ask", "What do mitochondria produce?")
        return result, await board(q)
    result, b = run(go())
    assert result["error"] is None
    assert b["today"]["questions"] == 1
    assert "first_question" in {x["code"] for x in b["badges"]["earned"]}


# ------------------------------------------------------------- cards due
def test_cards_due_in_progress_is_the_sum_of_the_study_decks():
    async def go():
        q = await library()
        first, second = await _set(q, "flashcards"), await _set(q, "flashcards")
        for item in first["items"][:3]:
            await q.call("rate", first["id"], item["id"], "easy")  # reviewed: no longer due
        gone = await _set(q, "flashcards", 4)
        await q.call("studyDelete", gone["id"])
        return first, second, await q.call("studySets"), await board(q)
    first, second, sets, b = run(go())
    # the no-model deck is made the same way twice: the same card ids in two decks
    assert {i["id"] for i in first["items"]} & {i["id"] for i in second["items"]}
    decks = [s["stats"] for s in sets if s["kind"] == "flashcards"]
    assert sorted(d["due"] for d in decks) == sorted([len(second["items"]), len(first["items"]) - 3])
    assert b["cards"]["due_now"] == sum(d["due"] for d in decks)
    assert b["cards"]["total"] == sum(d["total"] for d in decks)


def test_earned_badges_are_announced_on_the_bus_once():
    # The tab learns of new badges from this event (the bridge passes it to the page); it used
    # to ask the engine for news after every call that was not on a hand-kept list of reads.
    from quire.bus import BADGES_EARNED

    async def go():
        q = await Quire.open(MemoryStore())
        said = []
        q.events.subscribe(lambda e: said.append([b["code"] for b in e["badges"]]) if e["kind"] == BADGES_EARNED else None)
        for _ in range(2):  # the second question earns nothing new
            q.events.emit({"kind": "chat", "scoped": False, "sources": []})
            await q.events.drain()
        recorded = await q.call("recordProgress", {"kind": "quiz_answer", "correct": True})
        return said, recorded
    said, recorded = run(go())
    assert said == [["first_question"]] and recorded["awarded"] == []
    assert all(b["name"] and b["icon"] for b in DEFS if b["code"] == "first_question")


def test_a_saved_library_is_checked_for_badges_no_action_announces():
    # A deck imported from a file (studyImport) or a vault brings decks and sources with no
    # action on the bus: the tab's bridge says LIBRARY_SAVED after the write, and progress checks.
    from quire.bus import BADGES_EARNED, LIBRARY_SAVED

    async def go():
        q = await Quire.open(MemoryStore())
        said = []
        q.events.subscribe(lambda e: said.extend(b["code"] for b in e["badges"]) if e["kind"] == BADGES_EARNED else None)
        await q.store.commit([("study", "d1", {"id": "d1", "kind": "flashcards", "items": [], "schedules": {}})])
        await q.events.drain()
        before = list(said)
        q.events.emit({"kind": LIBRARY_SAVED})
        await q.events.drain()
        stored = await q.store.all("progress")
        return before, said, stored
    before, said, stored = run(go())
    assert before == [] and said == ["first_deck"]
    assert "badge:first_deck" in stored and not any(k.startswith("ev:") for k in stored)  # a check, not an action


def test_a_burst_of_actions_is_written_in_one_commit_and_checked_for_badges_once():
    # A Train of 5,000 small files emits 5,000 "source_added": written one commit each (and
    # the badges evaluated after each), they held the next call for a minute in the page.
    from quire.services import progress as progress_service

    async def go():
        q = await library()
        svc = progress_service.service(q)
        await svc.flush()
        commits, checks, orig_commit, orig_check = [], [], q.store.commit, svc.check

        async def counted_commit(puts=(), deletes=()):
            puts = list(puts)
            commits.append(len(puts))
            await orig_commit(puts, deletes)

        async def counted_check(*a, **kw):
            checks.append(1)
            return await orig_check(*a, **kw)
        q.store.commit, svc.check = counted_commit, counted_check
        for i in range(1000):
            q.events.emit({"kind": "source_added", "item": f"note-{i}.txt"})
        q.events.emit({"kind": "chat", "scoped": False, "sources": [], "text": "x"})
        await svc.flush()
        stored = await q.store.all("progress")
        return commits, checks, sum(1 for k, v in stored.items() if k.startswith("ev:") and v["kind"] == "source_added")
    commits, checks, added = run(go())
    assert added >= 1000
    assert sum(1 for n in commits if n >= 1000) == 1 and len(commits) <= 2, commits  # events in one, badges maybe one more
    assert len(checks) == 1


def test_library_saves_one_after_another_are_checked_for_badges_once_they_pause(monkeypatch):
    # In the page the bridge says LIBRARY_SAVED after every changing call; each used to start a
    # check that reads every trained source's passages and every progress event, and the next
    # rename waited for it (0.2-0.3 s at 5,183 sources).  Saves arriving while the edits go on
    # (a frozen clock: no time passes between them, however slow the machine) make one check,
    # once the clock says the edits have paused.
    from quire.bus import LIBRARY_SAVED
    from quire.services import progress as progress_service

    clock = {"now": 100.0}
    monkeypatch.setattr(progress_service.time, "monotonic", lambda: clock["now"])

    async def go():
        q = await library()
        svc = progress_service.service(q)
        await svc.flush()
        checks, orig_check = [], svc.check

        async def counted_check(*a, **kw):
            checks.append(1)
            return await orig_check(*a, **kw)
        svc.check = counted_check
        for _ in range(5):
            q.events.emit({"kind": LIBRARY_SAVED})
            await asyncio.sleep(0)  # the page's next call runs meanwhile
            await asyncio.sleep(0)
        during = len(checks)
        clock["now"] += progress_service.RECHECK_QUIET_S  # the edits pause
        await svc.flush()
        return during, len(checks)
    during, after = run(go())
    assert (during, after) == (0, 1)
