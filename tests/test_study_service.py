"""quire.services.study on CPython against the Ollama stub: the handlers the page calls."""

import asyncio
import base64
import io
import json
import sqlite3
import zipfile

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import study
from quire.store import MemoryStore
from quire.study.validate import CLOZE, StudyError

M = study.METHODS
BIO = ("# Cells\n## Energy\nMitochondria make ATP for the cell. The mitochondrion has its own DNA and divides "
       "on its own.\n## Division\nMitosis makes two identical daughter cells. Meiosis makes four gametes with half "
       "the chromosomes.\n## Membranes\nThe cell membrane is a lipid bilayer that controls what enters the cell. "
       "Proteins in the membrane pump ions against their gradient.")
ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground and has large crystals."

MC = {"type": "multiple_choice", "question": "What makes ATP?", "options": ["Mitochondria", "Ribosomes", "Nucleus", "Golgi"],
      "answer": 0, "explanation": "Passage 1 says mitochondria make ATP.", "citations": [1]}
TF = {"type": "true_false", "question": "Mitosis makes four gametes.", "options": ["True", "False"], "answer": 1,
      "explanation": "Mitosis makes two identical cells.", "citations": [1]}


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


def run(coro):
    return asyncio.run(coro)


async def engine(url=None, docs=(("Biology", BIO, "Science"), ("Rocks", ROCKS, "Geology"))):
    q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
    for name, text, category in docs:
        await q.stage_text(name, text, category)
    await q.train()
    if url:
        await q.llm.save({"url": url, "chat_model": "llama3.2:3b"})
    return q


def sid(q, name):
    return next(s["id"] for s in q.sources() if s["name"] == f"{name}.md")


async def call(q, method, *args, events=None, payload=None):
    ctx = Context(emit=(events.append if events is not None else None), payload=payload)
    return await M[method](q, ctx, *args)


def test_quiz_from_valid_json_cites_library_chunks_and_plays(stub):
    stub.enqueue_chat(json.dumps({"items": [MC, TF]}))

    async def go():
        q = await engine(stub.url)
        events = []
        quiz = await call(q, "studyGenerate", "quiz", {"scope": {"sources": [sid(q, "Biology")]}, "count": 2,
                                                       "difficulty": "easy"}, events=events)
        body = stub.bodies("/api/chat")[-1]
        assert body["format"]["required"] == ["items"] and body["options"]["temperature"] == 0.1
        assert "Mitochondria make ATP" in body["messages"][0]["content"]
        assert quiz["made_without_ai"] is False and quiz["report"]["kept"] == 2
        chunk_ids = {c["chunk_id"] for c in await q.chunks(sid(q, "Biology"))}
        assert all(set(i["chunk_ids"]) <= chunk_ids and i["chunk_ids"] for i in quiz["items"])
        assert any(e["stage"] == "ask" for e in events)
        seen = []
        q.events.subscribe(seen.append)
        q.events.subscribe(lambda e: 1 / 0)  # a broken subscriber must not break studying
        first = await call(q, "quizAnswer", quiz["id"], 0)
        assert first["correct"] is True and first["position"] == 1
        # a reload: the set comes back from the store where it stopped
        again = await call(q, "studyOpen", quiz["id"])
        assert again["stats"]["position"] == 1 and again["stats"]["status"] == "in_progress"
        last = await call(q, "quizAnswer", quiz["id"], 0)
        assert last["correct"] is False and last["score"]["correct"] == 1 and last["session"]["status"] == "finished"
        assert [e["kind"] for e in seen] == ["quiz_answer", "quiz_answer", "quiz_complete"]
        assert seen[0]["scoped"] is True and seen[0]["sources"] == [sid(q, "Biology")] and seen[0]["correct"] is True
        retry = await call(q, "quizRestart", quiz["id"], True)
        assert retry["total"] == 1 and len(retry["history"]) == 1
        md = await call(q, "studyExport", quiz["id"], "markdown")
        assert "What makes ATP?" in md["text"] and "## Answers" in md["text"]
        assert [s["id"] for s in await call(q, "studySets")] == [quiz["id"]]

    run(go())


