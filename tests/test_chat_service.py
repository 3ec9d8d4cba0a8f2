"""quire.services.chat on CPython, against the Ollama stub: the same handlers the page calls."""

import asyncio
import json
import socket

import pytest

from ollama_server import OllamaStub
from quire.app import Quire
from quire.chat.extractive import LABEL
from quire.llm import BlockingAsyncTransport, UrllibTransport
from quire.services import Context
from quire.services import chat as chat_service
from quire.store import MemoryStore
from quire.chat.agent import TOOL_SCHEMAS

METHODS = chat_service.METHODS
BIO = "# Cells\nMitochondria make ATP for the cell. Mitosis makes two identical cells."
ROCKS = "# Rocks\nBasalt forms when lava cools quickly. Granite cools slowly underground."


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


def run(coro):
    return asyncio.run(coro)


async def engine(url: str, chat_model: str = "qwen3:4b", docs=(("Biology", BIO, "Science"), ("Rocks", ROCKS, "Geology"))):
    q = await Quire.open(MemoryStore(), transport=BlockingAsyncTransport(UrllibTransport(timeout=10)))
    for name, text, category in docs:
        await q.stage_text(name, text, category)
    await q.train()
    await q.llm.save({"url": url, "chat_model": chat_model})
    return q


def source_id(q, name):
    return next(s["id"] for s in q.sources() if s["name"] == name)


async def ask(q, question, opts=None, cancel_after=None):
    events = []

    def cancelled():
        return cancel_after is not None and sum(e["type"] == cancel_after for e in events) > 0

    result = await METHODS["ask"](q, Context(emit=events.append, cancelled=cancelled), question, opts or {})
    return result, events


def chat_bodies(stub):
    return [b for b in stub.bodies("/api/chat")]


def test_full_chat_thinking_citations_first_tool_call_and_memory(stub):
    stub.enqueue_chat("", thinking=["Need ", "the sum."], tool_calls=[{"name": "calculator", "arguments": {"expression": "2 * 21"}}])
    stub.enqueue_chat(["Mitochondria make ATP ", "[1]. The answer is 42."], thinking=["Now answer."])
    hooked = []

    async def go():
        q = await engine(stub.url)
        q.events.subscribe(hooked.append)
        q.events.subscribe(lambda e: 1 / 0)  # a broken subscriber is logged, the answer still comes
        result, events = await ask(q, "What makes ATP? And 2*21?")
        return q, result, events, await METHODS["chatSessions"](q, Context())
    q, result, events, sessions = run(go())
    kinds = [e["type"] for e in events]
    assert kinds[0] == "citations" and kinds[-1] == "done"
    assert kinds.index("thinking") < kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("content")
    assert events[0]["citations"][0]["source"] == "Biology.md"
    assert {"n", "chunk_id", "source", "location_label", "passage"} <= set(events[0]["citations"][0])
    assert next(e for e in events if e["type"] == "tool_result")["result"] == "42"
    assert result["answer"] == "Mitochondria make ATP [1]. The answer is 42."
    assert result["thinking"] == "Need the sum.Now answer." and result["used"] == [1] and result["mode"] == "llm"
    assert events[-1]["memory"]["used"] == len("What makes ATP? And 2*21?") + len(result["answer"])
    first = chat_bodies(stub)[0]
    assert first["think"] is True and {t["function"]["name"] for t in first["tools"]} >= {"calculator", "analyze_document"}
    assert "prompts" not in first["messages"][0]["content"] and "Passages from the documents" in first["messages"][1]["content"]
    assert sessions[0]["id"] == result["session"] and sessions[0]["title"] == "What makes ATP? And 2*21?"
    assert [{k: v for k, v in e.items() if k != "t"} for e in hooked if e["kind"] != "badges_earned"] == [
        {"kind": "chat", "scoped": False, "sources": list(dict.fromkeys(c["source_id"] for c in result["citations"]))}]


