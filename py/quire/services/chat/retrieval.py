"""What a question may use: retrieval inside the chat's scope, the model's capabilities, and the
agent's tools bound to one request (the document tools' requests go to the chat's model
through ``quire.llm.ask.drive``)."""

from __future__ import annotations

from quire.chat import doctools
from quire.chat.answer import search_scope
from quire.llm.ask import Ask, drive
from quire.chat.agent import BUILTIN_IMPLS

from .sessions import ChatError


class Retrieval:
    """``ChatService``'s searching and tools; needs ``self.engine`` and ``self._caps``."""

    async def _search(self, query: str, k: int, scope, document_id: str | None = None) -> list[dict]:
        where = search_scope(scope)
        if document_id:
            if where is not None and not self._in_scope(document_id, scope):
                raise ChatError("that document is outside this chat's scope")
            where = [document_id]
        hits = await self.engine.search(query, k=k, scope=where)
        for hit in hits:
            source = self.engine.library.table.get(hit["source_id"])  # None: removed since
            hit["language"] = (source or {}).get("language") or "en"
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

    async def _capabilities(self, client, model: str) -> tuple[list[str] | None, int | None]:
        """What the model can do and its context size, as the server reports them: Ollama's
        /api/show (capabilities cached), llama-server's /props (asked each time: a restart with
        another template changes it).  ``None`` where the server cannot say."""
        settings = self.engine.llm.settings
        if settings["kind"] != "ollama":
            props = await client.props()
            caps = None if props["tools"] is None else ["completion"] + (["tools"] if props["tools"] else [])
            return caps, props["context_length"]
        key = (settings["url"], model)
        if key not in self._caps:
            self._caps[key] = list((await client.show(model)).get("capabilities") or ["completion"])
        return self._caps[key], None

    def tool_impls(self, client, model: str, scope) -> dict:
        """This request's tools, bound to its scope; document tools call the model directly."""
        view = self.library_view(scope)
        options = self.engine.llm.options()

        async def ask_model(ask: Ask) -> str:
            stream = client.chat(model, [{"role": "user", "content": ask.prompt}], format=ask.schema, stream=False,
                                 options={**options, "num_predict": ask.max_tokens})
            return (await stream.collect()).text

        async def search(query: str, top_k: int = doctools.SEARCH_K, document: str | None = None):
            doc_id = doctools.find_document(view, document)["id"] if document else None
            try:
                k = max(1, min(int(top_k), doctools.MAX_SEARCH_K))
            except (TypeError, ValueError):
                raise ChatError(f"top_k must be a whole number from 1 to {doctools.MAX_SEARCH_K}") from None
            hits = await self._search(query, k, scope, doc_id)
            return doctools.search_knowledge_base(lambda *_: hits, query, k, doc_id)

        async def analyze(document: str, aspect: str = "summary", question: str = ""):
            doc = doctools.find_document(view, document)
            chunks = await self.engine.library.chunks_of(doc["id"])
            return await drive(doctools.analyze_document(
                chunks, document=doctools.doc_name(doc), aspect=aspect, question=question), ask_model)

        async def compare(documents: list, topic: str):
            if not isinstance(documents, list) or len(documents) != 2:
                raise ChatError("compare_documents compares exactly two documents at a time")
            a, b = (doctools.find_document(view, d) for d in documents)
            chunks_a, chunks_b = await self.engine.library.chunks_of(a["id"]), await self.engine.library.chunks_of(b["id"])
            return await drive(doctools.compare_documents(
                topic, chunks_a, chunks_b, names=(doctools.doc_name(a), doctools.doc_name(b))), ask_model)

        return {"search_knowledge_base": search, "list_documents": lambda: doctools.list_documents(view),
                "analyze_document": analyze, "compare_documents": compare, **BUILTIN_IMPLS}
