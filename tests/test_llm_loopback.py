"""Which model-server addresses stay on this computer (``quire.llm.loopback``).

The expected origins are what Chromium's ``new URL(url).origin`` gives (checked with
Node's WHATWG URL too); ``test_privacy_browser.py`` runs this same table through the
page's ``csp.js`` so the page and the engine always agree.
"""

import pytest

from quire.llm.loopback import is_loopback, origin, parse

# (address, on this computer?, origin as the browser writes it; None = a browser refuses it)
CASES = [
    ("http://127.0.0.1:11434", True, "http://127.0.0.1:11434"),
    ("http://localhost:11434", True, "http://localhost:11434"),
    ("HTTP://LocalHost", True, "http://localhost"),
    ("https://localhost:443", True, "https://localhost"),
    ("http://127.0.0.1:0443", True, "http://127.0.0.1:443"),
    (" http://127.0.0.1 ", True, "http://127.0.0.1"),
    ("http://127.0.0.1\t:11434", True, "http://127.0.0.1:11434"),
    ("http://127.1:8080", True, "http://127.0.0.1:8080"),          # short IPv4 forms
    ("http://0x7f.1", True, "http://127.0.0.1"),
    ("http://0x7F000001", True, "http://127.0.0.1"),
    ("http://2130706433", True, "http://127.0.0.1"),
    ("http://0177.0.0.1", True, "http://127.0.0.1"),                # octal
    ("http://127.0.0.1.:80", True, "http://127.0.0.1"),
    ("http://127.255.3.4", True, "http://127.255.3.4"),
    ("http://%6cocalhost", True, "http://localhost"),              # percent-encoded host
    ("http://[::1]:11434", True, "http://[::1]:11434"),
    ("http://[0:0:0:0:0:0:0:1]", True, "http://[::1]"),
    ("http://[::ffff:127.0.0.1]:11434", True, "http://[::ffff:7f00:1]:11434"),  # IPv4-mapped loopback
    ("http://[::ffff:7f00:1]", True, "http://[::ffff:7f00:1]"),
    ("http://user:pw@localhost:1", True, "http://localhost:1"),
    ("http://127.0.0.1\\@evil.test", True, "http://127.0.0.1"),   # "\" is "/" in http: the host is 127.0.0.1
    ("http:127.0.0.1", True, "http://127.0.0.1"),
    ("http://127.0.0.1/../evil", True, "http://127.0.0.1"),
    ("http://localhost.evil.com", False, "http://localhost.evil.com"),
    ("http://127.0.0.1.nip.io", False, "http://127.0.0.1.nip.io"),
    ("http://0x7f.1.evil", False, "http://0x7f.1.evil"),
    ("http://user@127.0.0.1@evil.test", False, "http://evil.test"),  # the last "@" ends the user info
    ("http://127.0.0.1:11434@evil.test", False, "http://evil.test"),
    ("http://evil.test#@127.0.0.1", False, "http://evil.test"),
    ("http://evil.test?@127.0.0.1", False, "http://evil.test"),
    ("http://evil.test/127.0.0.1", False, "http://evil.test"),
    ("http:///evil.test", False, "http://evil.test"),
    ("http://evil.test.", False, "http://evil.test."),
    ("http://ex%41mple.com", False, "http://example.com"),
    ("http://evil.test:11434", False, "http://evil.test:11434"),
    ("http://10.0.0.5:11434", False, "http://10.0.0.5:11434"),
    ("http://192.168.1.20:8080", False, "http://192.168.1.20:8080"),
    ("http://0.0.0.0", False, "http://0.0.0.0"),
    ("http://0x.0x.0x.0x", False, "http://0.0.0.0"),
    ("http://[::]", False, "http://[::]"),
    ("http://[::ffff:8.8.8.8]", False, "http://[::ffff:808:808]"),
    ("http://[1:0:0:2:0:0:0:3]", False, "http://[1:0:0:2::3]"),
    ("http://127.0.0.256", False, None),
    ("http://1.2.3.4.5", False, None),
    ("http://08.0.0.1", False, None),
    ("http://127.0.0.1:99999", False, None),
    ("http://[::1%25eth0]", False, None),
    ("http://[::1]x", False, None),
    ("ftp://127.0.0.1", False, None),
    ("file:///home/me/quire/index.html", False, None),
    ("javascript:alert(1)", False, None),
    ("not a url", False, None),
    ("", False, None),
]


@pytest.mark.parametrize("url, loopback, expected_origin", CASES)
def test_address(url, loopback, expected_origin):
    assert (is_loopback(url), origin(url)) == (loopback, expected_origin)


@pytest.mark.parametrize("url, userinfo", [
    ("http://user:pw@localhost:1", True),
    ("http://user@127.0.0.1@evil.test", True),
    ("http://127.0.0.1:11434", False),
    ("http://evil.test#@127.0.0.1", False),
])
def test_user_info_is_noticed(url, userinfo):
    assert parse(url).userinfo is userinfo


def test_not_a_string():
    assert (is_loopback(None), origin(b"http://127.0.0.1")) == (False, None)