@pytest.mark.parametrize("scope_of,statement", [
    (lambda q: {"sources": [source_id(q, "Rocks.md")]}, "Answer only from: Rocks.md."),
    (lambda q: {"category": "Geology"}, "Answer only from the documents in the category 'Geology'."),
])
def test_scope_limits_retrieval_and_is_stated_in_system_and_user_message(stub, scope_of, statement):
    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        return await ask(q, "How do cells and rocks form?", {"scope": scope_of(q)})
    result, events = run(go())
    assert result["citations"] and {c["source"] for c in result["citations"]} == {"Rocks.md"}
    body = chat_bodies(stub)[-1]
    system, user = body["messages"][0], body["messages"][-1]
    assert system["role"] == "system" and statement in system["content"]
    assert user["role"] == "user" and statement in user["content"] and "Basalt" in user["content"]
    assert "Mitochondria" not in user["content"]
    assert "think" not in body  # llama3.2 does not think


def test_tools_see_only_the_scope_and_document_tools_call_the_model_directly(stub):
    analysis = {"summary": "About rocks.", "topics": ["basalt"], "entities": [],
                "key_facts": [{"fact": "Basalt cools fast.", "citations": [1]}]}
    stub.enqueue_chat("", tool_calls=[{"name": "list_documents", "arguments": {}},
                                      {"name": "analyze_document", "arguments": {"document": "Rocks.md"}},
                                      {"name": "analyze_document", "arguments": {"document": "Biology.md"}}])
    stub.enqueue_chat(json.dumps(analysis))  # the analysis call itself
    stub.enqueue_chat("Rocks cool [1].")

    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        return await ask(q, "Summarise", {"scope": {"category": "Geology"}})
    result, events = run(go())
    results = [e for e in events if e["type"] == "tool_result"]
    assert [d["name"] for d in json.loads(results[0]["result"])["documents"]] == ["Rocks.md"]
    assert json.loads(results[1]["result"])["summary"] == "About rocks."
    assert not results[2]["ok"] and "no document named 'Biology.md'" in results[2]["result"]
    structured = [b for b in chat_bodies(stub) if b.get("format")]
    assert len(structured) == 1 and structured[0]["stream"] is False and "tools" not in structured[0]
    assert result["answer"] == "Rocks cool [1]."


def test_memory_budget_drops_the_oldest_pair(stub):
    long = "x" * 25_000  # two pairs no longer fit in 48,000 characters
    for _ in range(3):
        stub.enqueue_chat(long)

    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        first, _ = await ask(q, "Q1 cells?")
        sid = first["session"]
        await ask(q, "Q2 rocks?", {"session": sid})
        third, events = await ask(q, "Q3 basalt?", {"session": sid})
        return third, events
    third, events = run(go())
    history = [m["content"][:9] for m in chat_bodies(stub)[-1]["messages"][1:-1]]
    assert history == ["Q2 rocks?", "x" * 9]  # Q1's pair no longer fits in 48,000 characters
    mem = events[-1]["memory"]
    assert mem["dropped"] == 2 and mem["pairs"] == 3 and mem["fullness"] == 1.0


def test_edit_rewinds_and_regenerates(stub):
    stub.enqueue_chat("First [1].")
    stub.enqueue_chat("Second.")
    stub.enqueue_chat("Regenerated [1].")

    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        one, _ = await ask(q, "What makes ATP?")
        await ask(q, "And rocks?", {"session": one["session"]})
        events = []
        edited = await METHODS["editQuestion"](q, Context(emit=events.append), one["session"], 0, "What do mitochondria make?")
        return edited, events, await METHODS["chatSession"](q, Context(), one["session"])
    edited, events, session = run(go())
    assert events[0]["type"] == "citations" and edited["answer"] == "Regenerated [1]."
    assert [m["content"] for m in session["messages"]] == ["What do mitochondria make?", "Regenerated [1]."]
    assert chat_bodies(stub)[-1]["messages"][1:-1] == []  # nothing of the rewound turns reaches the model


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case,status", [("no_model", "no_chat_model"), ("not_running", "not_running"),
                                         ("missing", "model_missing")])
