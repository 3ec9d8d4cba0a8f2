"""One answer in progress: what it has streamed so far (it survives Stop and errors), driven from
the agent's events, and the client whose streams Stop closes."""

from __future__ import annotations

import asyncio

from quire.llm.events import Content, Done, LLMError, Thinking, ToolCalls
from quire.chat.agent import AgentDone, ToolResult

CANCEL_POLL = 0.1  # seconds between looks at the Stop button while the model is silent
KEPT_EVENTS = ("tool_call", "tool_result", "error", "connection", "notice")


def refuses_tools(exc: LLMError) -> bool:
    """The server refused the request because of ``tools``: a 400 naming tools, or llama-server
    without Jinja (500 "tools param requires --jinja flag").

    >>> refuses_tools(LLMError("tools param requires --jinja flag", status=500))
    True
    >>> refuses_tools(LLMError("out of memory", status=500))
    False
    """
    return exc.status in (400, 500) and "tool" in exc.message.lower()


def cut_message(tokens: int, limit: int | None, context: int | None) -> str:
    """What a cut answer says, and what to do.

    >>> cut_message(1024, 1024, None)
    'The answer was cut at 1024 tokens; raise Answer length in Settings.'
    """
    if limit and tokens < limit and context:
        return f"The answer was cut at {tokens} tokens because the model's context ({context} tokens) was full; ask a shorter question or start a new chat."  # noqa: E501
    return f"The answer was cut at {tokens} tokens; raise Answer length in Settings."


class Turn:
    """What one answer has streamed so far; survives Stop and errors."""

    def __init__(self, ctx, session: dict):
        self.ctx, self.session = ctx, session
        self.events: list[dict] = []
        self.text = self.thinking = ""
        self.mode: str | None = None  # "llm" or "extractive"
        self.limit: int | None = None  # num_predict sent
        self.cut: int | None = None  # tokens written when the server stopped at the limit
        self.extractive: dict | None = None
        self.stopped, self.error = False, None
        self.loaded: dict | None = None  # the chat as stored when the turn began (None: a new chat)
        self.wipes = 0  # the engine's erase count then: an erase meanwhile means nothing is saved

    def emit(self, event: dict) -> None:
        self.events.append(event)
        self.ctx.emit(event)

    def cancelled(self) -> bool:
        return bool(self.ctx.cancelled())

    def notice(self, code: str, message: str, **extra) -> None:
        self.emit({"type": "notice", "code": code, "message": message, **extra})

    def fail(self, exc: LLMError) -> None:
        what = "The model server stopped in the middle of the answer" if self.text else "The model server failed"
        self.error = f"{what}: {exc.message}." + (" The partial answer is kept." if self.text else "")
        self.emit({"type": "error", "message": self.error, "kind": exc.kind, "status": exc.status})

    def on(self, event) -> None:
        if isinstance(event, Thinking):
            self.thinking += event.text
            self.emit({"type": "thinking", "text": event.text})
        elif isinstance(event, Content):
            self.text += event.text
            self.emit({"type": "content", "text": event.text})
        elif isinstance(event, ToolCalls):
            for call in event.calls:
                self.emit({"type": "tool_call", "name": call.name, "arguments": call.arguments})
        elif isinstance(event, Done) and event.reason == "length":
            stats = event.stats or {}
            self.cut = int(stats.get("eval_count") or stats.get("completion_tokens") or self.limit or 0)
        elif isinstance(event, ToolResult):
            self.emit({"type": "tool_result", "name": event.name, "arguments": event.arguments,
                       "result": event.result, "ok": event.ok})

    async def drive(self, agent, client: "StoppableClient") -> None:
        """Pass the agent's events on until it is done or Stop is pressed.

        The model may be silent for a long time (loading, thinking), so Stop is
        watched on a timer, not only between events; stopping drops the connection.
        """
        try:
            while True:
                step = asyncio.ensure_future(agent.__anext__())
                while not step.done():
                    await asyncio.wait({step}, timeout=CANCEL_POLL)
                    if not step.done() and self.cancelled():
                        step.cancel()
                        self.stopped = True
                        try:
                            await step
                        except (asyncio.CancelledError, Exception):
                            pass
                        return
                try:
                    event = step.result()
                except StopAsyncIteration:
                    return
                if isinstance(event, AgentDone):
                    return
                self.on(event)
                if self.cancelled():
                    self.stopped = True
                    return
        finally:
            await client.close()
            try:
                await agent.aclose()
            except (RuntimeError, asyncio.CancelledError):
                pass


class StoppableClient:
    """A chat client that remembers its open streams so Stop can close them."""

    def __init__(self, client):
        self._client, self._streams = client, []

    def __getattr__(self, name):
        return getattr(self._client, name)

    def chat(self, *args, **kwargs):
        stream = self._client.chat(*args, **kwargs)
        self._streams.append(stream)
        return stream

    async def close(self) -> None:
        for stream in self._streams:
            try:
                await stream.close()
            except (RuntimeError, ValueError, LLMError):
                pass  # already finished, or closing while running: the reply is over either way
        self._streams.clear()
