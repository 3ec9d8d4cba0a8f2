"""Chat sessions as plain JSON data, and the history a model is given.

A session (one record in the ``chats`` bucket, kept by ``quire.services.chat.sessions``) is::

    {"id": "c0ffee12ab34", "title": "Mitosis", "created": "2025-03-04T09:05:00+00:00",
     "scope": None | {"category": "Exam 2"} | {"sources": [{"id": ..., "name": ...}]},
     "messages": [{"role": "user", "content": "..."},
                  {"role": "assistant", "content": "...", "citations": [...], "thinking": "...", "events": [...]}]}

Only ``role`` and ``content`` ever reach the model; citations, thinking and
tool events are for the screen.  The model's history is capped at
``HISTORY_BUDGET`` characters: whole question-answer pairs are dropped, oldest
first, so it never sees half an exchange.

>>> s = new_session(session_id="s1", now="2025-03-04T09:05:00+00:00")
>>> add_question(s, "What is mitosis?"); add_answer(s, "Cell division [1].")
0
1
>>> s["title"], history(s)
('What is mitosis?', [{'role': 'user', 'content': 'What is mitosis?'}, {'role': 'assistant', 'content': 'Cell division [1].'}])
"""

from __future__ import annotations

import datetime as _dt
import uuid

from quire.errors import InvalidInput

HISTORY_BUDGET = 48_000  # characters of earlier turns per session sent to the model (~12k tokens)
TITLE_CHARS = 60  # an automatic title is the first question, cut to this
DEFAULT_TITLE = "New chat"
_ANSWER_KEYS = ("citations", "thinking", "events")  # kept on screen, never sent to the model


# --- sessions ------------------------------------------------------------------
def new_session(scope: dict | None = None, *, title: str = "", session_id: str | None = None,
                now: str | None = None) -> dict:
    """An empty session; ``now`` (ISO 8601) and ``session_id`` are for tests."""
    return {
        "id": session_id or uuid.uuid4().hex[:12],
        "title": title.strip() or DEFAULT_TITLE,
        "created": now or _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "scope": scope,
        "messages": [],
    }


def rename(session: dict, title: str) -> dict:
    """A blank title falls back to the default rather than leaving an empty row."""
    session["title"] = " ".join(str(title).split())[:200] or DEFAULT_TITLE
    return session


def auto_title(question: str) -> str:
    """The first question, tidied and cut at a word.

    >>> auto_title("  What   is the\\nKrebs cycle and why does it matter so much for cells at all?")
    'What is the Krebs cycle and why does it matter so much for…'
    """
    words = " ".join(question.split())
    if len(words) <= TITLE_CHARS:
        return words or DEFAULT_TITLE
    return words[:TITLE_CHARS].rsplit(" ", 1)[0] + "…"


def set_scope(session: dict, scope: dict | None) -> dict:
    session["scope"] = scope
    return session


# --- messages ------------------------------------------------------------------
def add_question(session: dict, text: str) -> int:
    """Append a question; returns its message index.  The first names the session."""
    messages = session["messages"]
    if messages and messages[-1]["role"] == "user":
        raise InvalidInput("the last question has no answer yet; add_answer() or edit_question() first")
    if not any(m["role"] == "user" for m in messages) and session.get("title", DEFAULT_TITLE) == DEFAULT_TITLE:
        session["title"] = auto_title(text)
    messages.append({"role": "user", "content": text})
    return len(messages) - 1


def add_answer(session: dict, content: str, *, citations=None, thinking: str | None = None, events=None) -> int:
    """Answer the pending question; returns the answer's message index."""
    messages = session["messages"]
    if not messages or messages[-1]["role"] != "user":
        raise InvalidInput("there is no question waiting for an answer")
    msg: dict = {"role": "assistant", "content": content}
    for key, value in zip(_ANSWER_KEYS, (citations, thinking, events)):
        if value:
            msg[key] = value
    messages.append(msg)
    return len(messages) - 1


def pending_question(session: dict) -> str | None:
    """The question still waiting for an answer (after ``add_question`` or ``edit_question``)."""
    messages = session["messages"]
    return messages[-1]["content"] if messages and messages[-1]["role"] == "user" else None


def edit_question(session: dict, index: int, new_text: str) -> dict:
    """Replace question ``index`` (a message index) and drop everything after it.

    The session then ends with the edited question and no answer, so the
    caller regenerates.  Earlier turns are untouched.
    """
    messages = session["messages"]
    if not 0 <= index < len(messages) or messages[index]["role"] != "user":
        questions = [i for i, m in enumerate(messages) if m["role"] == "user"]
        raise IndexError(f"message {index} is not a question; questions are at {questions}")
    if not new_text.strip():
        raise InvalidInput("the edited question is empty")
    del messages[index + 1:]
    messages[index] = {"role": "user", "content": new_text}
    return session


def pairs(session: dict) -> list[tuple[dict, dict]]:
    """Answered question-answer pairs, oldest first; a pending question is not one."""
    out, question = [], None
    for msg in session["messages"]:
        if msg["role"] == "user":
            question = msg
        elif msg["role"] == "assistant" and question is not None:
            out.append((question, msg))
            question = None
    return out


def _size(pair: tuple[dict, dict]) -> int:
    return sum(len(m.get("content") or "") for m in pair)


def history(session: dict, budget: int = HISTORY_BUDGET) -> list[dict]:
    """Earlier turns for the model, ``[{"role", "content"}]``, within ``budget`` characters.

    Keeps the newest pairs that fit; a pending question is left out (the
    caller renders it into the prompt with its context).
    """
    kept, used = [], 0
    for pair in reversed(pairs(session)):
        size = _size(pair)
        if used + size > budget:
            break
        kept.append(pair)
        used += size
    return [{"role": m["role"], "content": m.get("content") or ""} for pair in reversed(kept) for m in pair]


def dropped_pairs(session: dict, budget: int = HISTORY_BUDGET) -> int:
    """How many of the oldest pairs ``history`` leaves out (for a "forgotten" note)."""
    return len(pairs(session)) - len(history(session, budget)) // 2


def fullness(session: dict, budget: int = HISTORY_BUDGET) -> float:
    """0..1 for a meter: how much of the history budget the conversation fills.

    >>> s = new_session(session_id="x", now="t"); add_question(s, "a" * 12_000); add_answer(s, "b" * 12_000)
    0
    1
    >>> fullness(s)
    0.5
    """
    total = sum(_size(p) for p in pairs(session)) + len(pending_question(session) or "")
    return min(1.0, total / budget) if budget > 0 else 1.0


def validate_session(data) -> dict:
    """A session read back from storage, checked; raises ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise InvalidInput("a chat session must be an object")
    for key, kind in (("id", str), ("title", str), ("created", str), ("messages", list)):
        if not isinstance(data.get(key), kind):
            raise InvalidInput(f"chat session field {key!r} must be a {kind.__name__}")
    if data.get("scope") is not None and not isinstance(data["scope"], dict):
        raise InvalidInput("chat session field 'scope' must be an object or null")
    for i, msg in enumerate(data["messages"]):
        if not isinstance(msg, dict) or msg.get("role") not in ("user", "assistant") \
                or not isinstance(msg.get("content"), str):
            raise InvalidInput(f"message {i} needs a role (user/assistant) and text content")
    return data
