"""A course vault on CPython (quire.vault_course, the engine's importVault with ``course``): what a
student's import takes from a teacher's vault, what it leaves of theirs, and what a kiosk restores."""

import base64
import json

import pytest

from quire import vault, vault_course
from quire.app import Quire
from quire.services import Context, study
from quire.services import vault as vs
from quire.store import MemoryStore

from course_vaults import teacher_vault
from test_study_service import ROCKS, run
from vault_crafts import tampered

M = {**vs.METHODS, **study.METHODS}
MINE = ROCKS + " The Krebs cycle turns acetyl groups into carbon dioxide. Quartz is hard and resists weathering."


async def call(q, method, *args, payload=None):
    return await M[method](q, Context(payload=payload), *args)


async def student(q_docs=(("My notes", MINE, "Mine"),)) -> Quire:
    """A student with a document, a chat, a deck of their own and a recorded progress event."""
    q = await Quire.open(MemoryStore())
    for name, text, category in q_docs:
        await q.stage_text(name, text, category)
    await q.train()
    await call(q, "studyGenerate", "flashcards", {"count": 2, "scope": {"category": "Mine"}})
    await q.store.commit([("chats", "my-chat", {"id": "my-chat", "title": "Mine", "messages": []}),
                          ("progress", "ev:mine", {"kind": "chat", "t": 1})])
    return q


async def stores(q) -> dict:
    from quire.store import BUCKETS

    return {b: await q.store.all(b) for b in BUCKETS}


def names(q) -> list[str]:
    return sorted(s["name"] for s in q.sources())


def course_sets(s: dict) -> dict:
    return {k: r for k, r in s["study"].items() if r.get("course")}


@pytest.fixture(scope="module")
def course():
    return run(teacher_vault())


def test_about_names_the_course_and_refuses_a_tampered_vault(course):
    data, _ = course
    about = vs.course_about(data)
    assert about == {"title": "Earth 101", "documents": 2, "passages": about["passages"], "sets": 1,
                     "made": vault.unpack(data)[2]["created"][:10], "sha256": vault.sha256(data), "size": len(data)}
    assert about["passages"] >= 2
    assert vs.course_about(data, "  Geology\n for beginners ")["title"] == "Geology for beginners"
    with pytest.raises(vault.VaultError, match="checksum mismatch for buckets/chunks.json"):
        vs.course_about(tampered(data))


def test_a_merged_course_keeps_the_students_own_things(course):
    data, teacher_quiz = course

    async def go():
        q = await student()
        before = await stores(q)
        r = await call(q, "importVault", "merge", None, None, {"mode": "offer", "title": "Earth 101"}, payload=data)
        return q, before, await stores(q), r, await q.search("shield volcano basalt")
    q, before, after, r, hits = run(go())
    assert r["course"] == {"id": vault.sha256(data), "title": "Earth 101"}
    assert names(q) == ["My notes.md", "Rocks.md", "Volcanoes.md"]
    assert hits and hits[0]["source"] == "Volcanoes.md"  # the index was rebuilt with the course's passages
    # The student's own chat, progress, deck and settings are as they were; nothing of the teacher's came.
    for bucket in ("chats", "progress", "settings"):
        assert after[bucket] == before[bucket], bucket
    assert {k: v for k, v in after["study"].items() if not v.get("course")} == before["study"]
    # The teacher's quiz is on the shelf, marked, and not yet answered.
    sets = course_sets(after)
    assert list(sets) == [teacher_quiz["id"]]
    mark = sets[teacher_quiz["id"]]
    assert mark["course"]["title"] == "Earth 101" and mark["session"]["answers"] == []
    shelf = run(call(q, "studySets"))
    assert [s["course"]["title"] for s in shelf if s.get("course")] == ["Earth 101"]


def test_an_import_tells_each_step_as_it_begins(course):
    data, _ = course
    heard = []

    async def go():
        q = await student()
        return await vs.import_vault(q, data, "merge", None, {"mode": "offer", "title": "Earth 101"}, heard.append)
    assert run(go())["sources"] == 3
    assert heard == [{"stage": "checking", "fraction": 0.0}, {"stage": "index", "fraction": 0.25},
                     {"stage": "saving", "fraction": 0.5}, {"stage": "opening", "fraction": 0.75}]


