"""The model-server settings: one server for chat, one for embeddings (by default the same).

Each role has a kind ("ollama" or "openai"), an address and a model; ``prefixes`` holds the
per-model embedding prefix setting (``quire.retrieval.prefixes``).  Settings stored before
embeddings had their own server (one ``url``) read as both roles on that server:

>>> migrate({"url": "http://127.0.0.1:8080", "kind": "openai", "embed_model": "e5"})["embed_url"]
'http://127.0.0.1:8080'
>>> roles(migrate({}))["embeddings"]
('ollama', 'http://127.0.0.1:11434')
"""

from __future__ import annotations

from quire.errors import InvalidInput
from quire.retrieval.prefixes import check_setting

from .loopback import parse

DEFAULT_URL = "http://127.0.0.1:11434"  # Ollama's default address
DEFAULTS = {
    "url": DEFAULT_URL,                # the chat server
    "kind": "ollama",                  # or "openai" for llama-server / LM Studio
    "chat_model": "",
    "embed_url": DEFAULT_URL,          # the embedding server; the chat server's unless set apart
    "embed_kind": "ollama",
    "embed_model": "",
    "prefixes": {},                    # embedding model -> {"mode": auto|server|custom, "query", "document"}
    "picked": {},                      # role -> the server address whose models were chosen automatically
    "temperature": 0.2,                # low: answers should stay close to the documents
    "num_ctx": 8192,                   # enough for 7 passages of ~1,000 characters and the history
    "num_predict": 1024,               # answer length in tokens: every answer is bounded (a cut one says so)
}
KINDS = ("ollama", "openai", "anthropic")  # anthropic: its own Messages API (quire.llm.anthropic)
ROLES = {"chat": ("kind", "url", "chat_model"), "embeddings": ("embed_kind", "embed_url", "embed_model")}
SERVER_FIELDS = ("url", "kind", "embed_url", "embed_kind")  # decide where data goes
# API keys, by the address field of the server each belongs to.  Never part of these settings (which a
# vault carries): ``quire.services.llm`` keeps them apart, in this browser only (``quire.browser.secrets``).
KEY_FIELDS = {"api_key": "url", "embed_api_key": "embed_url"}
KEY_MAX = 4096  # characters; real keys are 40-200
# Cloud providers Settings offers as presets, by host.  Each is reached through its documented
# OpenAI-compatible endpoint (kind "openai", ``Authorization: Bearer`` key), which streams, takes
# ``max_tokens`` and ``response_format``; the address is what the preset fills in.  A provider is
# never stored: it is read from the address, so nothing but the address (which a vault cannot set)
# decides it.
PROVIDERS = {
    "api.openai.com": ("OpenAI", "https://api.openai.com/v1"),
    "generativelanguage.googleapis.com": ("Google Gemini", "https://generativelanguage.googleapis.com/v1beta/openai"),
    "api.anthropic.com": ("Anthropic", "https://api.anthropic.com"),  # kind "anthropic": its own API
}


def provider(url: str) -> str:
    """The cloud provider at ``url`` by name, or "" for any other server.

    >>> provider("https://api.openai.com/v1"), provider("http://127.0.0.1:8080")
    ('OpenAI', '')
    """
    address = parse(str(url))
    return PROVIDERS.get(address.host, ("",))[0] if address and address.scheme == "https" else ""


def check_key(key) -> str:
    """A key as stored: visible ASCII without spaces.  The error never repeats the key.

    >>> check_key("  sk-test_1 ")
    'sk-test_1'
    """
    key = str(key).strip()
    if not key or len(key) > KEY_MAX or any(not 0x21 <= ord(c) <= 0x7E for c in key):
        raise InvalidInput("an API key is one word of letters, digits and signs (no spaces, at most "
                           f"{KEY_MAX} characters); copy it again from the provider's page")
    return key


def migrate(saved: dict | None) -> dict:
    """Stored settings (any age) in today's shape; unknown keys are dropped."""
    saved = dict(saved or {})
    saved.setdefault("embed_url", saved.get("url") or DEFAULT_URL)
    saved.setdefault("embed_kind", saved.get("kind") or DEFAULTS["kind"])
    out = {**DEFAULTS, **{k: v for k, v in saved.items() if k in DEFAULTS}}
    out["prefixes"] = _prefixes(out["prefixes"], strict=False)
    out["picked"] = {k: v for k, v in (out["picked"] if isinstance(out["picked"], dict) else {}).items()
                     if k in ROLES and isinstance(v, str)}
    return out


def roles(settings: dict) -> dict[str, tuple[str, str]]:
    """``{role: (kind, url)}`` for chat and embeddings."""
    return {role: (settings[kind], settings[url]) for role, (kind, url, _) in ROLES.items()}


def same_server(settings: dict) -> bool:
    return settings["url"] == settings["embed_url"] and settings["kind"] == settings["embed_kind"]


def check_url(url: str) -> str:
    """The address as stored, or ValueError saying how to write it.

    >>> check_url(" http://127.0.0.1:11434/ ")
    'http://127.0.0.1:11434'
    """
    url = str(url).strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise InvalidInput("the server address must start with http:// or https://")
    address = parse(url)
    if address is None:
        raise InvalidInput(f"“{url}” is not a server address a browser can use; write it like {DEFAULT_URL}")
    if address.userinfo:
        raise InvalidInput("the server address must not contain a user name or password (browsers refuse "
                           f"to send requests to such addresses); write it like {DEFAULT_URL}")
    return url


def validate(merged: dict) -> dict:
    """Settings after a change, checked; ValueError names the first problem."""
    for kind in ("kind", "embed_kind"):
        if merged[kind] not in KINDS:
            raise InvalidInput(f"server kind must be one of {', '.join(KINDS)}")
    out = dict(merged)
    out["url"], out["embed_url"] = check_url(out["url"]), check_url(out["embed_url"])
    out["temperature"] = float(out["temperature"])
    out["num_ctx"] = int(out["num_ctx"])
    out["num_predict"] = int(out["num_predict"])
    if not 16 <= out["num_predict"] <= 32768:
        raise InvalidInput("the answer length must be between 16 and 32768 tokens (1024 is a good start)")
    out["prefixes"] = _prefixes(out["prefixes"], strict=True)
    return out


def _prefixes(value, strict: bool) -> dict:
    if not isinstance(value, dict):
        if strict:
            raise InvalidInput("prefixes must map a model name to its prefix setting")
        return {}
    out = {}
    for model, setting in value.items():
        try:
            out[str(model)] = check_setting(setting)
        except ValueError:
            if strict:
                raise
    return out
