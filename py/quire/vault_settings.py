"""Which settings a vault may bring: preferences yes, where data goes never.

A vault is data, never configuration.  Its checksums are plain sha256, so anyone
can make one; if importing it could set the model-server address (or switch on
adding web pages by address), every passage and question would from then on be
sent to a stranger's host.  So an import keeps the person's own model server,
server kind and network switches, whatever the vault says, and reports what it
ignored with the host named.  Only settings listed here are imported at all;
anything else in a vault's ``settings`` is ignored (and said so), because an
unknown key might be tomorrow's network switch.

>>> ours = {"llm": {"url": "http://127.0.0.1:11434", "kind": "ollama", "chat_model": "mine"}}
>>> theirs = {"llm": {"url": "http://evil.invalid:8080", "kind": "openai", "chat_model": "x"}, "theme": "dark"}
>>> kept, ignored = engine_settings(theirs, ours, "replace")
>>> kept["llm"]
{'url': 'http://127.0.0.1:11434', 'kind': 'ollama', 'chat_model': 'mine'}
>>> ignored[0]
'The vault named the model server http://evil.invalid:8080; your own setting (http://127.0.0.1:11434) was kept.'
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlsplit

from quire.llm.settings import SERVER_FIELDS, migrate  # SERVER_FIELDS decide where data goes: never from a vault
from quire.services.llm import DEFAULTS as LLM_DEFAULTS, SETTINGS_KEY as LLM_KEY
MODEL_FIELDS = {  # taken only when the vault's server is the person's own server
    "chat_model": str, "embed_model": str, "temperature": (int, float), "num_ctx": int,
    "prefixes": dict, "picked": dict,  # checked by migrate(): a bad entry is dropped
}
LIBRARY_FIELDS = {"keep_originals": bool, "ocr_language": str}  # settings["library"]
PROMPTS_KEY = "prompt_overrides"  # {template name: text}; text cannot send data anywhere
# Entries of the settings bucket that record this browser's state, not a preference: never
# imported, and not worth a message (every vault exported in a browser has them).
STATE_KEYS = {"library_generation"}  # quire.browser.idb: changes with every library write
MAX_FILE_MB = (1, 2000)  # the Settings page's own bounds for quire.maxFileMB

# The page's own settings (localStorage), carried as one entry of the settings bucket.
PAGE_SETTINGS = "page.localStorage"
PAGE_SERVER = "quire.llm.url"  # csp.js opens connect-src to this origin (the chat server)
PAGE_EMBED_SERVER = "quire.llm.embed_url"  # ... and to this one (the embedding server)
PAGE_URL_FETCH = "quire.allowUrlFetch"  # '1' opens connect-src to every http(s) host
PAGE_EMBED_TAB = "quire.embed.tab"  # 'off': meaning-based search chose "None (keywords only)" (api.js embedInTab)


def _origin(url: Any) -> str:
    """``http://host.invalid:8080/v1/ -> http://host.invalid:8080``; what the CSP would allow."""
    parts = urlsplit(str(url).strip())
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else str(url).strip()


def _server(llm: Mapping) -> tuple[str, ...]:
    """(chat url, chat kind, embedding url, embedding kind); settings from before the embedding
    server had its own address name one server for both."""
    full = migrate({k: v for k, v in llm.items() if k in SERVER_FIELDS and v})
    return tuple(str(full[k]).strip().rstrip("/") for k in SERVER_FIELDS)


def _typed(value: Mapping, fields: Mapping[str, type | tuple]) -> dict:
    """The entries of ``value`` named in ``fields`` with the right type (``True`` is no number here)."""
    out = {}
    for key, kind in fields.items():
        v = value.get(key)
        if isinstance(v, kind) and (kind is bool or not isinstance(v, bool)):
            out[key] = v
    return out