def test_without_a_model_the_answer_is_extractive_and_says_why(stub, case, status):
    url = f"http://127.0.0.1:{closed_port()}" if case == "not_running" else stub.url
    model = {"no_model": "", "not_running": "llama3.2:3b", "missing": "nosuch:1b"}[case]

    async def go():
        q = await engine(url, model)
        return await ask(q, "How does basalt form?")
    result, events = run(go())
    kinds = [e["type"] for e in events]
    assert kinds == ["citations", "connection", "extractive", "done"]
    conn = events[1]
    assert conn["status"] == status and conn["message"]
    if case != "no_model":
        assert conn["fix"]
    ex = events[2]
    assert ex["label"] == LABEL and ex["results"][0]["source"] == "Rocks.md"
    top = ex["results"][0]
    assert top["relevance"] == 1.0 and top["location_label"] == "Rocks"
    assert "Basalt" in [top["passage"][a:b] for a, b in top["highlights"]]
    assert result["mode"] == "extractive" and result["answer"].startswith(LABEL)


def test_error_mid_stream_keeps_the_partial_answer(stub):
    stub.enqueue_chat(["Mitochondria ", "make"], error="model runner has unexpectedly stopped")

    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        result, events = await ask(q, "What makes ATP?")
        return result, events, await METHODS["chatSession"](q, Context(), result["session"])
    result, events, session = run(go())
    assert result["answer"] == "Mitochondria make"
    err = next(e for e in events if e["type"] == "error")
    assert "model runner has unexpectedly stopped" in err["message"] and "partial answer is kept" in err["message"]
    assert session["messages"][-1]["content"] == "Mitochondria make" and "error" in session["messages"][-1]
    assert events[-1]["type"] == "done" and events[-1]["error"]


def test_stop_keeps_what_arrived(stub):
    stub.enqueue_chat(["One ", "two ", "three ", "four."], delay=0.05)

    async def go():
        q = await engine(stub.url, "llama3.2:3b")
        return await ask(q, "Count", cancel_after="content")
    result, events = run(go())
    assert result["stopped"] and result["answer"] == "One "
    assert events[-1]["type"] == "done" and events[-1]["stopped"]


def test_sessions_new_rename_scope_delete(stub):
    async def go():
        q = await engine(stub.url)
        ctx = Context()
        s = await METHODS["newChat"](q, ctx, {"sources": [source_id(q, "Biology.md")]})
        assert s["scope"] == {"sources": [{"id": source_id(q, "Biology.md"), "name": "Biology.md"}]}
        renamed = await METHODS["renameChat"](q, ctx, s["id"], "  Cells   revision ")
        scoped = await METHODS["setChatScope"](q, ctx, s["id"], {"category": "Science"})
        listed = await METHODS["chatSessions"](q, ctx)
        assert await q.store.keys("chats") == [s["id"]]
        await METHODS["deleteChat"](q, ctx, s["id"])
        with pytest.raises(ValueError, match="no chat session"):
            await METHODS["chatSession"](q, ctx, s["id"])
        with pytest.raises(ValueError, match="no source"):
            await METHODS["newChat"](q, ctx, {"sources": ["nope"]})
        return renamed, scoped, listed, await METHODS["chatSessions"](q, ctx)
    renamed, scoped, listed, after = run(go())
    assert renamed["title"] == "Cells revision" and scoped["scope"] == {"category": "Science"}
    assert [s["title"] for s in listed] == ["Cells revision"] and after == []


