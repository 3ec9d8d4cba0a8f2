"""serve.py: only dist/, never a path outside it, the right MIME types, builds when stale."""

import http.client
import os
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import serve  # noqa: E402


@pytest.fixture
def site(tmp_path):
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>q</title>")
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
