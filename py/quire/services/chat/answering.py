"""Answering a question: retrieval, then the model (with tools) or, without one, the extractive answer."""

from __future__ import annotations

import asyncio
import copy

from quire.chat import memory
from quire.chat.answer import ANSWER_HITS, build_request, cited, citations_for, scope_statement
from quire.chat.extractive import FAILED_LABEL as EXTRACTIVE_FAILED
from quire.chat.extractive import LABEL as EXTRACTIVE_LABEL
from quire.chat.extractive import extractive_answer
from quire.llm import budget
from quire.llm.events import LLMError
from quire.chat.agent import run_agent

from .sessions import BUCKET, ChatError, Sessions, memory_use
from .retrieval import Retrieval
from .turn import KEPT_EVENTS, Turn, StoppableClient, cut_message, refuses_tools

MAX_STEPS = 4  # model calls per answer: up to three rounds of tools, then it must answer
UNREACHABLE = ("connection",)  # LLMError kinds meaning "no model here", answered without one
NO_TOOLS = "This model's chat template cannot call tools, so the answer comes from the passages Quire found first (no further searches or document tools)."  # noqa: E501 (one line: the page's German template matches it)


class ChatService(Sessions, Retrieval):
    """Sessions and answers for one engine (``quire.app.Quire``)."""

    def __init__(self, engine):
        self.engine = engine
        self._caps: dict[tuple[str, str], list[str]] = {}  # (url, model) -> capabilities

    async def ask(self, ctx, question: str, opts: dict | None = None) -> dict:
        opts = opts or {}
        if not str(question or "").strip():
            raise ChatError("the question is empty")
        loaded = None
        if opts.get("session"):
            session = await self.get(opts["session"])
            loaded = copy.deepcopy(session)
            if "scope" in opts:
                memory.set_scope(session, self.scope(opts["scope"]))
        else:
            session = memory.new_session(self.scope(opts.get("scope")))
        try:
            memory.add_question(session, question.strip())
        except ValueError:  # an earlier answer never arrived (tab closed): answer this instead
            memory.edit_question(session, len(session["messages"]) - 1, question.strip())
        return await self.answer(ctx, session, loaded)

    async def edit(self, ctx, session_id: str, index: int, text: str) -> dict:
        session = await self.get(session_id)
        loaded = copy.deepcopy(session)
        try:
            memory.edit_question(session, int(index), text.strip())
        except (IndexError, ValueError) as exc:
            raise ChatError(str(exc)) from None
        return await self.answer(ctx, session, loaded)

    async def answer(self, ctx, session: dict, loaded: dict | None = None) -> dict:
        """Answer the session's pending question, stream it, save it.  ``loaded``: the session
        as it was stored when this turn began (None for a new chat)."""
        turn = Turn(ctx, session)
        turn.loaded, turn.wipes = loaded, getattr(self.engine, "wipes", 0)
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
        client, model = StoppableClient(llm.client()), llm.chat_model
        request = build_request(question, hits, scope=session.get("scope"), history=memory.history(session))
        try:
            caps, context = await self._capabilities(client, model)
        except LLMError as exc:
            return await self._unreachable(turn, exc)
        offer = ("tools" in caps) if caps is not None else True
        think = True if caps is not None and "thinking" in caps else None
        if not offer:
            turn.notice("no_tools", NO_TOOLS)
        options = budget.fit(llm.options(), context, request["messages"])
        turn.limit = options["num_predict"]
        turn.mode = "llm"
        while True:
            impls = self.tool_impls(client, model, session.get("scope")) if offer else {}
            agent = run_agent(client, model, request["messages"], impls, MAX_STEPS, think=think, options=options)
            try:
                await turn.drive(agent, client)
                if turn.cut is not None and not turn.stopped:
                    turn.notice("cut", cut_message(turn.cut, turn.limit, context), tokens=turn.cut)
                return
            except LLMError as exc:
                silent = not turn.text and not turn.thinking
                if silent and (exc.kind in UNREACHABLE or exc.status in (403, 404)):
                    turn.mode = None  # nothing came: answer without the model, saying why
                    return await self._unreachable(turn, exc)
                if silent and offer and refuses_tools(exc):
                    offer = False  # a server that cannot do tools: ask again without them, saying so
                    turn.notice("no_tools", f"{NO_TOOLS} The server said: {exc.message}")
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
        failed = any(e["type"] == "error" for e in turn.events)
        if not any(e["type"] in ("connection", "error") for e in turn.events):
            status = await self.engine.llm.status()
            if status["status"] == "connected":
                status = {**status, "status": "no_chat_model", "message": "No chat model is chosen.",
                          "fix": "Choose a chat model in Settings to get written answers."}
            turn.emit({"type": "connection", "status": status["status"], "message": status["message"],
                       "fix": status["fix"]})
        index = self.engine.library.index
        result = extractive_answer(question, hits, tokenizer_for=index.tokenizer)
        if failed:  # a model is connected but failed: "no model connected" would be untrue
            result["label"] = EXTRACTIVE_FAILED
        turn.mode, turn.extractive = "extractive", result
        turn.text = extractive_text(result)
        turn.emit({"type": "extractive", **result})

    async def _finish(self, turn: "Turn", citations: list[dict]) -> dict:
        session = turn.session
        memory.add_answer(session, turn.text, citations=citations, thinking=turn.thinking,
                          events=[e for e in turn.events if e["type"] in KEPT_EVENTS])
        msg = session["messages"][-1]
        msg["mode"] = turn.mode
        if turn.extractive:
            msg["extractive"] = turn.extractive
        if turn.stopped:
            msg["stopped"] = True
        if turn.error:
            msg["error"] = turn.error
        if turn.cut is not None:
            msg["cut"] = turn.cut
        saved = await self._save_turn(turn)
        i = len(session["messages"]) - 1
        mem = memory_use(session)
        turn.emit({"type": "done", "memory": mem, "stopped": turn.stopped, "error": turn.error, "mode": turn.mode})
        if not turn.stopped and not turn.error:
            _study_action(self.engine, session, citations)
        return {"answer": turn.text, "citations": citations, "used": cited(turn.text, citations)["used"],
                "thinking": turn.thinking, "mode": turn.mode, "extractive": turn.extractive,
                "stopped": turn.stopped, "error": turn.error, "memory": mem, "events": turn.events,
                "session": session["id"], "title": session["title"], "index": i, "saved": saved}

    async def _save_turn(self, turn: "Turn") -> bool:
        """Save the turn into the chat as it is stored now, not as it was when the turn began:
        an answer can stream for minutes, and meanwhile the chat may have been renamed,
        re-scoped, answered in another tab, or deleted (then it stays deleted), or everything
        erased (then nothing of it is saved).  False: not saved."""
        session, loaded = turn.session, turn.loaded
        if getattr(self.engine, "wipes", 0) != turn.wipes:
            return False
        lock = self.__dict__.setdefault("_save_lock", asyncio.Lock())
        async with lock:
            if loaded is not None:
                fresh = await self.engine.store.get(BUCKET, session["id"])
                if not isinstance(fresh, dict):
                    return False
                if fresh.get("title") != loaded.get("title"):
                    session["title"] = fresh.get("title")
                if fresh.get("scope") != loaded.get("scope"):
                    session["scope"] = fresh.get("scope")
                if fresh.get("messages") != loaded.get("messages"):  # a question answered meanwhile
                    before = list(fresh.get("messages") or [])
                    if before and before[-1].get("role") == "user":
                        before.pop()
                    session["messages"] = before + session["messages"][-2:]
            await self.save(session)
            return True


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