def test_partly_invalid_items_are_dropped_and_counted(stub):
    bad = [{**MC, "answer": 9}, {**MC, "question": "Which makes gametes?", "options": ["a", "b"]}]
    good = [MC, TF, {**MC, "question": "What controls entry to the cell?",
                     "options": ["The membrane", "The nucleus", "DNA"], "citations": [1]}]
    stub.enqueue_chat(json.dumps({"items": good + bad}))

    async def go():
        q = await engine(stub.url)
        deck = await call(q, "studyGenerate", "quiz", {"count": 3})
        report = deck["report"]
        assert report["kept"] == 3 and report["offered"] == 5 and len(report["dropped"]) == 2
        assert {d["reason"] for d in report["dropped"]} == {"answer 9 is not an option index (0-3)",
                                                            "a multiple-choice question needs 3 to 6 options"}

    run(go())


def test_garbage_is_a_clear_error_and_nothing_is_saved(stub):
    stub.enqueue_chat("I am sorry, I cannot help with that.")
    stub.enqueue_chat("Still no JSON here.")

    async def go():
        q = await engine(stub.url)
        with pytest.raises(StudyError, match="did not answer in JSON"):
            await call(q, "studyGenerate", "flashcards", {"count": 5})
        assert await call(q, "studySets") == []
        assert len(stub.bodies("/api/chat")) == 2  # asked once more, then gave up

    run(go())


def test_empty_scope_is_a_clear_message(stub):
    async def go():
        q = await engine(stub.url)
        with pytest.raises(StudyError, match="Nothing to study here"):
            await call(q, "studyGenerate", "quiz", {"scope": {"category": "Astronomy"}})
        assert stub.bodies("/api/chat") == []

    run(go())


def test_flashcards_fsrs_schedule_for_a_known_sequence():
    """Good, Good, Again, Easy on one new card, at the moments each came due (no fuzz)."""
    async def go():
        q = await engine()  # no model: cloze cards made without AI
        deck = await call(q, "studyGenerate", "flashcards", {"count": 4})
        assert deck["made_without_ai"] is True and deck["items"]
        card = deck["items"][0]
        t = "2030-03-01T09:00:00+00:00"  # after the deck was made, so every card is due
        queue = await call(q, "review", deck["id"], t)
        assert queue["due"] == len(deck["items"])
        assert queue["cards"][0]["intervals"] == {"again": "1m", "hard": "6m", "good": "10m", "easy": "8d"}
        labels = []
        for rating in ("good", "good", "again", "easy"):
            out = await call(q, "rate", deck["id"], card["id"], rating, t)
            labels.append(out["interval"])
            t = out["due"]
        assert labels[0] == "10m" and labels[2] in ("10m", "5m", "1m")
        assert labels[:2] == ["10m", labels[1]] and labels[1].endswith("d")
        first, last = deck["schedules"][card["id"]]["due"], (await call(q, "studyOpen", deck["id"]))["schedules"][card["id"]]["due"]
        assert last > first
        assert out["lapse"] is False
        lapse = await call(q, "rate", deck["id"], card["id"], "again", t)
        assert lapse["lapse"] is True and lapse["chunk_ids"] == card["chunk_ids"]
        return labels

    labels = run(go())
    assert labels == run(go())  # deterministic: the same sequence gives the same schedule


def test_cards_flag_when_their_source_changes_or_goes(tmp_path):
    async def go():
        q = await engine()
        deck = await call(q, "studyGenerate", "flashcards", {"count": 30})
        assert (await call(q, "review", deck["id"]))["flagged"] == 0
        await q.stage_text("Biology", BIO.replace("cell", "Cell"), "Science")
        await q.train()  # same name, new content: the source is replaced
        flagged = (await call(q, "studyOpen", deck["id"]))["flags"]
        assert flagged and all(r.startswith(("changed:", "removed:")) for rs in flagged.values() for r in rs)
        queue = await call(q, "review", deck["id"])
        assert queue["cards"][0]["flagged"]
        kept = await call(q, "resolveCard", deck["id"], queue["cards"][0]["id"], "keep")
        assert queue["cards"][0]["id"] not in kept["flags"]
        await q.remove(sid(q, "Rocks"))
        flags = (await call(q, "studyOpen", deck["id"]))["flags"]
        rock_cards = [i["id"] for i in deck["items"] if any(c.startswith(deck["sources"][1]) for c in i["chunk_ids"])]
        assert all(any(r.startswith("removed:") for r in flags[c]) for c in rock_cards)

    run(go())


