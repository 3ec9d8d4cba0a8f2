"""How a client reaches the server: one small async protocol.

A transport sends one JSON request (with ``headers`` only when a client has some: an API key's
``Authorization``) and hands back a response; it never
raises for an HTTP error status (the client reads the error body), only
``LLMError(kind="connection")`` when nothing answered at all.

Writing the Pyodide transport (``quire/browser/fetch.py``) means
implementing ``AsyncTransport`` over ``js.fetch``::

    class FetchTransport:
        async def request(self, method, url, body=None, stream=False):
            init = {"method": method}
            if body is not None:
                init |= {"body": json.dumps(body), "headers": {"Content-Type": "application/json"}}
            try:
                resp = await js.fetch(url, to_js(init, dict_converter=js.Object.fromEntries))
            except JsException as exc:           # "Failed to fetch": refused, CORS, offline
                raise LLMError(str(exc), kind="connection") from None
            return FetchResponse(resp)           # .status, await .json(), .text(),
                                                 # async .iter_lines() over resp.body.getReader()
                                                 # split on "\\n"; .close() -> reader.cancel()

and then ``OllamaClient(url, FetchTransport())`` has the whole client
surface.  On CPython, ``BlockingAsyncTransport`` puts urllib behind the same
protocol (``UrllibTransport`` is its blocking inside).  All parsing lives in
``quire.llm.parse`` and request building in the clients' module-level
functions, so nothing else needs porting.
"""

from __future__ import annotations

import json
from typing import AsyncIterator, Iterator, Protocol

from .events import LLMError

DEFAULT_TIMEOUT = 300.0  # seconds; a cold model load on a laptop can take a minute or more


class Response(Protocol):
    status: int

    def json(self): ...
    def text(self) -> str: ...
    def iter_lines(self) -> Iterator[str]: ...
    def close(self) -> None: ...


class Transport(Protocol):
    def request(self, method: str, url: str, body: dict | None = None, stream: bool = False,
                headers: dict | None = None) -> Response: ...


class AsyncResponse(Protocol):
    status: int

    async def json(self): ...
    async def text(self) -> str: ...
    def iter_lines(self) -> AsyncIterator[str]: ...
    async def close(self) -> None: ...


class AsyncTransport(Protocol):
    async def request(self, method: str, url: str, body: dict | None = None, stream: bool = False,
                      headers: dict | None = None) -> AsyncResponse: ...


class UrllibResponse:
    def __init__(self, status: int, fp):
        self.status, self._fp = status, fp

    def header(self, name: str) -> str | None:
        headers = getattr(self._fp, "headers", None)
        return headers.get(name) if headers is not None else None

    def text(self) -> str:
        try:
            return self._fp.read().decode("utf-8", "replace")
        finally:
            self.close()

    def json(self):
        text = self.text()
        try:
            return json.loads(text)
        except ValueError:
            raise LLMError(f"expected JSON, got: {text[:80]!r}", kind="protocol", status=self.status) from None

    def iter_lines(self) -> Iterator[str]:
        try:
            for raw in self._fp:
                yield raw.decode("utf-8", "replace").rstrip("\r\n")
        except (OSError, ValueError) as exc:  # reset mid-stream, or read after close()
            if self._fp.closed:
                return
            raise LLMError(f"connection lost mid-stream: {exc}", kind="connection") from None
        finally:
            self.close()

    def close(self) -> None:
        try:
            self._fp.close()
        except OSError:
            pass


class UrllibTransport:
    """CPython transport.  ``headers`` go on every request (tests send ``Origin``).

    Proxies from the environment are ignored: the server is on this machine.
    """

    def __init__(self, headers: dict | None = None, timeout: float = DEFAULT_TIMEOUT):
        import urllib.request  # here, not at the top: the browser never loads urllib (slow to import there)

        self.headers = dict(headers or {})
        self.timeout = timeout
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def request(self, method: str, url: str, body: dict | None = None, stream: bool = False,
                headers: dict | None = None) -> UrllibResponse:
        import socket
        import urllib.error
        import urllib.request

        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {**self.headers, **(headers or {})}
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            fp = self._opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as err:
            return UrllibResponse(err.code, err)
        except (urllib.error.URLError, socket.timeout, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            raise LLMError(f"could not reach {url}: {reason}", kind="connection") from None
        return UrllibResponse(fp.status, fp)


class _BlockingAsyncResponse:
    def __init__(self, resp: Response):
        self._resp = resp
        self.status = resp.status

    async def json(self):
        return self._resp.json()

    async def text(self) -> str:
        return self._resp.text()

    async def iter_lines(self):
        for line in self._resp.iter_lines():
            yield line

    async def close(self) -> None:
        self._resp.close()

    def header(self, name: str) -> str | None:
        header = getattr(self._resp, "header", None)
        return header(name) if header else None


class BlockingAsyncTransport:
    """A sync transport behind the async protocol: it blocks the event loop,
    which is fine for CPython scripts and tests of the async clients."""

    def __init__(self, transport: Transport | None = None):
        self.transport = transport or UrllibTransport()

    async def request(self, method: str, url: str, body: dict | None = None, stream: bool = False,
                      headers: dict | None = None):
        extra = {"headers": headers} if headers else {}
        return _BlockingAsyncResponse(self.transport.request(method, url, body, stream, **extra))
