"""Chat with your documents: sessions, and one streamed, cited answer per question.

``ask`` streams events through ``ctx.emit`` in this order::

    {"type": "citations", ...}        retrieval is done: the passages the answer may cite
    {"type": "thinking", "text"}      the model's reasoning, when it thinks
    {"type": "content", "text"}       answer text, piece by piece
    {"type": "tool_call" | "tool_result", ...}
    {"type": "done", "memory": {...}}  how full the session's history budget is

Without a reachable chat model the answer is extractive instead: a ``connection``
event saying why and how to fix it, then ``{"type": "extractive", ...}`` with the
best passages, labelled as search results without an AI summary.

Each question builds a fresh agent (tools bound to this request's scope); the
document tools ask the model themselves with one structured call each.
Sessions live in the ``chats`` bucket, one key per session.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as _dt

from quire.chat import doctools, memory
from quire.chat.answer import ANSWER_HITS, build_request, cited, citations_for, scope_statement, search_scope
from quire.chat.extractive import LABEL as EXTRACTIVE_LABEL
from quire.chat.extractive import extractive_answer
from quire.llm.events import Content, LLMError, Thinking, ToolCalls
from quire.tools import BUILTIN_IMPLS, AgentDone, ToolResult, run_agent

BUCKET = "chats"
MAX_STEPS = 4  # model calls per answer: up to three rounds of tools, then it must answer
CANCEL_POLL = 0.1  # seconds between looks at the Stop button while the model is silent
UNREACHABLE = ("connection",)  # LLMError kinds meaning "no model here", answered without one

class ChatError(ValueError):
    """A request about chats that cannot be done (unknown session, empty question)."""


def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


# --- sessions in the store -------------------------------------------------------------
class ChatService:
    """Sessions and answers for one engine (``quire.app.Quire``)."""

    def __init__(self, engine):
        self.engine = engine
        self._caps: dict[tuple[str, str], list[str]] = {}  # (url, model) -> capabilities

    async def sessions(self) -> list[dict]:
        """Summaries, most recently used first."""
        stored = await self.engine.store.all(BUCKET)
        out = [summary(s) for s in stored.values() if isinstance(s, dict)]
        return sorted(out, key=lambda s: (s["updated"], s["created"]), reverse=True)

    async def get(self, session_id: str) -> dict:
        data = await self.engine.store.get(BUCKET, session_id) if session_id else None
        if data is None:
            raise ChatError(f"no chat session {session_id!r}; it may have been deleted")
        return memory.validate_session(data)

    async def save(self, session: dict) -> dict:
        session["updated"] = _now()
        await self.engine.store.commit([(BUCKET, session["id"], session)])
        return session

    async def new(self, scope=None, title: str = "") -> dict:
        session = memory.new_session(self.scope(scope), title=title or "")
        return await self.save(session)

    async def rename(self, session_id: str, title: str) -> dict:
        return summary(await self.save(memory.rename(await self.get(session_id), title)))

    async def delete(self, session_id: str) -> bool:
        await self.get(session_id)
        await self.engine.store.commit(deletes=[(BUCKET, session_id)])
        return True

    async def set_scope(self, session_id: str, scope) -> dict:
        return summary(await self.save(memory.set_scope(await self.get(session_id), self.scope(scope))))

    def scope(self, scope) -> dict | None:
        """The page's scope -> the stored one: ``None``, ``{"category"}`` or
        ``{"sources": [{"id", "name"}]}`` (ids may come alone; names are looked up)."""
        if not scope:
            return None
        if not isinstance(scope, dict):
            raise ChatError("a chat scope is null, {category: ...} or {sources: [...]}")
        if scope.get("category"):
            return {"category": str(scope["category"])}
        names = {s["id"]: s["name"] for s in self.engine.sources()}
        sources = []
        for item in scope.get("sources") or []:
            sid = item.get("id") if isinstance(item, dict) else str(item)
            if sid not in names:
                raise ChatError(f"no source with id {sid!r} to pin this chat to")
            sources.append({"id": sid, "name": names[sid]})
        return {"sources": sources} if sources else None

    # --- answering ---------------------------------------------------------------------
    async def ask(self, ctx, question: str, opts: dict | None = None) -> dict:
        opts = opts or {}
        if not str(question or "").strip():
            raise ChatError("the question is empty")
        if opts.get("session"):
            session = await self.get(opts["session"])
            if "scope" in opts:
                memory.set_scope(session, self.scope(opts["scope"]))
        else:
            session = memory.new_session(self.scope(opts.get("scope")))
        try:
            memory.add_question(session, question.strip())
        except ValueError:  # an earlier answer never arrived (tab closed): answer this instead
            memory.edit_question(session, len(session["messages"]) - 1, question.strip())
        return await self.answer(ctx, session)

    async def edit(self, ctx, session_id: str, index: int, text: str) -> dict:
        session = await self.get(session_id)
        try:
            memory.edit_question(session, int(index), text.strip())
        except (IndexError, ValueError) as exc:
            raise ChatError(str(exc)) from None
        return await self.answer(ctx, session)

    async def answer(self, ctx, session: dict) -> dict:
        """Answer the session's pending question, stream it, save it."""
        turn = Turn(ctx, session)
        question = memory.pending_question(session)
        scope = session.get("scope")
        hits = await self._search(question, ANSWER_HITS, scope)
        citations = citations_for(hits)
        turn.emit({"type": "citations", "session": session["id"], "title": session["title"],
                   "scope": scope, "scope_text": scope_statement(scope), "citations": citations})
        if turn.cancelled():
            turn.stopped = True
        elif self.engine.llm.chat_model:
            await self._with_model(turn, question, hits, citations)
        if not turn.stopped and turn.mode != "llm":
            await self._without_model(turn, question, hits)
        return await self._finish(turn, citations)

    async def _with_model(self, turn: "Turn", question: str, hits: list[dict], citations: list[dict]) -> None:
        llm, session = self.engine.llm, turn.session
        client, model = _StoppableClient(llm.client()), llm.chat_model
        request = build_request(question, hits, scope=session.get("scope"), history=memory.history(session))
        try:
            caps = await self._capabilities(client, model)
        except LLMError as exc:
            return await self._unreachable(turn, exc)
        offer = ("tools" in caps) if caps is not None else True
        think = True if caps is not None and "thinking" in caps else None
        turn.mode = "llm"
        while True:
            impls = self.tool_impls(client, model, session.get("scope")) if offer else {}
            agent = run_agent(client, model, request["messages"], impls, MAX_STEPS, think=think,
                                    options=llm.options())
            try:
                await turn.drive(agent, client)
                return
            except LLMError as exc:
                silent = not turn.text and not turn.thinking
                if silent and (exc.kind in UNREACHABLE or exc.status in (403, 404)):
                    turn.mode = None  # nothing came: answer without the model, saying why
                    return await self._unreachable(turn, exc)
                if silent and offer and exc.status == 400 and "tool" in exc.message:
                    offer = False  # a server that cannot do tools: ask again without them
                    continue
                turn.fail(exc)
                if silent:
                    turn.mode = None  # nothing to keep: the passages are still worth showing
                return

    async def _unreachable(self, turn: "Turn", exc: LLMError) -> None:
        status = await self.engine.llm.status()
        turn.emit({"type": "connection", "status": status["status"], "message": status["message"],
                   "fix": status["fix"], "error": exc.message})

    async def _without_model(self, turn: "Turn", question: str, hits: list[dict]) -> None:
        if not any(e["type"] in ("connection", "error") for e in turn.events):
            status = await self.engine.llm.status()
            if status["status"] == "connected":
                status = {**status, "status": "no_chat_model", "message": "No chat model is chosen.",
                          "fix": "Choose a chat model in Settings to get written answers."}
            turn.emit({"type": "connection", "status": status["status"], "message": status["message"],
                       "fix": status["fix"]})
        index = self.engine.library.index
        result = extractive_answer(question, hits, tokenizer_for=index.tokenizer)
        turn.mode, turn.extractive = "extractive", result
        turn.text = extractive_text(result)
        turn.emit({"type": "extractive", **result})

    async def _finish(self, turn: "Turn", citations: list[dict]) -> dict:
        session = turn.session
        i = memory.add_answer(session, turn.text, citations=citations, thinking=turn.thinking,
                              events=[e for e in turn.events if e["type"] in _KEPT_EVENTS])
        msg = session["messages"][i]
        msg["mode"] = turn.mode
        if turn.extractive:
            msg["extractive"] = turn.extractive
        if turn.stopped:
            msg["stopped"] = True
        if turn.error:
            msg["error"] = turn.error
        await self.save(session)
        mem = memory_use(session)
        turn.emit({"type": "done", "memory": mem, "stopped": turn.stopped, "error": turn.error, "mode": turn.mode})
        if not turn.stopped and not turn.error:
            _study_action(self.engine, session, citations)
        return {"answer": turn.text, "citations": citations, "used": cited(turn.text, citations)["used"],
                "thinking": turn.thinking, "mode": turn.mode, "extractive": turn.extractive,
                "stopped": turn.stopped, "error": turn.error, "memory": mem, "events": turn.events,
                "session": session["id"], "title": session["title"], "index": i}

    # --- retrieval and tools -------------------------------------------------------------
    async def _search(self, query: str, k: int, scope, document_id: str | None = None) -> list[dict]:
        where = search_scope(scope)
        if document_id:
            if where is not None and not self._in_scope(document_id, scope):
                raise ValueError("that document is outside this chat's scope")
            where = [document_id]
        hits = await self.engine.search(query, k=k, scope=where)
        for hit in hits:
            try:
                hit["language"] = self.engine.library.source(hit["source_id"]).get("language") or "en"
            except Exception:  # a source removed since: keep the default tokenizer
                hit["language"] = "en"
        return hits

    def _in_scope(self, source_id: str, scope) -> bool:
        if not scope:
            return True
        if scope.get("category"):
            return any(s["id"] == source_id and s.get("category") == scope["category"] for s in self.engine.sources())
        return source_id in search_scope(scope)

    def library_view(self, scope) -> list[dict]:
        """The trained sources a tool may see: only those inside the chat's scope."""
        return [s for s in self.engine.sources() if s.get("status") == "trained" and self._in_scope(s["id"], scope)]

    async def _capabilities(self, client, model: str) -> list[str] | None:
        """What the model can do (Ollama's /api/show), or None when the server cannot say."""
        if self.engine.llm.settings["kind"] != "ollama":
            return None
        key = (self.engine.llm.settings["url"], model)
        if key not in self._caps:
            self._caps[key] = list((await client.show(model)).get("capabilities") or ["completion"])
        return self._caps[key]

    def tool_impls(self, client, model: str, scope) -> dict:
        """This request's tools, bound to its scope; document tools call the model directly."""
        view = self.library_view(scope)
        options = self.engine.llm.options()

        async def ask_model(prompt: str, schema: dict) -> str:
            stream = client.chat(model, [{"role": "user", "content": prompt}], format=schema, stream=False,
                                 options=options)
            return (await stream.collect()).text

        async def search(query: str, top_k: int = doctools.SEARCH_K, document: str | None = None):
            doc_id = doctools.find_document(view, document)["id"] if document else None
            k = max(1, min(int(top_k), doctools.MAX_SEARCH_K))
            hits = await self._search(query, k, scope, doc_id)
            return doctools.search_knowledge_base(lambda *_: hits, query, k, doc_id)

        async def analyze(document: str, aspect: str = "summary", question: str = ""):
            doc = doctools.find_document(view, document)
            chunks = await self.engine.library.chunks_of(doc["id"])
            return await replay(lambda call: doctools.analyze_document(
                chunks, call, document=doctools.doc_name(doc), aspect=aspect, question=question), ask_model)

        async def compare(documents: list, topic: str):
            if not isinstance(documents, list) or len(documents) != 2:
                raise ValueError("compare_documents compares exactly two documents at a time")
            a, b = (doctools.find_document(view, d) for d in documents)
            chunks_a, chunks_b = await self.engine.library.chunks_of(a["id"]), await self.engine.library.chunks_of(b["id"])
            return await replay(lambda call: doctools.compare_documents(
                topic, chunks_a, chunks_b, call, names=(doctools.doc_name(a), doctools.doc_name(b))), ask_model)

        return {"search_knowledge_base": search, "list_documents": lambda: doctools.list_documents(view),
                "analyze_document": analyze, "compare_documents": compare, **BUILTIN_IMPLS}