def test_a_requests_tools_match_their_schemas_and_ask_again_after_an_answer_that_is_no_json(stub):
    """The tools the agent gets (``ChatService.tool_impls``), each called as the agent loop
    calls it; a document tool's first answer that is not JSON is asked for once more."""
    analysis = {"summary": "About cells.", "topics": ["cells"], "entities": [],
                "key_facts": [{"fact": "Mitochondria make ATP.", "citations": [1]}]}
    comparison = {"summary": "Both are science.", "similarities": [{"point": "Both explain.", "citations": [1, 2]}],
                  "differences": [], "only_in_a": [], "only_in_b": []}
    stub.enqueue_chat("Sure! Here is the analysis you asked for.")
    stub.enqueue_chat(json.dumps(analysis))
    stub.enqueue_chat(json.dumps(comparison))

    async def go():
        q = await engine(stub.url)
        impls = chat_service.service(q).tool_impls(q.llm.client(), "qwen3:4b", None)
        listed = impls["list_documents"]()
        found = await impls["search_knowledge_base"](query="basalt", top_k=1)
        analysed = await impls["analyze_document"](document="biology.md")
        compared = await impls["compare_documents"](documents=["Biology.md", "Rocks.md"], topic="science")
        with pytest.raises(chat_service.ChatError, match="exactly two"):
            await impls["compare_documents"](documents=["Biology.md"], topic="t")
        return set(impls), listed, found, analysed, compared
    names, listed, found, analysed, compared = run(go())
    assert names <= set(TOOL_SCHEMAS) and {"search_knowledge_base", "list_documents", "analyze_document",
                                          "compare_documents"} <= names
    assert listed["count"] == 2 and [r["source"] for r in found["results"]] == ["Rocks.md"]
    assert analysed["document"] == "Biology.md" and analysed["summary"] == "About cells."
    assert compared["documents"] == ["Biology.md", "Rocks.md"] and compared["similarities"][0]["point"] == "Both explain."
    structured = [b for b in chat_bodies(stub) if b.get("format")]
    assert len(structured) == 3 and structured[0]["messages"] == structured[1]["messages"]  # asked again, same request
    assert all(b["options"]["num_predict"] > 0 for b in structured)


def test_document_tools_cite_the_library_chunk_ids(stub):
    """Passages an analysis cites carry the ids the page opens (``<source id>:<n>``), one per
    passage: not each chunk's offset inside its section, which repeats across sections."""
    analysis = {"summary": "About cells.", "topics": ["cells"], "entities": [],
                "key_facts": [{"fact": "Mitochondria make ATP.", "citations": [1, 2]}]}
    stub.enqueue_chat("", tool_calls=[{"name": "analyze_document", "arguments": {"document": "Biology.md"}}])
    stub.enqueue_chat(json.dumps(analysis))
    stub.enqueue_chat("Cells [1].")

    async def go():
        cells = "# Cells\n## Energy\nMitochondria make ATP.\n## Division\nMitosis makes two cells.\n## Membranes\nLipids."
        q = await engine(stub.url, "llama3.2:3b", docs=(("Biology", cells, "Science"),))
        _, events = await ask(q, "Summarise", {"scope": {"category": "Science"}})
        bio = next(s["id"] for s in q.sources() if s["name"] == "Biology.md")
        return events, [c["chunk_id"] for c in await q.chunks(bio)]
    events, bio_ids = run(go())
    analysed = json.loads(next(e for e in events if e["type"] == "tool_result")["result"])
    assert len(bio_ids) >= 3 and sorted(p["chunk_id"] for p in analysed["passages"]) == sorted(bio_ids)
    assert [s["chunk_id"] for s in analysed["key_facts"][0]["sources"]] == [p["chunk_id"] for p in analysed["passages"][:2]]


def test_chats_used_within_one_second_list_in_the_order_they_were_used(stub):
    # CI once found the test chat two seconds' worth of work behind: three chats made and used
    # within one second tied on a whole-second "updated" and came back in key order.
    async def go():
        q = await engine(stub.url)
        ctx = Context()
        made = [await METHODS["newChat"](q, ctx, None, f"chat {i}") for i in range(6)]
        orders = [[s["title"] for s in await METHODS["chatSessions"](q, ctx)]]
        for s in (made[2], made[0], made[4]):
            await METHODS["renameChat"](q, ctx, s["id"], s["title"] + " again")
            orders.append([t["title"] for t in await METHODS["chatSessions"](q, ctx)][:1])
        return orders
    orders = run(go())
    assert orders[0] == [f"chat {i}" for i in reversed(range(6))]
    assert orders[1:] == [["chat 2 again"], ["chat 0 again"], ["chat 4 again"]]


