"""Opt-in smoke test against a real Ollama: ``OLLAMA_HOST=127.0.0.1:11434 pytest tests/test_ollama_live.py``.

Skipped unless OLLAMA_HOST is set and the server answers.  Uses whatever
models are installed (override with QUIRE_LIVE_CHAT_MODEL / QUIRE_LIVE_EMBED_MODEL)
and checks that the real server matches the shapes the stub reproduces.
"""

import os
import urllib.request

import pytest

from aio import drain, run
from quire.llm import BlockingAsyncTransport, Content, Done, LLMError, OllamaClient, UrllibTransport, check


def host_url(value: str) -> str:
    """OLLAMA_HOST as Ollama reads it: scheme and port optional; 0.0.0.0 means this machine.

    >>> host_url("0.0.0.0"), host_url("http://example:8080/")
    ('http://127.0.0.1:11434', 'http://example:8080')
    """
    value = value.strip().rstrip("/")
    if "://" not in value:
        value = "http://" + value
    scheme, rest = value.split("://", 1)
    if ":" not in rest.split("/")[0]:
        rest += ":11434"
    return f"{scheme}://{rest.replace('0.0.0.0', '127.0.0.1', 1)}"


@pytest.fixture(scope="module")
def live():
    raw = os.environ.get("OLLAMA_HOST")
    if not raw:
        pytest.skip("opt-in: set OLLAMA_HOST (e.g. 127.0.0.1:11434) to smoke-test a real Ollama")
    client = OllamaClient(host_url(raw), BlockingAsyncTransport(UrllibTransport(timeout=120)))
    probe = OllamaClient(client.base_url, BlockingAsyncTransport(UrllibTransport(timeout=3)))
    try:
        version = run(probe.version())
    except LLMError as exc:
        pytest.skip(f"no Ollama answering at {client.base_url} (OLLAMA_HOST={raw!r}): {exc}")
    return client, version, run(client.tags())


def pick(models, capability, env):
    name = os.environ.get(env)
    if name:
        return name
    found = [m.name for m in models if m.can(capability)]
    if not found:
        pytest.skip(f"no installed model with capability {capability!r}; pull one or set {env}")
    return found[0]


def test_version_and_tags(live):
    client, version, models = live
    assert version.count(".") >= 1
    assert all(m.capabilities for m in models), "capabilities missing even after /api/show"


def test_loopback_origin_is_allowed(live):
    client, _, _ = live
    req = urllib.request.Request(client.base_url + "/api/version", headers={"Origin": "http://127.0.0.1:8765"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=5) as resp:
        assert resp.status == 200
        assert resp.headers["Access-Control-Allow-Origin"] in ("http://127.0.0.1:8765", "*")


def test_chat_streams(live):
    client, _, models = live
    model = pick(models, "completion", "QUIRE_LIVE_CHAT_MODEL")
    stream = client.chat(model, [{"role": "user", "content": "Reply with the single word: yes"}],
                         options={"temperature": 0, "num_predict": 20})
    events = drain(stream)
    assert isinstance(events[-1], Done) and events[-1].stats.get("eval_count", 0) > 0
    assert any(isinstance(e, Content) for e in events) or stream.reply.thought


def test_embed(live):
    client, _, models = live
    model = pick(models, "embedding", "QUIRE_LIVE_EMBED_MODEL")
    a, b = run(client.embed(model, ["the cell makes energy", "mitochondria produce ATP"]))
    assert len(a) == len(b) > 0
    assert abs(sum(x * x for x in a) - 1.0) < 1e-3  # Ollama returns L2-normalised vectors


def test_unknown_model_error_shape(live):
    client, _, _ = live
    with pytest.raises(LLMError) as err:
        drain(client.chat("quire-no-such-model-xyz", [{"role": "user", "content": "hi"}]))
    assert err.value.status == 404 and err.value.model_missing


def test_diagnosis_connected(live):
    client, _, _ = live
    assert run(check(client, "http://127.0.0.1:8765")).status == "connected"
