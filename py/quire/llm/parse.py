"""Pure parsing of server output: no I/O, so sync, async and JS-fetch
transports all feed the same decoders line by line.

Ollama streams NDJSON; OpenAI-compatible servers stream SSE::

    >>> d = OllamaDecoder()
    >>> d.feed('{"message": {"role": "assistant", "content": "Hi"}, "done": false}')
    [Content(text='Hi')]
    >>> d.feed('{"message": {"content": ""}, "done": true, "done_reason": "stop", "eval_count": 1}')
    [Done(reason='stop', stats={'eval_count': 1})]
    >>> d.reply.text
    'Hi'
"""

from __future__ import annotations

import json
import re

from .events import Content, Done, LLMError, PullProgress, Thinking, ToolCall, ToolCalls

OLLAMA_STATS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration",
                "eval_count", "eval_duration")


def error_message(text: str) -> str:
    """The human part of an error body: Ollama's ``{"error": "..."}``, OpenAI's
    ``{"error": {"message": ...}}``, or the raw text.

    >>> error_message('{"error": "model \\\\"x\\\\" not found, try pulling it first"}')
    'model "x" not found, try pulling it first'
    """
    try:
        obj = json.loads(text)
    except ValueError:
        return text.strip() or "(empty response)"
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        obj = obj[0]  # Google's endpoints may wrap the error object in a list
    if isinstance(obj, dict) and "error" in obj:
        err = obj["error"]
        if isinstance(err, dict):
            return str(err.get("message") or err)
        return str(err)
    return text.strip()


def http_error(status: int, text: str, retry_after: str | None = None) -> LLMError:
    """The server's own words for a failed request; a 429 keeps how long to wait (the
    ``Retry-After`` header, or Gemini's ``RetryInfo.retryDelay`` in the body).

    >>> http_error(429, '{"error": {"message": "Quota exceeded", "details": [{"retryDelay": "20s"}]}}').retry_after
    '20s'
    >>> http_error(429, '[{"error": {"details": [{"retryDelay": "4.396801127s"}]}}]').retry_after  # a protobuf Duration
    '5s'
    """
    if status == 403 and not text.strip():
        # Ollama's CORS layer answers a refused Origin with an empty 403.
        return LLMError("403 Forbidden: the server refused this page's origin (CORS)", status=403)
    err = LLMError(error_message(text) or f"HTTP {status}", status=status)
    # Google answers a wrong key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID, not 401.
    err.key_invalid = status == 401 or (status in (400, 403) and "API_KEY_INVALID" in text)
    if status == 429:
        err.retry_after = _retry_delay(text, retry_after)
    return err


def _retry_delay(text: str, header: str | None) -> str | None:
    if header:  # seconds as "20s", as Gemini writes its delay: the same in every language the page speaks
        return _readable_wait(f"{header.strip()}s") if header.strip().isdigit() else header.strip()
    try:
        obj = json.loads(text)
        obj = obj[0] if isinstance(obj, list) and obj else obj  # Google may wrap it in a list
        details = (obj.get("error") or {}).get("details") or []
    except (ValueError, AttributeError):
        return None
    for d in details if isinstance(details, list) else []:
        if isinstance(d, dict) and isinstance(d.get("retryDelay"), str):
            return _readable_wait(d["retryDelay"])
    return None


