"""Anthropic's own Messages API (``POST /v1/messages``): the same client surface as
``OpenAICompatClient``, for a person who brings an Anthropic key.

From a web page Anthropic answers only requests that carry
``anthropic-dangerous-direct-browser-access: true`` (its CORS opt-in), besides ``x-api-key`` and
``anthropic-version``.  Quire keeps its history in Ollama's shape; ``anthropic_body`` converts it:
system turns become the top-level ``system``, tool calls ``tool_use`` blocks, tool results
``tool_result`` blocks in a user turn.  Structured output is a forced tool (``reply``) whose
``input_schema`` is the schema: its input streams as ``input_json_delta`` and is handed on as the
reply's text, so the study generators parse it as from any other server.

    >>> anthropic_body("m", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    ...                options={"num_predict": 64})["system"]
    'Be brief.'
"""

from __future__ import annotations

import json

from .client import ChatStream, HttpClient
from .events import Content, Done, LLMError, ModelInfo, Thinking, ToolCall, ToolCalls
from .parse import Reply, SSEDecoder, error_message
from .transport import AsyncTransport

VERSION = "2023-06-01"  # the anthropic-version header: the API's one stable version
REPLY_TOOL = "reply"  # the forced tool that carries structured output
DEFAULT_MAX_TOKENS = 1024  # Anthropic requires max_tokens; Quire always sends Answer length anyway
STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
        "refusal": "stop", "pause_turn": "stop"}


def api_root(base_url: str) -> str:
    """
    >>> api_root("https://api.anthropic.com"), api_root("https://api.anthropic.com/v1/")
    ('https://api.anthropic.com/v1', 'https://api.anthropic.com/v1')
    """
    base = base_url.rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


def _image(b64: str) -> dict:
    mime = "image/png" if b64.startswith("iVBOR") else "image/jpeg"
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": b64}}


def anthropic_messages(messages: list[dict]) -> tuple[str, list[dict]]:
    """``(system, messages)``: turns of one role in a row are merged, as the API requires alternation."""
    system, out, pending, counter = [], [], [], 0
    for msg in messages:
        role, text = msg.get("role"), msg.get("content") or ""
        if role == "system":
            system.append(text)
            continue
        blocks: list[dict] = []
        if role == "tool":
            call_id = msg.get("tool_call_id") or (pending.pop(0) if pending else f"toolu_{counter}")
            blocks.append({"type": "tool_result", "tool_use_id": call_id, "content": text})
            role = "user"
        else:
            if text:
                blocks.append({"type": "text", "text": text})
            blocks += [_image(i) for i in msg.get("images") or []]
            if role == "assistant" and msg.get("tool_calls"):
                pending = []
                for call in msg["tool_calls"]:
                    fn = call.get("function", {})
                    args = fn.get("arguments", {})
                    if isinstance(args, str):
                        try:
                            args = json.loads(args) if args.strip() else {}
                        except ValueError:
                            args = {"_unparsed": args}
                    call_id = call.get("id") or f"toolu_{counter}"
                    counter += 1
                    pending.append(call_id)
                    blocks.append({"type": "tool_use", "id": call_id, "name": fn.get("name", ""), "input": args})
        if out and out[-1]["role"] == role:
            out[-1]["content"] += blocks
        else:
            out.append({"role": role, "content": blocks})
    return "\n\n".join(system), out


