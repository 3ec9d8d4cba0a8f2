"""The model server the person chose: settings, connection status, models, pulling.

The transport is injected: ``quire.browser.FetchTransport`` in the tab, a urllib one on
CPython.  Status follows ``quire.llm.diagnosis``: a browser reports every failure as
"Failed to fetch", so the probe asks twice (no-cors, then cors) and the diagnosis turns
that into one of connected / not_running / cors_refused / model_missing with the fix.

Privacy: a server on this computer (``quire.llm.loopback``) is used as stored; any other
address is used only after the person confirmed it in this tab (``confirm``), because
anything in the browser's storage may have been written by someone else (on file:// every
local page shares it).  Until then every request to it is refused before it is made, and
the status is ``unconfirmed`` with the host named:

>>> svc = LLMService(store=None, transport=None)
>>> svc.settings["url"] = "http://evil.invalid:11434"
>>> svc.allows(svc.settings["url"]), svc.confirm(["http://evil.invalid:11434"]), svc.allows(svc.settings["url"])
(False, ['http://evil.invalid:11434'], True)
"""

from __future__ import annotations

from typing import Awaitable, Callable

from quire.llm.events import LLMError
from quire.llm.loopback import parse

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


class Unconfirmed(LLMError):
    """A request to a server on another computer that the person has not confirmed in this tab.

    Nothing was sent.  Its kind is ``connection`` so every caller treats it as "no model
    here" and answers without one; ``LLMService.status`` then names the host and the fix."""

    def __init__(self, origin: str):
        super().__init__(f"Quire did not contact {origin}: that server is on another computer and you have "
                         "not confirmed it in this tab.", kind="connection")
        self.origin = origin


class _Guarded:
    """The transport every client gets: a request goes out only if ``allows(url)``."""

    def __init__(self, transport, service: "LLMService"):
        self.transport, self.service = transport, service

    async def request(self, method, url, body=None, stream=False):
        self.service.check(url)
        return await self.transport.request(method, url, body, stream)


class LLMService:
    def __init__(self, store, transport, probe: Probe | None = None, origin: str | None = None,
                 platform: str | None = None):
        self.store, self.transport, self._probe = store, _Guarded(transport, self), probe
        self.origin, self.platform = origin, platform
        self.settings = dict(DEFAULTS)
        # Origins of non-loopback servers the person confirmed in this tab.  Only in memory:
        # a confirmation kept in storage could be forged by whoever can write that storage.
        self.confirmed: set[str] = set()

    # -- privacy: which servers may be contacted ------------------------------
    def allows(self, url: str) -> bool:
        address = parse(url)
        return bool(address) and (address.loopback or address.origin in self.confirmed)

    def check(self, url: str) -> None:
        """Raise ``Unconfirmed`` (before anything is sent) unless ``url`` may be contacted."""
        if not self.allows(url):
            address = parse(url)
            raise Unconfirmed(address.origin if address else url)

    def confirm(self, origins) -> list[str]:
        """The person confirmed these servers in this tab (the page passes what it showed them)."""
        for origin in origins or ():
            address = parse(origin) if isinstance(origin, str) else None
            if address is None or address.origin != origin:
                raise ValueError(f"{origin!r} is not a server origin (scheme, host and port, such as http://127.0.0.1:11434)")
            if not address.loopback:
                self.confirmed.add(origin)
        return sorted(self.confirmed)

    async def probe(self, url: str, mode: str) -> bool:
        return self.allows(url) and bool(self._probe) and await self._probe(url, mode)

    async def load(self) -> dict:
        saved = await self.store.get("settings", SETTINGS_KEY) or {}
        self.settings = {**DEFAULTS, **{k: v for k, v in saved.items() if k in DEFAULTS}}
        return self.settings

    async def save(self, changes: dict, confirm: str | None = None) -> dict:
        """Store the settings.  A server on another computer needs ``confirm`` set to its
        origin (Settings asks the person, naming the host) unless it is confirmed already."""
        unknown = set(changes) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"unknown settings {sorted(unknown)}; known: {', '.join(DEFAULTS)}")
        merged = {**self.settings, **changes}
        if merged["kind"] not in KINDS:
            raise ValueError(f"server kind must be one of {', '.join(KINDS)}")
        merged["url"] = merged["url"].strip().rstrip("/")
        if not merged["url"].startswith(("http://", "https://")):
            raise ValueError("the server address must start with http:// or https://")
        address = parse(merged["url"])
        if address is None:
            raise ValueError(f"“{merged['url']}” is not a server address a browser can use; "
                             "write it like http://127.0.0.1:11434")
        if address.userinfo:
            raise ValueError("the server address must not contain a user name or password (browsers refuse "
                             "to send requests to such addresses); write it like http://127.0.0.1:11434")
        if not self.allows(merged["url"]):
            if confirm != address.origin:
                raise ValueError(f"Questions and passages would be sent to {address.origin}, which is not this "
                                 "computer. Confirm that you want to send them there (Settings asks you to), "
                                 f"or use this computer's server {DEFAULTS['url']}.")
            self.confirmed.add(address.origin)
        merged["temperature"] = float(merged["temperature"])
        merged["num_ctx"] = int(merged["num_ctx"])
        await self.store.commit([("settings", SETTINGS_KEY, merged)])
        self.settings = merged
        return merged

    def client(self):
        # Imported here: the clients are not needed until a model server is used.
        from quire.llm.ollama import OllamaClient
        from quire.llm.openai_compat import OpenAICompatClient

        url = self.settings["url"]
        if self.settings["kind"] == "openai":
            return OpenAICompatClient(url, self.transport)
        return OllamaClient(url, self.transport)

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
        if not self.allows(url):
            return self.unconfirmed_status()
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
            reachable = exc.kind != "connection" or await self.probe(version_url, "no-cors")
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

    def unconfirmed_status(self) -> dict:
        url = self.settings["url"]
        address = parse(url)
        where = address.origin if address else url
        return {"status": "unconfirmed",
                "message": f"Quire is set to send your questions and passages to {where}, which is not this "
                           "computer. Nothing has been sent there: it needs your confirmation in this tab first.",
                "fix": "Open Settings and choose “Use this server” if you trust it, or “Switch back to this "
                       f"computer's server” ({DEFAULTS['url']}). Until then Quire answers from your documents "
                       "without a model.",
                "version": None, "url": url, "origin": where, "kind": self.settings["kind"], "models": [],
                "settings": self.settings, "chat_ready": False, "embed_ready": False}

    async def pull(self, model: str, emit) -> dict:
        last = None
        async for p in self.client().pull(model):
            last = p
            emit({"type": "pull", **p.as_dict()})
        return {"model": model, "status": last.status if last else "success"}


async def _status(engine, ctx, model=None):
    return await engine.llm.status(model)


async def _save(engine, ctx, changes, confirm=None):
    settings = await engine.llm.save(changes, confirm)
    return await engine.llm.status() if settings else None


async def _pull(engine, ctx, model):
    return await engine.llm.pull(model, ctx.emit)


METHODS = {
    "llmStatus": _status,
    "llmSettings": lambda engine, ctx: engine.llm.settings,
    "saveLlmSettings": _save,
    "pullModel": _pull,
    "llmConfirm": lambda engine, ctx, origins: engine.llm.confirm(origins),
}