def _readable_wait(delay: str) -> str:
    """A protobuf Duration as Google writes it, in words that read the same in English and German:
    seconds rounded up, minutes past two of them, hours past two of those (a used-up daily quota
    said "68408s" in a recorded reply).

    >>> [_readable_wait(d) for d in ("35s", "4.396801127s", "150s", "68408s", "7200s", "soon")]
    ['35s', '5s', '3 min', '19 h 1 min', '2 h', 'soon']
    """
    m = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?s\s*", delay)
    if not m:
        return delay.strip()
    seconds = int(m.group(1)) + (1 if m.group(2) and int(m.group(2)) else 0)
    if seconds < 120:
        return f"{seconds}s"
    minutes = -(-seconds // 60)
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def tool_call(raw: dict) -> ToolCall:
    """Ollama ``{"function": {"name", "arguments": {...}}}`` or OpenAI's with a JSON string."""
    fn = raw.get("function") or {}
    args = fn.get("arguments") or {}
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            args = {"_unparsed": args}
    if not isinstance(args, dict):
        args = {"_unparsed": args}
    return ToolCall(str(fn.get("name", "")), args, raw.get("id"))


class Reply:
    """Everything received so far; survives a failure so partial text can be shown."""

    def __init__(self):
        self.content: list[str] = []
        self.thinking: list[str] = []
        self.tool_calls: list[ToolCall] = []
        self.done: Done | None = None

    @property
    def text(self) -> str:
        return "".join(self.content)

    @property
    def thought(self) -> str:
        return "".join(self.thinking)

    def add(self, events: list) -> list:
        for ev in events:
            if isinstance(ev, Content):
                self.content.append(ev.text)
            elif isinstance(ev, Thinking):
                self.thinking.append(ev.text)
            elif isinstance(ev, ToolCalls):
                self.tool_calls.extend(ev.calls)
            elif isinstance(ev, Done):
                self.done = ev
        return events

    def message(self) -> dict:
        """The assistant turn to append to the history (Ollama shape)."""
        msg = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [c.as_ollama() for c in self.tool_calls]
        return msg

    def error(self, message: str, kind: str, status: int | None = None) -> LLMError:
        return LLMError(message, kind=kind, status=status, partial=self.text)


def _load(line: str, reply: Reply) -> dict | None:
    line = line.strip()
    if not line:
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        raise reply.error(f"unreadable line from server: {line[:80]!r}", "protocol") from None
    if not isinstance(obj, dict):
        raise reply.error(f"unexpected line from server: {line[:80]!r}", "protocol")
    if "error" in obj:
        raise reply.error(error_message(json.dumps(obj)), "stream")
    return obj


def ollama_events(obj: dict) -> list:
    """Events in one /api/chat or /api/generate object (a stream line or a whole reply)."""
    events: list = []
    msg = obj.get("message")
    if isinstance(msg, dict):
        thinking, content, calls = msg.get("thinking"), msg.get("content"), msg.get("tool_calls")
    else:  # /api/generate
        thinking, content, calls = obj.get("thinking"), obj.get("response"), None
    if thinking:
        events.append(Thinking(thinking))
    if content:
        events.append(Content(content))
    if calls:
        events.append(ToolCalls(tuple(tool_call(c) for c in calls)))
    if obj.get("done"):
        events.append(Done(obj.get("done_reason") or "stop", {k: obj[k] for k in OLLAMA_STATS if k in obj}))
    return events


class OllamaDecoder:
    """Feed NDJSON lines; get events.  ``close()`` checks the reply finished."""

    def __init__(self):
        self.reply = Reply()

    def feed(self, line: str) -> list:
        obj = _load(line, self.reply)
        return [] if obj is None else self.reply.add(ollama_events(obj))

    def close(self) -> list:
        if self.reply.done is None:
            raise self.reply.error("the server closed the stream before the reply finished", "stream")
        return []


def parse_pull_line(line: str) -> PullProgress | None:
    """One /api/pull line; an error line raises.

    >>> parse_pull_line('{"status": "pulling abc", "total": 10, "completed": 5}').fraction
    0.5
    """
    obj = _load(line, Reply())
    if obj is None:
        return None
    return PullProgress(str(obj.get("status", "")), obj.get("digest"), obj.get("total"), obj.get("completed"))


class SSEDecoder:
    """Server-sent events: ``data:`` lines up to a blank line make one event.

    >>> d = SSEDecoder()
    >>> [d.feed(x) for x in ["data: {}", ""]]
    [None, '{}']
    """

    def __init__(self):
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        line = line.rstrip("\r\n")
        if not line:
            return self.flush()
        if line.startswith(":"):
            return None  # comment / keep-alive
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None

    def flush(self) -> str | None:
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        return data


class OpenAIDecoder:
    """Feed SSE lines of /v1/chat/completions; tool-call fragments are joined
    by ``index`` and released with the finish, as OpenAI streams them in pieces."""

    def __init__(self):
        self.reply = Reply()
        self._sse = SSEDecoder()
        self._calls: dict[int, dict] = {}
        self._finish: str | None = None
        self._usage: dict = {}
        self._ended = False

    def feed(self, line: str) -> list:
        data = self._sse.feed(line)
        return [] if data is None else self.feed_data(data)

    def feed_data(self, data: str) -> list:
        if data.strip() == "[DONE]":
            return self._end()
        obj = _load(data, self.reply)
        return [] if obj is None else self.reply.add(self._chunk(obj))

    def _chunk(self, obj: dict) -> list:
        events: list = []
        if obj.get("usage"):
            self._usage = dict(obj["usage"])
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            thinking = delta.get("reasoning_content") or delta.get("reasoning")
            if thinking:
                events.append(Thinking(thinking))
            if delta.get("content"):
                events.append(Content(delta["content"]))
            for frag in delta.get("tool_calls") or []:
                slot = self._calls.setdefault(frag.get("index", len(self._calls)),
                                              {"id": None, "function": {"name": "", "arguments": ""}})
                slot["id"] = frag.get("id") or slot["id"]
                fn = frag.get("function") or {}
                slot["function"]["name"] += fn.get("name") or ""
                args = fn.get("arguments") or ""
                slot["function"]["arguments"] += args if isinstance(args, str) else json.dumps(args)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
        return events

    def _end(self) -> list:
        if self._ended:
            return []
        self._ended = True
        events: list = []
        if self._calls:
            events.append(ToolCalls(tuple(tool_call(self._calls[i]) for i in sorted(self._calls))))
        events.append(Done(self._finish or "stop", self._usage))
        return self.reply.add(events)

    def close(self) -> list:
        tail = self.feed("")  # an unterminated last event
        if self._ended:
            return tail
        if self._finish is None:
            raise self.reply.error("the server closed the stream before the reply finished", "stream")
        return tail + self._end()  # llama.cpp variants that omit [DONE]

    def whole(self, obj: dict) -> list:
        """Events of a reply that came in one piece (a non-streamed chat.completion object)."""
        return self.reply.add(self._chunk(obj)) + self._end()


def openai_reply_events(obj: dict) -> list:
    """Events of a non-streamed chat.completion object."""
    return OpenAIDecoder().whole(obj)