def anthropic_tools(tools: list[dict]) -> list[dict]:
    """OpenAI / Ollama function tools -> Anthropic's ``{name, description, input_schema}``."""
    out = []
    for tool in tools:
        fn = tool.get("function", tool)
        out.append({"name": fn["name"], "description": fn.get("description", ""),
                    "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}})
    return out


def anthropic_body(model: str, messages: list[dict], *, stream=True, format=None, tools=None, options=None) -> dict:
    options = options or {}
    system, msgs = anthropic_messages(messages)
    body: dict = {"model": model, "max_tokens": int(options.get("num_predict") or DEFAULT_MAX_TOKENS),
                  "messages": msgs, "stream": stream}
    if system:
        body["system"] = system
    for ours, theirs in (("temperature", "temperature"), ("top_p", "top_p")):
        if ours in options:
            body[theirs] = options[ours]
    if options.get("stop"):
        body["stop_sequences"] = list(options["stop"]) if isinstance(options["stop"], (list, tuple)) else [options["stop"]]
    if format is not None:
        schema = format if isinstance(format, dict) else {"type": "object"}
        body["tools"] = [{"name": REPLY_TOOL, "description": "Give the reply as this JSON object.", "input_schema": schema}]
        body["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
    elif tools:
        body["tools"] = anthropic_tools(tools)
    return body


class AnthropicDecoder:
    """Feed the SSE lines of a streamed ``/v1/messages`` (or ``whole`` a non-streamed Message); get
    Quire's events.  With ``structured`` the forced ``reply`` tool's input is the reply's text."""

    def __init__(self, structured: bool = False):
        self.reply, self.structured = Reply(), structured
        self._sse = SSEDecoder()
        self._blocks: dict[int, dict] = {}
        self._finish: str | None = None
        self._usage: dict = {}
        self._ended = False

    def feed(self, line: str) -> list:
        if line.startswith("event:"):
            return []  # the type is repeated in the data
        data = self._sse.feed(line)
        if data is None or not data.strip():
            return []
        try:
            obj = json.loads(data)
        except ValueError:
            raise self.reply.error(f"unreadable event from server: {data[:80]!r}", "protocol") from None
        return self.reply.add(self._event(obj if isinstance(obj, dict) else {}))

    def _json_reply(self, block: dict) -> bool:
        return self.structured and block.get("type") == "tool_use" and block.get("name") == REPLY_TOOL

    def _event(self, obj: dict) -> list:
        kind = obj.get("type")
        if kind == "error":
            raise self.reply.error(error_message(json.dumps(obj)), "stream")
        if kind == "message_start":
            self._usage.update((obj.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            block = dict(obj.get("content_block") or {})
            block["partial"] = ""
            self._blocks[obj.get("index", len(self._blocks))] = block
            if block.get("type") == "text" and block.get("text"):
                return [Content(block["text"])]
        elif kind == "content_block_delta":
            delta, block = obj.get("delta") or {}, self._blocks.get(obj.get("index"), {})
            if delta.get("type") == "text_delta" and delta.get("text"):
                return [Content(delta["text"])]
            if delta.get("type") == "thinking_delta" and delta.get("thinking"):
                return [Thinking(delta["thinking"])]
            if delta.get("type") == "input_json_delta":
                part = delta.get("partial_json") or ""
                if self._json_reply(block):
                    return [Content(part)] if part else []
                block["partial"] = block.get("partial", "") + part
        elif kind == "message_delta":
            self._finish = (obj.get("delta") or {}).get("stop_reason") or self._finish
            self._usage.update(obj.get("usage") or {})
        elif kind == "message_stop":
            return self._end()
        return []

    def _end(self) -> list:
        if self._ended:
            return []
        self._ended = True
        events: list = []
        calls = []
        for i in sorted(self._blocks):
            block = self._blocks[i]
            if block.get("type") != "tool_use" or self._json_reply(block):
                continue
            args = block.get("input") or {}
            if block.get("partial"):
                try:
                    args = json.loads(block["partial"])
                except ValueError:
                    args = {"_unparsed": block["partial"]}
            calls.append(ToolCall(block.get("name", ""), args if isinstance(args, dict) else {"_unparsed": args},
                                  block.get("id")))
        if calls:
            events.append(ToolCalls(tuple(calls)))
        reason = STOP.get(self._finish or "end_turn", "stop")
        if self.structured and reason == "tool_calls":
            reason = "stop"  # the forced reply tool: a finished reply
        events.append(Done(reason, self._usage))
        return events

    def close(self) -> list:
        tail = self.feed("")
        if self._ended:
            return tail
        raise self.reply.error("the server closed the stream before the reply finished", "stream")

    def whole(self, obj: dict) -> list:
        """Events of a non-streamed Message object (not yet added to ``reply``)."""
        events: list = []
        for i, block in enumerate(obj.get("content") or []):
            if block.get("type") == "text" and block.get("text"):
                events.append(Content(block["text"]))
            elif block.get("type") == "thinking" and block.get("thinking"):
                events.append(Thinking(block["thinking"]))
            elif self._json_reply(block):
                events.append(Content(json.dumps(block.get("input") or {})))
            self._blocks[i] = {**block, "partial": ""}
        self._finish = obj.get("stop_reason")
        self._usage.update(obj.get("usage") or {})
        return events + self._end()  # decode_reply adds them to the reply


_NO_EMBED = ("Anthropic offers no embeddings: choose “In this browser” under Embedding model, or another "
             "server for embeddings")


class AnthropicClient(HttpClient):
    def __init__(self, base_url: str, transport: AsyncTransport | None = None, api_key: str = ""):
        headers = {"anthropic-version": VERSION, "anthropic-dangerous-direct-browser-access": "true"}
        if api_key:
            headers["x-api-key"] = api_key
        super().__init__(api_root(base_url), transport, headers)

    async def version(self) -> str:
        await self._json("GET", "/models")
        return "anthropic"

    async def tags(self) -> list[ModelInfo]:
        obj = await self._json("GET", "/models")
        return [ModelInfo(name=m.get("id", ""), owned_by="anthropic") for m in obj.get("data") or []]

    async def props(self) -> dict:
        return {"tools": True, "context_length": None}  # every current Claude model calls tools

    async def embed(self, model: str, texts, **_):
        raise LLMError(_NO_EMBED, kind="http", status=501)

    def chat(self, model: str, messages: list[dict], *, stream=True, format=None, tools=None, think=None,
             options=None, keep_alive=None) -> ChatStream:
        body = anthropic_body(model, messages, stream=stream, format=format, tools=tools, options=options)
        decoder = AnthropicDecoder(structured=format is not None)
        return self._chat("/messages", body, decoder, decoder.whole)

    async def pull(self, model: str):
        raise LLMError("Anthropic's models cannot be downloaded; choose one the key may use", kind="http", status=501)
        yield  # pragma: no cover  (an async generator like the Ollama one)
