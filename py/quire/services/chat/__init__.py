"""Chat with your documents: sessions, and one streamed, cited answer per question.

``ask`` streams events through ``ctx.emit`` in this order::

    {"type": "citations", ...}        retrieval is done: the passages the answer may cite
    {"type": "thinking", "text"}      the model's reasoning, when it thinks
    {"type": "content", "text"}       answer text, piece by piece
    {"type": "tool_call" | "tool_result", ...}
    {"type": "notice", "code", "message"}  something the reader should know about this answer:
                                      ``cut`` (answer length reached), ``no_tools`` (the model's
                                      template cannot call tools, so it answered from the passages)
    {"type": "done", "memory": {...}}  how full the session's history budget is

Without a reachable chat model the answer is extractive instead: a ``connection``
event saying why and how to fix it, then ``{"type": "extractive", ...}`` with the
best passages, labelled as search results without an AI summary.

Each question builds a fresh agent (tools bound to this request's scope); the
document tools ask the model themselves with one structured call each.
Sessions live in the ``chats`` bucket, one key per session.

Layout: ``sessions`` (the store, ``ChatError``, summaries), ``answering`` (``ChatService``: a
question to a streamed answer, with or without a model), ``retrieval`` (scoped retrieval and the
agent's tools), ``turn`` (one answer in progress, Stop).  From here: ``METHODS``, ``service``
and ``ChatError``.
"""

from __future__ import annotations

from .answering import ChatService
from .sessions import ChatError, memory_use

__all__ = ["METHODS", "ChatError", "ChatService", "service"]


def service(engine) -> ChatService:
    """The engine's chat service, made on first use."""
    return engine.own("chat", lambda: ChatService(engine))


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