def _llm(theirs: Any, ours: Mapping | None, ignored: list[str]) -> dict | None:
    """Our llm settings, with the vault's model choice only if it names our own server."""
    if not isinstance(theirs, Mapping):
        return None
    mine = dict(ours or {})
    their, my = _server(theirs), _server(mine)
    if their != my:
        for url, kind, what in ((0, 1, "model server"), (2, 3, "embedding server")):
            if their[url] != my[url]:
                ignored.append(f"The vault named the {what} {their[url]}; your own setting ({my[url]}) was kept.")
            elif their[kind] != my[kind]:
                ignored.append(f"The vault named the server kind {their[kind]!r} for {their[url]}; "
                               f"your own setting ({my[kind]!r}) was kept.")
        models = [theirs.get(k) for k in ("chat_model", "embed_model") if theirs.get(k)]
        if models:
            ignored.append(f"The vault's model choice ({', '.join(map(str, models))}) belongs to that server; "
                           "your own models were kept.")
        return None
    same = dict(zip(SERVER_FIELDS, my))  # equal to the vault's: writing them changes nothing
    return migrate({**mine, **{k: same[k] for k in SERVER_FIELDS if k in theirs}, **_typed(theirs, MODEL_FIELDS)})


def engine_settings(theirs: Mapping[str, Any], ours: Mapping[str, Any], mode: str) -> tuple[dict, list[str]]:
    """``(settings to write, messages)`` for the ``settings`` bucket.

    ``merge``: keys we already have stay ours.  ``replace``: the vault's safe
    settings win.  In both, server fields and unknown keys are never imported,
    and nothing of ours that a vault may not set is ever deleted."""
    ignored: list[str] = []
    out = {k: v for k, v in ours.items()}
    for key, value in sorted(theirs.items()):
        if key == PAGE_SETTINGS or key in STATE_KEYS:
            continue  # the page's settings: see page_settings(); state keys stay this browser's
        if mode == "merge" and key in ours:
            if key == LLM_KEY and isinstance(value, Mapping) and _server(value) != _server(ours[key] or {}):
                _llm(value, ours[key], ignored)  # only to say that the vault's server was not used
            continue
        if key == LLM_KEY:
            llm = _llm(value, ours.get(LLM_KEY), ignored)
            if llm is not None:
                out[LLM_KEY] = llm
        elif key == "library" and isinstance(value, Mapping):
            out[key] = {**(ours.get(key) or {}), **_typed(value, LIBRARY_FIELDS)}
        elif key == PROMPTS_KEY and isinstance(value, Mapping):
            out[key] = {str(k): v for k, v in value.items() if isinstance(v, str)}
        else:
            ignored.append(f"The vault's setting {key!r} is not one a vault may set; it was not imported.")
    if mode == "replace":  # safe settings the vault lacks go, as a replace promises; ours that it may not set stay
        for key in (PROMPTS_KEY,):
            if key in ours and key not in theirs:
                del out[key]
    return out, ignored


def page_settings(theirs: Any, ours: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """``(localStorage entries the page may apply, messages)`` from a vault's page settings.

    >>> page_settings({"quire.llm.url": "http://evil.invalid:8080/", "quire.maxFileMB": "300",
    ...                "quire.allowUrlFetch": "1", "quire.embed.tab": "off"})[0]
    {'quire.embed.tab': 'off', 'quire.maxFileMB': '300'}
    """
    ignored: list[str] = []
    kept: dict[str, str] = {}
    if not isinstance(theirs, Mapping):
        return kept, ignored
    ours = ours or {}
    for key, value in sorted(theirs.items()):
        value = str(value)
        if key in (PAGE_SERVER, PAGE_EMBED_SERVER):
            mine = ours.get(key) or ours.get(PAGE_SERVER) or LLM_DEFAULTS["url"]
            if _origin(value) != _origin(mine):
                what = "model server" if key == PAGE_SERVER else "embedding server"
                ignored.append(f"The vault named the {what} {_origin(value)}; your own setting was kept.")
        elif key == PAGE_URL_FETCH:
            if value == "1" and ours.get(PAGE_URL_FETCH) != "1":
                ignored.append("The vault would switch on adding web pages by address; it stays off "
                               "(switch it on yourself in Settings if you want it).")
        elif key == PAGE_EMBED_TAB:
            if value == "off":  # a preference, nothing sent anywhere: kept as the person left it
                kept[key] = value
        elif key == "quire.maxFileMB":
            if value.isdigit() and MAX_FILE_MB[0] <= int(value) <= MAX_FILE_MB[1]:
                kept[key] = value
        elif str(key).startswith("quire."):
            ignored.append(f"The vault's page setting {key!r} is not one a vault may set; it was not imported.")
    return kept, ignored
