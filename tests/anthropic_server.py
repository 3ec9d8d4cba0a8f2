"""A local stand-in for Anthropic's Messages API that replays recorded exchanges
(``tests/fixtures/anthropic``, sources in its README).  It checks what Anthropic checks
(``x-api-key``; from a page, ``anthropic-dangerous-direct-browser-access``), answers CORS the
way Anthropic does for browser requests, and records every request for the test to read.

``script`` is the list of fixtures the next ``/v1/messages`` calls get, in order (a streamed
call gets ``*.sse``, a non-streamed one ``message.json`` when the script is empty; a Message
fixture asked for streamed is sent as the events the streaming documentation defines); ``limited``
makes every call a 429 with ``retry-after``.  A recorded forced-tool reply gets the name of the tool
the request forces (the recording's tool is called ``json``)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "anthropic"
ALLOWED = "x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access, content-type"


def as_stream(message: dict) -> bytes:
    """A Message object as the event stream the streaming documentation defines for it: a streamed
    request for a recorded non-streamed Message (text in one ``text_delta``, a tool's input in two
    ``input_json_delta`` pieces, as the documentation shows them arriving in pieces)."""
    def event(obj):
        return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n"
    start = {**message, "content": [], "stop_reason": None, "usage": {**message.get("usage", {}), "output_tokens": 1}}
    out = [event({"type": "message_start", "message": start})]
    for i, block in enumerate(message.get("content") or []):
        if block["type"] == "text":
            out += [event({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                    event({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})]
        else:
            raw = json.dumps(block["input"])
            out.append(event({"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}}))
            out += [event({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": part}})
                    for part in (raw[: len(raw) // 2], raw[len(raw) // 2:])]
        out.append(event({"type": "content_block_stop", "index": i}))
    out += [event({"type": "message_delta", "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
                   "usage": {"output_tokens": message.get("usage", {}).get("output_tokens", 0)}}),
            event({"type": "message_stop"})]
    return "".join(out).encode()


class AnthropicStandIn:
    def __init__(self, key: str):
        self.key, self.script, self.requests, self.limited = key, [], [], False
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body: bytes, kind="application/json", extra=None):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                if self.headers.get("Origin"):
                    self.send_header("Access-Control-Allow-Origin", "*")
                    self.send_header("Access-Control-Expose-Headers", "retry-after")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_OPTIONS(self):
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                self.send_header("Access-Control-Allow-Headers", ALLOWED)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _refused(self) -> bool:
                if self.headers.get("Origin") and self.headers.get("anthropic-dangerous-direct-browser-access") != "true":
                    body = {"type": "error", "error": {"type": "invalid_request_error", "message": (
                        "CORS requests must set 'anthropic-dangerous-direct-browser-access' header")}}
                    self._send(401, json.dumps(body).encode())
                    return True
                if self.headers.get("x-api-key") != stand_in.key:
                    self._send(401, (FIXTURES / "error_401.json").read_bytes())
                    return True
                if stand_in.limited:
                    self._send(429, (FIXTURES / "error_429.json").read_bytes(), extra={"retry-after": "30"})
                    return True
                return False

            def _record(self, body=None):
                stand_in.requests.append({"method": self.command, "path": self.path,
                                          "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})

            def do_GET(self):
                self._record()
                if self._refused():
                    return
                if self.path == "/v1/models":
                    self._send(200, (FIXTURES / "models.json").read_bytes())
                else:
                    self._send(404, json.dumps({"type": "error", "error": {"type": "not_found_error",
                                                                            "message": "Not found"}}).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                self._record(body)
                if self._refused():
                    return
                if self.path != "/v1/messages":
                    self._send(404, b'{"type": "error", "error": {"type": "not_found_error", "message": "Not found"}}')
                    return
                name = stand_in.script.pop(0) if stand_in.script else (
                    "stream_text.sse" if body.get("stream") else "message.json")
                data = (FIXTURES / name).read_bytes()
                forced = (body.get("tool_choice") or {}).get("name")
                if (body.get("tool_choice") or {}).get("type") == "tool" and forced:
                    # A recording of a forced tool named "json" (vercel/ai's fixtures): the model calls the
                    # tool the request forces, so the tool's name is the one thing that follows the request.
                    data = data.replace(b'"name":"json"', f'"name":"{forced}"'.encode()).replace(
                        b'"name": "json"', f'"name": "{forced}"'.encode())
                if body.get("stream") and name.endswith(".json"):
                    data, name = as_stream(json.loads(data)), name + ".sse"
                self._send(200, data, "text/event-stream" if name.endswith(".sse") else "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