class _Pending(Exception):
    def __init__(self, prompt: str, schema: dict):
        self.prompt, self.schema = prompt, schema


async def replay(run, ask_model):
    """Run a pure tool whose ``llm_call`` is synchronous against an async model.

    ``run(llm_call)`` is re-run from the start after each answer arrives, with
    the answers so far replayed in order; pure functions make that safe, and
    it keeps ``chat.doctools`` free of async.
    """
    answers: dict[str, list[str]] = {}
    while True:
        asked: collections.Counter = collections.Counter()

        def llm_call(prompt: str, schema: dict) -> str:
            n = asked[prompt]
            asked[prompt] += 1
            got = answers.get(prompt, [])
            if n < len(got):
                return got[n]
            raise _Pending(prompt, schema)

        try:
            return run(llm_call)
        except _Pending as need:
            answers.setdefault(need.prompt, []).append(await ask_model(need.prompt, need.schema))


# --- one answer in progress -------------------------------------------------------------
_KEPT_EVENTS = ("tool_call", "tool_result", "error", "connection")


class Turn:
    """What one answer has streamed so far; survives Stop and errors."""

    def __init__(self, ctx, session: dict):
        self.ctx, self.session = ctx, session
        self.events: list[dict] = []
        self.text = self.thinking = ""
        self.mode: str | None = None  # "llm" or "extractive"
        self.extractive: dict | None = None
        self.stopped, self.error = False, None

    def emit(self, event: dict) -> None:
        self.events.append(event)
        self.ctx.emit(event)

    def cancelled(self) -> bool:
        return bool(self.ctx.cancelled())

    def fail(self, exc: LLMError) -> None:
        what = "The model server stopped in the middle of the answer" if self.text else "The model server failed"
        self.error = f"{what}: {exc.message}." + (" The partial answer is kept." if self.text else "")
        self.emit({"type": "error", "message": self.error, "kind": exc.kind, "status": exc.status})

    def on(self, event) -> None:
        if isinstance(event, Thinking):
            self.thinking += event.text
            self.emit({"type": "thinking", "text": event.text})
        elif isinstance(event, Content):
            self.text += event.text
            self.emit({"type": "content", "text": event.text})
        elif isinstance(event, ToolCalls):
            for call in event.calls:
                self.emit({"type": "tool_call", "name": call.name, "arguments": call.arguments})
        elif isinstance(event, ToolResult):
            self.emit({"type": "tool_result", "name": event.name, "arguments": event.arguments,
                       "result": event.result, "ok": event.ok})

    async def drive(self, agent, client: "_StoppableClient") -> None:
        """Pass the agent's events on until it is done or Stop is pressed.

        The model may be silent for a long time (loading, thinking), so Stop is
        watched on a timer, not only between events; stopping drops the connection.
        """
        try:
            while True:
                step = asyncio.ensure_future(agent.__anext__())
                while not step.done():
                    await asyncio.wait({step}, timeout=CANCEL_POLL)
                    if not step.done() and self.cancelled():
                        step.cancel()
                        self.stopped = True
                        try:
                            await step
                        except (asyncio.CancelledError, Exception):
                            pass
                        return
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                if isinstance(event, AgentDone):
                    return
                self.on(event)
                if self.cancelled():
                    self.stopped = True
                    return
        finally:
            await client.close()
            try:
                await agent.aclose()
            except (RuntimeError, asyncio.CancelledError):
                pass


