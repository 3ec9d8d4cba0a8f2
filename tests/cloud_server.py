"""One local origin that answers as the three cloud providers Quire has presets for, replaying their
recorded or documented exchanges (``tests/fixtures/{openai,gemini,anthropic}``, sources in each
README):

* OpenAI under ``/v1`` (``Authorization: Bearer``),
* Google Gemini's OpenAI-compatible endpoint under ``/v1beta/openai`` (``Authorization: Bearer``;
  Google's errors come wrapped in a list),
* Anthropic's Messages API under ``/v1`` when the request carries ``anthropic-version``
  (``x-api-key``; from a page only with ``anthropic-dangerous-direct-browser-access: true``).

One origin, so a page whose CSP admitted it once can be pointed at each provider in turn.  ``mode``
is what every request gets: ``"ok"``; ``"limited"`` (each provider's 429: OpenAI's and Anthropic's
with a ``retry-after`` header exposed to the page, Gemini's with ``RetryInfo.retryDelay`` in the
body only); ``"no_cors"`` (no CORS headers at all, as when a proxy drops what the provider needs).
A chat model the provider does not list gets the provider's 404.  OpenAI and Gemini also answer
``/embeddings`` (a fixed vector per text).  ``requests`` records every
request (method, path, lower-cased headers, body); ``script`` lists the fixtures (under
``tests/fixtures``) the next chat requests get, in order (else each provider's recorded text stream)."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ALLOWED = "authorization, content-type, x-api-key, anthropic-version, anthropic-dangerous-direct-browser-access"
GEMINI_ROOT = "/v1beta/openai"
RETRY_AFTER = {"openai": "20", "anthropic": "30"}  # seconds; Gemini gives its wait in the body
OK_STREAM = {"openai": "openai/recorded_stream_text.sse", "gemini": "gemini/stream_chat.sse",
             "anthropic": "anthropic/recorded_text.sse"}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def vector(text: str, dims: int = 8) -> list[float]:
    """A fixed unit-free vector per text (what an embedding endpoint returns, in shape only)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(b - 128) / 128 for b in digest[:dims]]


def models(provider: str) -> list[str]:
    body = json.loads(fixture(f"{provider}/models.json"))
    return [m["id"] for m in body["data"]]


class CloudStandIn:
    def __init__(self, key: str):
        self.key, self.mode, self.requests, self.script = key, "ok", [], []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def provider(self) -> str:
                if self.path.startswith(GEMINI_ROOT):
                    return "gemini"
                return "anthropic" if self.headers.get("anthropic-version") else "openai"

            def _send(self, status, body: bytes, kind="application/json", extra=None):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                if self.headers.get("Origin") and stand_in.mode != "no_cors":
                    self.send_header("Access-Control-Allow-Origin", "*")
                    self.send_header("Access-Control-Expose-Headers", "retry-after")
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_OPTIONS(self):
                self.send_response(204)
                if stand_in.mode != "no_cors":
                    self.send_header("Access-Control-Allow-Origin", "*")
                    self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                    self.send_header("Access-Control-Allow-Headers", ALLOWED)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _refused(self, provider: str) -> bool:
                """The provider's answer to a request it refuses (key, browser header, limit), sent; else False."""
                if provider == "anthropic":
                    if self.headers.get("Origin") and self.headers.get("anthropic-dangerous-direct-browser-access") != "true":
                        self._send(401, json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": (
                            "CORS requests must set 'anthropic-dangerous-direct-browser-access' header")}}).encode())
                        return True
                    if self.headers.get("x-api-key") != stand_in.key:
                        self._send(401, fixture("anthropic/error_401.json"))
                        return True
                elif self.headers.get("Authorization") != f"Bearer {stand_in.key}":
                    self._send(400 if provider == "gemini" else 401, fixture("gemini/error_400_key.json") if provider == "gemini"
                               else b'{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", '
                                    b'"param": null, "code": "invalid_api_key"}}')
                    return True
                if stand_in.mode == "limited":
                    extra = {"retry-after": RETRY_AFTER[provider]} if provider in RETRY_AFTER else None
                    self._send(429, fixture(f"{provider}/error_429.json"), extra=extra)
                    return True
                return False

            def _record(self, body=None):
                stand_in.requests.append({"method": self.command, "path": self.path,
                                          "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})

            def _root(self, provider: str) -> str:
                return GEMINI_ROOT if provider == "gemini" else "/v1"

            def do_GET(self):
                self._record()
                provider = self.provider()
                if self._refused(provider):
                    return
                if self.path == self._root(provider) + "/models":
                    self._send(200, fixture(f"{provider}/models.json"))
                else:
                    self._send(404, b'{"error": {"message": "Not found"}}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                self._record(body)
                provider = self.provider()
                if self._refused(provider):
                    return
                path = self._root(provider) + ("/messages" if provider == "anthropic" else "/chat/completions")
                if provider != "anthropic" and self.path == self._root(provider) + "/embeddings":
                    texts = [body["input"]] if isinstance(body.get("input"), str) else body.get("input") or []
                    self._send(200, json.dumps({"object": "list", "model": body.get("model"), "data": [
                        {"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)]}).encode())
                elif self.path != path:
                    self._send(404, b'{"error": {"message": "Not found"}}')
                elif body.get("model") not in models(provider):
                    self._send(404, fixture(f"{provider}/error_404_model.json"))
                else:
                    name = stand_in.script.pop(0) if stand_in.script else OK_STREAM[provider]
                    self._send(200, fixture(name), "text/event-stream" if name.endswith(".sse") else "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