def test_a_card_rated_while_another_is_kept_keeps_its_schedule(monkeypatch):
    # "Keep" reads every passage's hash before it saves the deck; a card rated during that read
    # used to lose its new schedule to the copy of the deck loaded before.
    from quire.services.study import deck as deck_service

    async def go():
        q = await engine()
        deck = await call(q, "studyGenerate", "flashcards", {"count": 30})
        await q.stage_text("Biology", BIO.replace("cell", "Cell"), "Science")
        await q.train()
        queue = await call(q, "review", deck["id"])
        flagged, other = queue["cards"][0]["id"], queue["cards"][-1]["id"]
        hashes, gate, reading = deck_service.current_hashes, asyncio.Event(), asyncio.Event()

        async def slow_hashes(engine, record):
            out = await hashes(engine, record)
            reading.set()
            await gate.wait()
            return out
        monkeypatch.setattr(deck_service, "current_hashes", slow_hashes)
        keep = asyncio.ensure_future(call(q, "resolveCard", deck["id"], flagged, "keep"))
        await reading.wait()
        rated = await call(q, "rate", deck["id"], other, "easy")
        gate.set()
        kept = await keep
        return flagged, other, rated, kept, await call(q, "review", deck["id"])
    flagged, other, rated, kept, after = run(go())
    assert flagged not in kept["flags"]
    assert after["schedule"][other] == rated["due"] and all(c["id"] != other for c in after["cards"])


def test_exports_and_imports_a_deck():
    async def go():
        q = await engine()
        deck = await call(q, "studyGenerate", "flashcards", {"count": 5})
        apkg = await call(q, "studyExport", deck["id"], "apkg")
        data = base64.b64decode(apkg["base64"])
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            (tmp := __import__("tempfile").NamedTemporaryFile(suffix=".anki2", delete=False)).write(z.read("collection.anki2"))
        tmp.close()
        db = sqlite3.connect(tmp.name)
        models = json.loads(db.execute("SELECT models FROM col").fetchone()[0])
        assert {m["name"] for m in models.values()} == {"Basic (Quire)", "Cloze (Quire)"}
        assert db.execute("SELECT count(*) FROM notes").fetchone()[0] == len(deck["items"])
        db.close()
        csv = await call(q, "studyExport", deck["id"], "csv")
        assert csv["text"].count("\n") == len(deck["items"]) and "[...]" in csv["text"]
        back = await call(q, "studyImport", "deck.apkg", payload=data)
        assert back["imported"] and len(back["items"]) == len(deck["items"])
        quizlet = await call(q, "studyImport", "words.csv", payload=b"ATP,energy currency\nDNA,genetic code\n")
        assert [i["front"] for i in quizlet["items"]] == ["ATP", "DNA"]
        with pytest.raises(StudyError, match="takes an Anki"):
            await call(q, "studyImport", "notes.pdf", payload=b"%PDF")

    run(go())


def test_workshop_outline_then_lessons_on_demand(stub):
    outline = {"title": "Cell biology", "modules": [
        {"title": "Energy", "summary": "How cells get energy.", "lessons": [
            {"title": "Mitochondria", "objective": "Explain ATP.", "citations": [1]}]},
        {"title": "Division", "summary": "", "lessons": [
            {"title": "Mitosis and meiosis", "objective": "Compare them.", "citations": [1]}]}]}
    lesson = {"title": "Mitochondria", "introduction": "Cells need energy.",
              "sections": [{"heading": "ATP", "body": "Mitochondria make ATP.", "citations": [1]}],
              "key_points": ["Mitochondria make ATP."], "exercises": [{"prompt": "What makes ATP?", "answer": "Mitochondria"}]}
    stub.enqueue_chat(json.dumps(outline))
    stub.enqueue_chat(json.dumps(lesson))

    async def go():
        q = await engine(stub.url)
        ws = await call(q, "studyGenerate", "workshop", {"scope": {"category": "Science"}})
        assert ws["title"] == "Workshop: Cell biology" and ws["stats"] == {"lessons": 2, "done": 0}
        assert ws["lessons"] == {}
        opened = await call(q, "openLesson", ws["id"], 0, 0)
        assert opened["lesson"]["sections"][0]["chunk_ids"][0].startswith(sid(q, "Biology"))
        prompt = stub.bodies("/api/chat")[-1]["messages"][0]["content"]
        assert "Lesson: Mitochondria" in prompt
        again = await call(q, "openLesson", ws["id"], 0, 0)  # kept: no second model call
        assert again["lesson"] == opened["lesson"] and len(stub.bodies("/api/chat")) == 2
        done = await call(q, "lessonDone", ws["id"], 0, 0, True)
        assert done["stats"]["done"] == 1
        md = await call(q, "studyExport", ws["id"], "markdown")
        assert "# Cell biology" in md["text"] and "## ATP" in md["text"]

    run(go())