class _StoppableClient:
    """A chat client that remembers its open streams so Stop can close them."""

    def __init__(self, client):
        self._client, self._streams = client, []

    def __getattr__(self, name):
        return getattr(self._client, name)

    def chat(self, *args, **kwargs):
        stream = self._client.chat(*args, **kwargs)
        self._streams.append(stream)
        return stream

    async def close(self) -> None:
        for stream in self._streams:
            try:
                await stream.close()
            except (RuntimeError, ValueError, LLMError):
                pass  # already finished, or closing while running: the reply is over either way
        self._streams.clear()


# --- helpers -----------------------------------------------------------------------------
def memory_use(session: dict) -> dict:
    """How full the session's history budget is, for the meter."""
    used = sum(len(m.get("content") or "") for pair in memory.pairs(session) for m in pair)
    return {"used": used, "budget": memory.HISTORY_BUDGET, "fullness": memory.fullness(session),
            "dropped": memory.dropped_pairs(session), "pairs": len(memory.pairs(session))}


def summary(session: dict) -> dict:
    return {"id": session["id"], "title": session["title"], "created": session["created"],
            "updated": session.get("updated") or session["created"], "scope": session.get("scope"),
            "questions": sum(1 for m in session["messages"] if m["role"] == "user"),
            "memory": memory_use(session)}


