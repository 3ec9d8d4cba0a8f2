"""Chat sessions in the store: one key per session in the ``chats`` bucket, and their summaries."""

from __future__ import annotations

import datetime as _dt

from quire.chat import memory
from quire.errors import QuireError

BUCKET = "chats"


class ChatError(QuireError, ValueError):
    """A request about chats that cannot be done (unknown session, empty question)."""


def _now() -> str:
    # Microseconds: two chats saved within one second must still list in the order they were used
    # (with whole seconds they tied and came back in key order). Older whole-second stamps still
    # compare correctly: "…:25+01:00" sorts before "…:25.000001+01:00".
    return _dt.datetime.now().astimezone().isoformat(timespec="microseconds")


class Sessions:
    """Listing, opening, saving, renaming, deleting and scoping an engine's chats (``ChatService``'s half
    that never asks a model)."""

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