def test_a_lesson_written_meanwhile_keeps_what_changed_in_the_set(stub, monkeypatch):
    # A model writes a lesson for a minute; the set saved afterwards used to be the copy loaded
    # before, so a lesson marked done meanwhile was undone, and opening one lesson
    # twice wrote it twice with the second text replacing the first.
    from quire.services.study import workshop
    outline = {"title": "Cells", "modules": [{"title": "Energy", "summary": "", "lessons": [
        {"title": "Mitochondria", "objective": "Explain ATP.", "citations": [1]},
        {"title": "Division", "objective": "Mitosis.", "citations": [1]}]}]}
    stub.enqueue_chat(json.dumps(outline))
    gates, written = [], []

    async def slow_model(engine, ctx, kind, chunks, **kw):
        gate = asyncio.Event()
        gates.append(gate)
        await gate.wait()
        written.append(len(written) + 1)
        return {"items": [{"title": kw["lesson_title"], "introduction": f"text {written[-1]}", "sections": [],
                           "key_points": [], "exercises": []}]}
    monkeypatch.setattr(workshop, "generate_with_model", slow_model)

    async def go():
        q = await engine(stub.url)
        ws = await call(q, "studyGenerate", "workshop", {})
        first = asyncio.ensure_future(call(q, "openLesson", ws["id"], 0, 0))
        second = asyncio.ensure_future(call(q, "openLesson", ws["id"], 0, 0))
        while len(gates) < 2:
            await asyncio.sleep(0)
        await call(q, "lessonDone", ws["id"], 0, 1, True)
        gates[0].set()
        a = await first
        gates[1].set()
        b = await second
        return a, b, await call(q, "studyOpen", ws["id"])
    a, b, after = run(go())
    assert a["lesson"]["introduction"] == b["lesson"]["introduction"] == "text 1"
    assert after["lessons"]["0.0"]["introduction"] == "text 1"
    assert after["done"] == ["0.1"] and after["stats"]["done"] == 1


def test_mindmap_offline_and_exports():
    async def go():
        q = await engine()
        mm = await call(q, "studyGenerate", "mindmap", {"scope": {"sources": [sid(q, "Biology")]}})
        assert mm["made_without_ai"] and mm["map"]["children"]
        labels = json.dumps(mm["map"])
        assert "Energy" in labels and "Division" in labels
        opml = await call(q, "studyExport", mm["id"], "opml")
        assert opml["text"].startswith("<?xml") and 'text="Energy"' in opml["text"]
        md = await call(q, "studyExport", mm["id"], "markdown")
        assert "- Energy" in md["text"] or "  - Energy" in md["text"]
        await call(q, "studyDelete", mm["id"])
        assert await call(q, "studySets") == []

    run(go())


def test_prompt_override_takes_effect_and_bad_variables_are_refused(stub):
    stub.enqueue_chat(json.dumps({"items": [MC, TF]}))

    async def go():
        q = await engine(stub.url)
        tpl = await call(q, "promptTemplate", "quiz")
        assert tpl["overridden"] is False and "$context" in tpl["text"]
        with pytest.raises(ValueError, match=r"no value given for \$mood"):
            await call(q, "savePromptOverride", "quiz", tpl["text"] + "\nBe $mood.")
        with pytest.raises(ValueError, match=r"does not use \$count"):
            await call(q, "savePromptOverride", "quiz", tpl["text"].replace("$count", "some"))
        saved = await call(q, "savePromptOverride", "quiz", "PIRATE VOICE. " + tpl["text"])
        assert saved["overridden"] is True
        await call(q, "studyGenerate", "quiz", {"count": 2})
        assert stub.bodies("/api/chat")[-1]["messages"][0]["content"].startswith("PIRATE VOICE.")
        reset = await call(q, "resetPromptOverride", "quiz")
        assert reset["overridden"] is False and reset["text"] == tpl["default"]

    run(go())


def test_unreachable_server_falls_back_to_no_ai():
    async def go():
        q = await engine("http://127.0.0.1:9")  # nothing listens there
        quiz = await call(q, "studyGenerate", "quiz", {"count": 4})
        assert quiz["made_without_ai"] and "could not be reached" in quiz["report"]["note"]

    run(go())


