"""The model server the person chose: settings, connection status, models, pulling.

The transport is injected: ``quire.browser.FetchTransport`` in the tab, a urllib one on
CPython.  Status follows ``quire.llm.diagnosis``: a browser reports every failure as
"Failed to fetch", so the probe asks twice (no-cors, then cors) and the diagnosis turns
that into one of connected / not_running / cors_refused / model_missing with the fix.
"""

from __future__ import annotations

from typing import Awaitable, Callable

from quire.llm.events import LLMError

DEFAULTS = {
    "url": "http://127.0.0.1:11434",  # Ollama's default address
    "kind": "ollama",                  # or "openai" for llama-server / LM Studio
    "chat_model": "",
    "embed_model": "",
    "temperature": 0.2,                # low: answers should stay close to the documents
    "num_ctx": 8192,                   # enough for 7 passages of ~1,000 characters and the history
}
KINDS = ("ollama", "openai")
SETTINGS_KEY = "llm"

# (url, mode) -> (reachable: bool); mode is "no-cors" or "cors".
Probe = Callable[[str, str], Awaitable[bool]]


class LLMService:
    def __init__(self, store, transport, probe: Probe | None = None, origin: str | None = None,
                 platform: str | None = None):
        self.store, self.transport, self.probe = store, transport, probe
        self.origin, self.platform = origin, platform
        self.settings = dict(DEFAULTS)

    async def load(self) -> dict:
        saved = await self.store.get("settings", SETTINGS_KEY) or {}
        self.settings = {**DEFAULTS, **{k: v for k, v in saved.items() if k in DEFAULTS}}
        return self.settings

    async def save(self, changes: dict) -> dict:
        unknown = set(changes) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}; known: {', '.join(DEFAULTS)}")
        merged = {**self.settings, **changes}
        if merged["kind"] not in KINDS:
            raise ValueError(f"server kind must be one of {', '.join(KINDS)}")
        merged["url"] = merged["url"].strip().rstrip("/")
        if not merged["url"].startswith(("http://", "https://")):
            raise ValueError("the server address must start with http:// or https://")
        merged["temperature"] = float(merged["temperature"])
        merged["num_ctx"] = int(merged["num_ctx"])
        await self.store.commit([("settings", SETTINGS_KEY, merged)])
        self.settings = merged
        return merged

    def client(self):
        # Imported here: the clients are not needed until a model server is used.
        from quire.llm.ollama import AsyncOllamaClient
        from quire.llm.openai_compat import AsyncOpenAICompatClient

        url = self.settings["url"]
        if self.settings["kind"] == "openai":
            return AsyncOpenAICompatClient(url, self.transport)
        return AsyncOllamaClient(url, self.transport)

    @property
    def chat_model(self) -> str:
        return self.settings["chat_model"]

    @property
    def embed_model(self) -> str:
        return self.settings["embed_model"]

    def options(self, **extra) -> dict:
        return {"temperature": self.settings["temperature"], "num_ctx": self.settings["num_ctx"], **extra}

    async def status(self, model: str | None = None) -> dict:
        """Connection status with the exact fix, plus version and models when connected."""
        from quire.llm.diagnosis import diagnose, same_model

        url = self.settings["url"]
        version_url = url + ("/v1/models" if self.settings["kind"] == "openai" else "/api/version")
        client = self.client()
        models: list[dict] = []
        version = None
        error = None
        try:
            version = await client.version()
            cors_ok = reachable = True
        except LLMError as exc:
            cors_ok = False
            reachable = exc.kind != "connection" or (await self.probe(version_url, "no-cors") if self.probe else False)
            if exc.kind != "connection" and exc.status != 403:
                error = exc
        if cors_ok:
            try:
                models = [m.__dict__ for m in await client.tags()]
            except LLMError as exc:
                error = exc
        model = model if model is not None else self.chat_model
        installed = [m["name"] for m in models] if cors_ok else None
        d = diagnose(self.origin, reachable=reachable, cors_ok=cors_ok, model=model or None, installed=installed,
                     error=error, base_url=url, platform=self.platform)
        return {"status": d.status, "message": d.message, "fix": d.fix, "version": version, "url": url,
                "kind": self.settings["kind"], "models": models, "settings": self.settings,
                "chat_ready": d.ok and bool(self.chat_model),
                "embed_ready": d.ok and bool(self.embed_model) and any(same_model(self.embed_model, m["name"]) for m in models)}

    async def pull(self, model: str, emit) -> dict:
        last = None
        async for p in self.client().pull(model):
            last = p
            emit({"type": "pull", **p.as_dict()})
        return {"model": model, "status": last.status if last else "success"}


async def _status(engine, ctx, model=None):
    return await engine.llm.status(model)


async def _save(engine, ctx, changes):
    settings = await engine.llm.save(changes)
    return await engine.llm.status() if settings else None


async def _pull(engine, ctx, model):
    return await engine.llm.pull(model, ctx.emit)


METHODS = {
    "llmStatus": _status,
    "llmSettings": lambda engine, ctx: engine.llm.settings,
    "saveLlmSettings": _save,
    "pullModel": _pull,
}
