"""serve.py: only dist/, never a path outside it, the right MIME types, builds when stale, never framed."""

import http.client
import http.server
import os
import sys
import threading
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import serve  # noqa: E402

FRAMED = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'"><title>Quire</title><p>inside</p>'


@pytest.fixture
def site(tmp_path):
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text(FRAMED)
    (dist / "assets" / "a.js").write_text("1")
    (dist / "x.wasm").write_bytes(b"\0asm")
    (tmp_path / "secret.txt").write_text("outside")
    server = serve.make_server(dist, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.environ["QUIRE_SERVE_QUIET"] = "1"
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, resp.getheader("Content-Type"), resp.read()


@pytest.mark.parametrize("path,status,ctype", [
    ("/", 200, "text/html; charset=utf-8"),
    ("/assets/a.js", 200, "text/javascript; charset=utf-8"),
    ("/x.wasm", 200, "application/wasm"),
    ("/../secret.txt", 404, None),
    ("/%2e%2e/secret.txt", 404, None),
    ("/assets/%2e%2e/%2e%2e/secret.txt", 404, None),
    ("/..%2fsecret.txt", 404, None),
])
def test_serves_dist_only_with_the_right_types(site, path, status, ctype):
    got_status, got_type, body = get(site, path)
    assert got_status == status
    assert b"outside" not in body
    if ctype:
        assert got_type == ctype


def test_listens_on_loopback_only(tmp_path):
    server = serve.make_server(tmp_path, 0)
    try:
        assert server.server_address[0] == "127.0.0.1"
    finally:
        server.server_close()


def test_needs_build_when_missing_or_stale(tmp_path):
    root = tmp_path / "repo"
    for name in ("site", "py", "prompts"):
        (root / name).mkdir(parents=True)
    (root / "site" / "index.html").write_text("x")
    dist = root / "dist"
    assert serve.needs_build(dist, root)
    dist.mkdir()
    (dist / "manifest.json").write_text("{}")
    os.utime(root / "site" / "index.html", (1, 1))
    assert not serve.needs_build(dist, root)
    os.utime(root / "site" / "index.html", None)
    os.utime(dist / "manifest.json", (2, 2))
    assert serve.needs_build(dist, root)


def test_default_port_is_fixed():
    """IndexedDB is per origin including the port: a random port would hide the library."""
    assert serve.DEFAULT_PORT == 8765


# --- no site may frame Quire --------------------------------------------------------
def headers(port, path="/"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    return resp


def test_csp_header_is_the_page_policy_plus_frame_ancestors():
    page = (ROOT / "site" / "index.html").read_text(encoding="utf-8")
    meta = serve.META_CSP.search(page).group(1)
    header = serve.csp_header(page)
    assert header == meta + "; frame-ancestors 'none'"
    directives = dict(d.strip().split(" ", 1) for d in header.split(";"))
    # csp.js narrows connect-src at run time to the chosen model server, which may be any
    # http(s) host: a header that named hosts itself would block the person's choice.
    assert set(directives["connect-src"].split()) >= {"'self'", "http:", "https:"}
    assert directives["frame-ancestors"] == "'none'"


def test_csp_header_needs_a_page_policy():
    with pytest.raises(ValueError, match="no Content-Security-Policy"):
        serve.csp_header("<!doctype html><title>no policy</title>")


@pytest.mark.parametrize("path", ["/", "/assets/a.js", "/x.wasm", "/missing"])
def test_every_response_forbids_framing(tmp_path, path):
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text((ROOT / "site" / "index.html").read_text(encoding="utf-8"))
    (dist / "assets" / "a.js").write_text("1")
    (dist / "x.wasm").write_bytes(b"\0asm")
    server = serve.make_server(dist, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        resp = headers(server.server_address[1], path)
        assert resp.getheader("X-Frame-Options") == "DENY"
        assert resp.getheader("Content-Security-Policy") == serve.csp_header((dist / "index.html").read_text())
        assert resp.getheader("X-Content-Type-Options") == "nosniff"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
@pytest.mark.parametrize("quire_server", ["serve.py", "plain http.server (control)"])
def test_another_site_cannot_frame_quire(tmp_path, context, quire_server):
    """A page on another port frames Quire: Chromium refuses to show it (the control shows it does load without the header)."""
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "index.html").write_text(FRAMED)
    if quire_server == "serve.py":
        quire = serve.make_server(dist, 0)
    else:
        quire = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(http.server.SimpleHTTPRequestHandler, directory=str(dist)))
    quire_url = f"http://127.0.0.1:{quire.server_address[1]}/"
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(f'<title>other site</title><iframe id="f" src="{quire_url}"></iframe>')
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(http.server.SimpleHTTPRequestHandler, directory=str(site)))
    for s in (quire, other):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        page = context.new_page()
        refused = []
        page.on("console", lambda m: refused.append(m.text) if "frame-ancestors" in m.text or "X-Frame-Options" in m.text else None)
        with page.expect_event("framenavigated", predicate=lambda f: f.parent_frame is not None):
            page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        page.wait_for_load_state("load")
        child = page.frames[1]
        shown = child.url == quire_url and child.evaluate("document.title") == "Quire"
        if quire_server == "serve.py":
            assert not shown, "Quire was shown inside another site's frame"
            assert refused, "Chromium should report the frame-ancestors refusal"
        else:
            assert shown
    finally:
        for s in (quire, other):
            s.shutdown()
            s.server_close()
