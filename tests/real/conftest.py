"""The real-server tier: llama.cpp's ``llama-server`` (built from the pinned sdist, cached)
serving Gemma 3 270M on loopback, as a person would run it.

Two instances, as llama-server needs: ``chat`` (Gemma 3 template from ``gemma3.jinja``,
Jinja on, one thread) and ``embeddings`` (``--embeddings``, which may refuse completions).
The build takes long on a fresh machine (see ``provision.py``); ``tests/run.py`` starts it
before the rest of the suite, and these tests run last and wait for it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from . import provision

HERE = Path(__file__).resolve().parent

TEMPLATE = HERE / "gemma3.jinja"
CHAT_ALIAS = "gemma3-270m"
EMBED_ALIAS = "gemma3-270m-embed"
CONTEXT = 4096
START_TIMEOUT = 120  # seconds for the model to load on a busy 2-core machine


# tests/conftest.py runs this tier last, so the build started by tests/run.py has the suite's time.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 5):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as r:
        return json.load(r)


class LlamaServer:
    """One llama-server process on 127.0.0.1; ``url`` once ``/health`` says ok."""

    def __init__(self, binary: Path, model: Path, alias: str, log: Path, extra: list[str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port), "--alias", alias,
               # --seed: the same sampling every run (a weak model at temperature 0.1 otherwise
               # sometimes gives a quiz whose options all repeat, and the test flips)
               "-t", "1", "-c", str(CONTEXT), "-np", "1", "--no-webui", "--seed", "7", *extra]
        self.proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT)

    def wait(self) -> "LlamaServer":
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited ({self.proc.returncode}):\n{self.log.read_text()[-3000:]}")
            try:
                if get_json(self.url + "/health", 2).get("status") == "ok":
                    return self
            except OSError:
                pass
            time.sleep(0.2)  # polling the server's own readiness endpoint
        raise RuntimeError(f"llama-server not ready after {START_TIMEOUT} s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture(scope="session")
def llama_binary() -> Path:
    started = time.monotonic()
    binary = provision.llama_server(int(os.environ.get("QUIRE_BUILD_JOBS", "2")))
    waited = time.monotonic() - started
    note = (binary.parent / "build-seconds")
    print(f"\nllama-server: {binary} (waited {waited:.0f} s here; build took "
          f"{note.read_text().strip() if note.exists() else 'unknown'})", flush=True)
    return binary


@pytest.fixture(scope="session")
def gemma() -> Path:
    return provision.gemma_gguf()


@pytest.fixture(scope="session")
def llama_chat(llama_binary, gemma, tmp_path_factory):
    server = LlamaServer(llama_binary, gemma, CHAT_ALIAS, tmp_path_factory.mktemp("llama") / "chat.log",
                         ["--jinja", "--chat-template-file", str(TEMPLATE)])
    try:
        yield server.wait()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_embed(llama_binary, gemma, tmp_path_factory):
    server = LlamaServer(llama_binary, gemma, EMBED_ALIAS, tmp_path_factory.mktemp("llama") / "embed.log",
                         ["--embeddings", "--pooling", "mean"])
    try:
        yield server.wait()
    finally:
        server.stop()


KEY = "quire-test-Kx7f2Qw9-not-a-real-key"  # what `llama-server --api-key` demands as `Authorization: Bearer`


@pytest.fixture(scope="session")
def llama_keyed(llama_binary, gemma, tmp_path_factory):
    """A chat instance that refuses every request without ``Authorization: Bearer KEY`` (401).

    Without prompt caching, so a request's reply does not depend on the requests before it: with
    the key flow's probes cached first, the 270M model once wrote flashcards it did not write on a
    fresh server (a CI run: cloze cards with no deletion)."""
    server = LlamaServer(llama_binary, gemma, CHAT_ALIAS, tmp_path_factory.mktemp("llama") / "keyed.log",
                         ["--jinja", "--chat-template-file", str(TEMPLATE), "--api-key", KEY, "--no-cache-prompt"])
    try:
        yield server.wait()
    finally:
        server.stop()