def extractive_text(result: dict) -> str:
    """The extractive answer as plain text (what later turns of the chat remember)."""
    if not result["results"]:
        return f"{EXTRACTIVE_LABEL}. {result['message']}"
    lines = [f"{EXTRACTIVE_LABEL}:"]
    for r in result["results"]:
        where = ", ".join(x for x in (r["source"], r["location_label"]) if x)
        lines.append(f"[{r['n']}] {where}: {r['snippet']['text'] or r['passage'][:200]}")
    return "\n".join(lines)


def _study_action(engine, session: dict, citations: list[dict]) -> None:
    """A question answered: tell the engine's event bus (progress counts it; failures are logged there)."""
    scope = session.get("scope")
    engine.events.emit({"kind": "chat", "scoped": bool(scope),
                        "sources": list(dict.fromkeys(c["source_id"] for c in citations))})


def service(engine) -> ChatService:
    """The engine's chat service, made on first use."""
    svc = engine.__dict__.get("_chat_service")
    if svc is None:
        svc = engine.__dict__["_chat_service"] = ChatService(engine)
    return svc


async def _session(engine, ctx, session_id):
    session = await service(engine).get(session_id)
    return {**session, "memory": memory_use(session)}


METHODS = {
    "chatSessions": lambda engine, ctx: service(engine).sessions(),
    "chatSession": _session,
    "newChat": lambda engine, ctx, scope=None, title="": service(engine).new(scope, title),
    "renameChat": lambda engine, ctx, session_id, title: service(engine).rename(session_id, title),
    "deleteChat": lambda engine, ctx, session_id: service(engine).delete(session_id),
    "setChatScope": lambda engine, ctx, session_id, scope: service(engine).set_scope(session_id, scope),
    "ask": lambda engine, ctx, question, opts=None: service(engine).ask(ctx, question, opts),
    "editQuestion": lambda engine, ctx, session_id, index, text: service(engine).edit(ctx, session_id, index, text),
}