def slow_answers(q, monkeypatch):
    """Every answer waits for its gate (an answer that streams for minutes); the gates, in order."""
    svc = chat_service.service(q)
    original, gates = svc._without_model, []

    async def slow(turn, question, hits):
        gate = asyncio.Event()
        gates.append(gate)
        await gate.wait()
        return await original(turn, question, hits)
    monkeypatch.setattr(svc, "_without_model", slow)
    return gates


async def until(gates, n):
    while len(gates) < n:
        await asyncio.sleep(0)


def test_an_answer_saved_after_minutes_keeps_what_changed_in_the_chat_meanwhile(stub, monkeypatch):
    # The answer used to save the chat as it was loaded when the question was asked: a rename or
    # a new scope made meanwhile was undone, a deleted chat came back, and of two questions sent
    # to one chat (two tabs) one pair was lost.
    async def go():
        q = await engine(stub.url, chat_model="")
        ctx = Context()
        first, _ = await ask(q, "What makes ATP?")
        sid = first["session"]
        gates = slow_answers(q, monkeypatch)
        pending = asyncio.ensure_future(ask(q, "What does mitosis make?", {"session": sid}))
        await until(gates, 1)
        await METHODS["renameChat"](q, ctx, sid, "Cells")
        await METHODS["setChatScope"](q, ctx, sid, {"category": "Science"})
        gates[0].set()
        second, _ = await pending
        renamed = await METHODS["chatSession"](q, ctx, sid)

        a = asyncio.ensure_future(ask(q, "Where does basalt form?", {"session": sid}))
        b = asyncio.ensure_future(ask(q, "How does granite cool?", {"session": sid}))
        await until(gates, 3)
        gates[1].set()
        await a
        gates[2].set()
        await b
        both = await METHODS["chatSession"](q, ctx, sid)

        gone = asyncio.ensure_future(ask(q, "And meiosis?", {"session": sid}))
        await until(gates, 4)
        await METHODS["deleteChat"](q, ctx, sid)
        gates[3].set()
        deleted, _ = await gone
        return second, renamed, both, deleted, await METHODS["chatSessions"](q, ctx)
    second, renamed, both, deleted, listed = run(go())
    assert second["saved"] and renamed["title"] == "Cells" and renamed["scope"] == {"category": "Science"}
    assert [m["content"] for m in renamed["messages"] if m["role"] == "user"] == ["What makes ATP?", "What does mitosis make?"]
    questions = [m["content"] for m in both["messages"] if m["role"] == "user"]
    assert questions == ["What makes ATP?", "What does mitosis make?", "Where does basalt form?", "How does granite cool?"]
    assert [m["role"] for m in both["messages"]] == ["user", "assistant"] * 4
    assert deleted["saved"] is False and listed == []


def test_nothing_made_before_erase_all_is_saved_after_it(stub, monkeypatch):
    # Erase all during an answer or a study generation: the chat, or a set quoting the erased
    # passages, used to appear on the emptied library.
    from quire.services import study
    from quire.services.study import generation
    from quire.study.validate import StudyError

    async def go():
        q = await engine(stub.url, chat_model="")
        gates = slow_answers(q, monkeypatch)
        chat = asyncio.ensure_future(ask(q, "What makes ATP?"))
        await until(gates, 1)
        original, study_gate, read = generation.scope_chunks, asyncio.Event(), asyncio.Event()

        async def slow_chunks(engine, sources):  # read, then a model thinks for a minute
            chunks = await original(engine, sources)
            read.set()
            await study_gate.wait()
            return chunks
        monkeypatch.setattr(generation, "scope_chunks", slow_chunks)
        made = asyncio.ensure_future(study.METHODS["studyGenerate"](q, Context(), "mindmap", {}))
        await read.wait()
        await q.erase_all()
        gates[0].set()
        study_gate.set()
        answered, _ = await chat
        with pytest.raises(StudyError, match="erased"):
            await made
        return answered, await METHODS["chatSessions"](q, Context()), await study.METHODS["studySets"](q, Context())
    answered, chats, sets = run(go())
    assert answered["saved"] is False and chats == [] and sets == []
