"""Is a model-server address on this computer?  Parsed the way the browser parses it.

A loopback server (127.0.0.0/8, ``localhost``, ``[::1]``) keeps every question and
passage on this machine, so Quire uses it as stored.  Anything else is another computer
and needs the person's confirmation in the tab (``quire.services.llm``).  The host is
read with the WHATWG URL rules that ``fetch`` and the page's ``csp.js`` use, so a
trick such as ``http://user@127.0.0.1@evil.test`` names the host the browser would
really contact (``evil.test``), and ``http://0x7f.1`` is the ``127.0.0.1`` it becomes:

>>> is_loopback("http://0x7f.1:11434"), origin("http://0x7f.1:11434")
(True, 'http://127.0.0.1:11434')
>>> is_loopback("http://user@127.0.0.1@evil.test"), is_loopback("http://localhost.evil.com")
(False, False)

An address this module cannot read exactly as a browser would (non-ASCII host names,
IPv6 zone ids) counts as "not loopback": the cost of a wrong "no" is one confirmation,
the cost of a wrong "yes" is the person's documents on someone else's machine.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple
from urllib.parse import unquote

DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters the URL standard forbids in a host; a browser refuses the address.
_FORBIDDEN = set("\x00\t\n\r #/:<>?@[\\]^|%")


class Address(NamedTuple):
    scheme: str
    host: str          # as the browser serializes it: "127.0.0.1", "[::1]", "evil.test"
    port: int | None   # None for the scheme's default port
    userinfo: bool     # "user:password@" was present (fetch refuses such addresses)
    loopback: bool

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.host}" + (f":{self.port}" if self.port is not None else "")


def parse(url: str) -> Address | None:
    """The parts of an http(s) address that decide where it goes, or None if a browser
    would refuse it (or this module cannot be sure how a browser reads it).

    >>> parse("HTTP://[0:0::1]:80/api").origin
    'http://[::1]'
    """
    if not isinstance(url, str):
        return None
    url = url.strip("".join(map(chr, range(0x21))))   # the standard trims C0 controls and spaces
    url = url.replace("\t", "").replace("\n", "").replace("\r", "")
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep or scheme not in DEFAULT_PORTS:
        return None
    rest = rest.replace("\\", "/")                     # http(s) treat "\" as "/"
    rest = rest.lstrip("/")                            # "http:evil.test" and "http:///evil.test" too
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority = rest[:end]
    userinfo, at, hostport = authority.rpartition("@")  # the last "@" ends the user info
    host_text, port_text = _split_port(hostport)
    if host_text is None:
        return None
    port = _port(port_text, scheme)
    if port is False:
        return None
    host = _host(host_text)
    if host is None:
        return None
    return Address(scheme, host[0], port, bool(at), host[1])


def is_loopback(url: str) -> bool:
    """True only when the browser would send this address's requests to this computer."""
    address = parse(url)
    return bool(address and address.loopback)


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` exactly as ``new URL(url).origin`` shows it in a browser."""
    address = parse(url)
    return address.origin if address else None


def _split_port(hostport: str) -> tuple[str | None, str]:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0:
            return None, ""
        rest = hostport[close + 1:]
        if rest and not rest.startswith(":"):
            return None, ""
        return hostport[:close + 1], rest[1:]
    host, _, port = hostport.partition(":")
    return host, port


def _port(text: str, scheme: str):
    if text == "":
        return None
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        return False
    port = int(text)
    return None if port == DEFAULT_PORTS[scheme] else port


def _host(text: str) -> tuple[str, bool] | None:
    """(serialized host, is loopback) or None."""
    if text.startswith("["):
        return _ipv6(text[1:-1])
    try:
        text = unquote(text, errors="strict") if "%" in text else text
    except UnicodeDecodeError:
        return None
    if not text or not text.isascii() or any(c in _FORBIDDEN or ord(c) < 0x20 or c == "\x7f" for c in text):
        return None
    text = text.lower()
    if _ends_in_number(text):
        ip = _ipv4(text)
        if ip is None:
            return None
        return ip, ip.startswith("127.")
    return text, text == "localhost"


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last and all(c in "0123456789" for c in last):
        return True
    return last.startswith("0x") and all(c in "0123456789abcdef" for c in last[2:])


def _ipv4(host: str) -> str | None:
    """The URL standard's IPv4 parser: 127.1, 0x7f.1, 2130706433, 0177.0.0.1 are all 127.0.0.1."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4 or "" in parts:
        return None
    numbers = []
    for part in parts:
        base = 10
        if part[:2] == "0x":
            part, base = part[2:], 16
        elif len(part) > 1 and part[0] == "0":
            part, base = part[1:], 8
        try:
            numbers.append(int(part, base) if part else 0)
        except ValueError:
            return None
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return str(ipaddress.IPv4Address(value))


def _ipv6(text: str) -> tuple[str, bool] | None:
    if "%" in text:  # zone ids: browsers refuse them
        return None
    try:
        ip = ipaddress.IPv6Address(text)
    except ValueError:
        return None
    mapped = ip.ipv4_mapped
    loopback = ip == ipaddress.IPv6Address("::1") or bool(mapped and mapped.is_loopback)
    return f"[{_ipv6_text(ip)}]", loopback


def _ipv6_text(ip: ipaddress.IPv6Address) -> str:
    """Hex groups with the first longest run of zeros (two or more) as "::", as browsers write it."""
    groups = [int.from_bytes(ip.packed[i:i + 2], "big") for i in range(0, 16, 2)]
    best, best_len, i = -1, 1, 0
    while i < 8:
        j = i
        while j < 8 and groups[j] == 0:
            j += 1
        if j - i > best_len:
            best, best_len = i, j - i
        i = max(j, i + 1)
    text = [format(g, "x") for g in groups]
    if best < 0:
        return ":".join(text)
    return ":".join(text[:best]) + "::" + ":".join(text[best + best_len:])