def test_merging_again_keeps_the_students_answers(course):
    data, teacher_quiz = course

    async def go():
        q = await student()
        offer = {"mode": "offer", "title": "Earth 101"}
        await call(q, "importVault", "merge", None, None, offer, payload=data)
        await call(q, "quizAnswer", teacher_quiz["id"], 1)
        answered = (await stores(q))["study"][teacher_quiz["id"]]["session"]["answers"]
        await call(q, "importVault", "merge", None, None, offer, payload=data)
        return answered, (await stores(q))["study"][teacher_quiz["id"]]["session"]["answers"]
    answered, again = run(go())
    assert len(answered) == 1 and again == answered


def test_a_replacing_course_replaces_the_library_only(course):
    data, teacher_quiz = course

    async def go():
        q = await student()
        before = await stores(q)
        await call(q, "importVault", "replace", None, None, {"mode": "offer", "title": "Earth 101"}, payload=data)
        return q, before, await stores(q)
    q, before, after = run(go())
    assert names(q) == ["Rocks.md", "Volcanoes.md"]
    for bucket in ("chats", "progress", "settings"):
        assert after[bucket] == before[bucket], bucket
    own = {k: v for k, v in after["study"].items() if not v.get("course")}
    assert own == before["study"] and list(course_sets(after)) == [teacher_quiz["id"]]


def test_a_kiosk_restores_the_course_exactly(course):
    data, teacher_quiz = course

    async def go():
        q = await student()
        kiosk = {"mode": "kiosk", "title": "Earth 101"}
        await call(q, "importVault", "merge", None, None, kiosk, payload=data)
        first = await stores(q)
        await q.stage_text("Visitor", MINE, "Visitor")
        await q.train()
        await call(q, "quizAnswer", teacher_quiz["id"], 0)
        await q.store.commit([("chats", "visitor", {"id": "visitor", "messages": []})])
        await call(q, "importVault", "replace", None, None, kiosk, payload=data)
        return q, first, await stores(q)
    q, first, second = run(go())
    assert names(q) == ["Rocks.md", "Volcanoes.md"]
    assert first["chats"] == {} and first["progress"] == {}  # the visitor's and the teacher's alike
    assert first["settings"].get("llm", {}).get("chat_model") != "teachers-model"
    for bucket in ("sources", "chunks", "originals", "study", "chats"):
        assert second[bucket] == first[bucket], bucket
    assert list(second["study"]) == [teacher_quiz["id"]] and second["study"][teacher_quiz["id"]]["course"]


def test_a_course_with_a_set_quire_cannot_open_is_refused_whole(course):
    data, _ = course
    buckets, blobs, meta = vault.unpack(data)
    buckets["study"]["odd"] = {"id": "odd", "kind": "crossword"}
    crafted = vault.pack(buckets, blobs, created=meta["created"])

    async def go():
        q = await student()
        before = await stores(q)
        with pytest.raises(vault.VaultError, match="cannot open"):
            await call(q, "importVault", "merge", None, None, {"mode": "offer"}, payload=crafted)
        return before, await stores(q)
    before, after = run(go())
    assert after == before


def test_an_unknown_course_mode_is_refused(course):
    async def go():
        q = await student()
        await call(q, "importVault", "merge", None, None, {"mode": "teacher"}, payload=course[0])
    with pytest.raises(vault.VaultError, match="offer, kiosk"):
        run(go())


def test_fresh_set_is_the_same_for_the_same_vault():
    record = {"id": "d", "kind": "flashcards", "created": 1_700_000_000.0,
              "items": [{"id": "499c173435892634"}], "schedules": {"499c173435892634": {"due": "x"}}}
    course = {"id": "ab", "title": "T"}
    one, two = vault_course.fresh_set(record, course), vault_course.fresh_set(record, course)
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert one["schedules"]["499c173435892634"]["due"].startswith("2023-11-14")
    assert record["schedules"]["499c173435892634"] == {"due": "x"}  # the vault's record is not changed