def test_no_llm_cloze_answers_occur_in_their_passage_on_a_real_pdf(pdf_dir):
    async def go():
        q = await Quire.open(MemoryStore())
        await q.stage("N18-3011.pdf", (pdf_dir / "acl-papers" / "N18-3011.pdf").read_bytes())
        await q.train()
        deck = await call(q, "studyGenerate", "flashcards", {"count": 20})
        assert deck["made_without_ai"] and len(deck["items"]) >= 10
        chunks = {c["chunk_id"]: c for s in q.sources() for c in await q.chunks(s["id"])}
        for card in deck["items"]:
            (cid,) = card["chunk_ids"]
            answers = [m.group(2) for m in CLOZE.finditer(card["text"])]
            assert answers and all(a in chunks[cid]["text"] for a in answers), card
        quiz = await call(q, "studyGenerate", "quiz", {"count": 8})
        assert len(quiz["items"]) >= 6
        mm = await call(q, "studyGenerate", "mindmap", {})
        assert len(mm["map"]["children"]) >= 3

    run(go())


def test_requests_are_sized_from_the_count_and_a_cut_answer_asks_again_for_fewer(stub):
    from quire.study.schemas import token_budget

    cut = json.dumps({"items": [MC, TF, {**MC, "question": "What divides?"}]})[:-40]
    stub.enqueue_chat(cut, done_reason="length")
    stub.enqueue_chat(json.dumps({"items": [{**MC, "question": "Which organelle has DNA?"}, TF]}))

    async def go():
        q = await engine(stub.url)
        events = []
        quiz = await call(q, "studyGenerate", "quiz", {"scope": {"sources": [sid(q, "Biology")]}, "count": 4},
                          events=events)
        return quiz, events
    quiz, events = run(go())
    first, second = stub.bodies("/api/chat")
    assert first["format"]["properties"]["items"]["maxItems"] == 4 and second["format"]["properties"]["items"]["maxItems"] == 2
    assert first["options"]["num_predict"] == token_budget(first["format"]) > second["options"]["num_predict"]
    assert [i["question"] for i in quiz["items"]] == ["What makes ATP?", "Mitosis makes four gametes.",
                                                     "Which organelle has DNA?"]
    assert quiz["report"]["cut"] == 1 and any("reached its limit" in e.get("message", "") for e in events)


def test_sets_stored_by_an_earlier_version_keep_their_passages():
    """Sets as the version before the one chunk-id scheme stored them (made with ``<name>:<n>``
    ids and renamed to ``<source id>:<n>`` before saving): their ids still open passages, flag
    nothing while the text is unchanged, and an unwritten lesson is written from them."""
    async def go():
        q = await engine()
        bio = sid(q, "Biology")
        chunks = await q.chunks(bio)
        one, two = chunks[1], chunks[2]
        card = {"type": "basic", "front": "What makes ATP?", "back": "Mitochondria", "id": "0123456789abcdef",
                "chunk_ids": [f"{bio}:1"], "chunk_hashes": {f"{bio}:1": one["hash"]}, "made_without_ai": True}
        base = {"created": 1.7e9, "scope": None, "scope_label": "all your documents", "sources": [bio],
                "difficulty": "medium", "topic": "", "made_without_ai": True, "report": {}}
        deck = {**base, "id": "olddeck00001", "kind": "flashcards", "title": "Flashcards: old", "items": [card],
                "schedules": {}}
        workshop = {**base, "id": "oldwork00001", "kind": "workshop", "title": "Workshop: old", "lessons": {}, "done": [],
                    "outline": {"title": "Cells", "made_without_ai": True, "modules": [
                        {"title": "Division", "summary": "", "lessons": [
                            {"title": "Division", "objective": "Compare them.", "chunk_ids": [f"{bio}:2"]}]}]}}
        await q.store.commit([("study", deck["id"], deck), ("study", workshop["id"], workshop)])
        assert (await call(q, "studyOpen", deck["id"]))["flags"] == {}
        passage = await q.passage(f"{bio}:1")
        assert passage["chunk"]["text"] == one["text"] and passage["source"]["name"] == "Biology.md"
        lesson = (await call(q, "openLesson", workshop["id"], 0, 0, {"offline": True}))["lesson"]
        assert [s["chunk_ids"] for s in lesson["sections"]] == [[f"{bio}:2"]]
        assert lesson["sections"][0]["heading"].startswith("Biology.md · ") and lesson["sections"][0]["body"] in two["text"]
        assert lesson["chunk_ids"] == [f"{bio}:2"] and lesson["chunk_hashes"] == {f"{bio}:2": two["hash"]}

    run(go())
