#!/usr/bin/env python3
"""Serve the built bundle (``dist/``) on 127.0.0.1, building it first when needed.

    python serve.py            # http://127.0.0.1:8765/
    python serve.py --open     # and open it in the default browser

The port is fixed by default on purpose: the browser keeps Quire's library per
origin, and the origin includes the port, so a new port would show an empty library.
Only ``dist/`` is served, never the source tree, and no path can escape it.
"""

from __future__ import annotations

import argparse
import html
import http.server
import os
import re
import subprocess
import sys
import webbrowser
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULT_PORT = 8765  # fixed: IndexedDB is per origin, and the origin includes the port
SOURCES = ["site", "py", "prompts", "build.py", "pyproject.toml"]

MIME = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".svg": "image/svg+xml",
    ".md": "text/markdown; charset=utf-8",
    ".whl": "application/zip",
    ".zip": "application/zip",
    ".png": "image/png",
}


# frame-ancestors is ignored in a <meta> policy, so only a header can stop other sites
# from framing Quire (clickjacking); X-Frame-Options says the same to older browsers.
FRAME_POLICY = "frame-ancestors 'none'"
META_CSP = re.compile(r'<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"', re.I)


def csp_header(index_html: str) -> str:
    """The page's own policy plus frame-ancestors, for the Content-Security-Policy header.

        csp_header('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">')
        -> "default-src 'none'; frame-ancestors 'none'"

    Every policy a page has is enforced, so the header repeats the static <meta> one from
    index.html exactly: a header stricter than the page (say on connect-src, which
    csp.js narrows at run time to the model server the person chose) would break it.
    """
    found = META_CSP.search(index_html)
    if not found:
        raise ValueError("index.html has no Content-Security-Policy <meta>: rebuild with python build.py")
    policy = html.unescape(found.group(1)).strip().rstrip(";")
    return f"{policy}; {FRAME_POLICY}"


def newest_source_mtime(root: Path = ROOT) -> float:
    newest = 0.0
    for name in SOURCES:
        path = root / name
        paths = [path] if path.is_file() else path.rglob("*")
        for p in paths:
            if p.is_file() and "__pycache__" not in p.parts:
                newest = max(newest, p.stat().st_mtime)
    return newest


def needs_build(dist: Path, root: Path = ROOT) -> bool:
    stamp = dist / "manifest.json"
    return not stamp.is_file() or stamp.stat().st_mtime < newest_source_mtime(root)


class BundleHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from one folder, with the right types and no escapes."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME}
    csp = FRAME_POLICY  # make_server sets the page's full policy

    def translate_path(self, path: str) -> str:
        root = Path(self.directory).resolve()
        candidate = Path(super().translate_path(path)).resolve()
        if candidate != root and root not in candidate.parents:
            return str(root / "__outside__")  # a path that cannot exist: answers 404
        return str(candidate)

    def end_headers(self) -> None:
        # Let the browser revalidate; the service worker is what keeps Quire offline.
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", self.csp)
        self.send_header("X-Frame-Options", "DENY")
        super().end_headers()

    def log_message(self, fmt: str, *args) -> None:
        if os.environ.get("QUIRE_SERVE_QUIET") != "1":
            super().log_message(fmt, *args)


def make_server(dist: Path, port: int) -> http.server.ThreadingHTTPServer:
    index = dist / "index.html"
    csp = csp_header(index.read_text(encoding="utf-8")) if index.is_file() else FRAME_POLICY
    handler = partial(type("Handler", (BundleHandler,), {"csp": csp}), directory=str(dist))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve Quire's built bundle on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="the built bundle to serve")
    parser.add_argument("--open", action="store_true", help="open Quire in the default browser")
    parser.add_argument("--no-build", action="store_true", help="serve dist/ as it is, even if sources are newer")
    args = parser.parse_args(argv)

    if not args.no_build and args.dist == ROOT / "dist" and needs_build(args.dist):
        print("dist/ is missing or older than the sources: building…", flush=True)
        if subprocess.run([sys.executable, str(ROOT / "build.py"), "--dist", str(args.dist)]).returncode != 0:
            return 1
    if not (args.dist / "index.html").is_file():
        print(f"{args.dist} has no index.html: run python build.py first", file=sys.stderr)
        return 1
    try:
        server = make_server(args.dist, args.port)
    except OSError as exc:
        print(f"cannot listen on 127.0.0.1:{args.port} ({exc.strerror}). Is Quire already running? "
              f"Open http://127.0.0.1:{args.port}/ or pick another port with --port.", file=sys.stderr)
        return 1
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    print(f"Quire is running at {url}  (Ctrl+C stops it)", flush=True)
    if args.open:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
