"""OllamaClient against the stand-in server (over BlockingAsyncTransport, as on CPython)."""

import socket
import threading

import pytest

from aio import drain, run
from ollama_server import OllamaStub
from quire.llm import (BlockingAsyncTransport, Content, Done, LLMError, OllamaClient, OpenAICompatClient,
                       PullProgress, Thinking, ToolCall, ToolCalls, UrllibTransport)

USER = [{"role": "user", "content": "What is in chapter 2?"}]


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


@pytest.fixture
def client(stub):
    return _client(stub.url)


def _client(url, headers=None, timeout=10):
    return OllamaClient(url, BlockingAsyncTransport(UrllibTransport(headers, timeout=timeout)))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_version(client):
    assert run(client.version()).count(".") == 2


def test_tags_fall_back_to_show_for_older_servers(stub, client):
    stub.add_model("nomic-embed-text", ["embedding"], family="nomic-bert", context_length=2048,
                   embedding_length=768, caps_in_tags=False)
    models = {m.name: m for m in run(client.tags())}
    assert models["qwen3:4b"].capabilities == ["completion", "tools", "thinking"]
    assert models["qwen3:4b"].family == "qwen3" and models["qwen3:4b"].quantization == "Q4_K_M"
    old = models["nomic-embed-text:latest"]
    assert old.can("embedding") and (old.context_length, old.embedding_length) == (2048, 768)
    assert stub.bodies("/api/show") == [{"model": "nomic-embed-text:latest"}]  # only the one lacking capabilities


def test_show(client):
    assert run(client.show("qwen3:4b"))["capabilities"] == ["completion", "tools", "thinking"]


def test_embed_batches_and_counts(stub, client):
    texts = [f"passage number {i} about cells" for i in range(5)]
    seen = []
    vectors = run(client.embed("embeddinggemma", texts, batch_size=2, progress=lambda d, t: seen.append((d, t))))
    assert len(vectors) == 5 and all(len(v) == 768 for v in vectors)
    assert [len(b["input"]) for b in stub.bodies("/api/embed")] == [2, 2, 1]
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert stub.embed_counts["embeddinggemma:latest"] == 5
    assert run(client.embed("embeddinggemma", texts[0])) == [vectors[0]]  # a str is one text
    assert stub.embed_counts["embeddinggemma:latest"] == 6


def test_embed_passes_truncate_and_dimensions(stub, client):
    run(client.embed("embeddinggemma", ["x"], dimensions=256, truncate=False, keep_alive="10m"))
    assert stub.bodies("/api/embed")[-1] == {"model": "embeddinggemma", "input": ["x"], "truncate": False,
                                             "dimensions": 256, "keep_alive": "10m"}
    with pytest.raises(LLMError, match="exceeds the context length") as err:
        run(client.embed("all-minilm", ["word " * 400], truncate=False))
    assert err.value.status == 400


def test_embed_on_a_chat_model(client):
    with pytest.raises(LLMError, match='"qwen3:4b" does not support embeddings'):
        run(client.embed("qwen3:4b", ["x"]))


def test_chat_stream_events(stub, client):
    stub.enqueue_chat(["Chapter 2 ", "covers cells."], thinking=["The user asks", " about chapter 2."])
    stream = client.chat("qwen3:4b", USER, think=True, options={"temperature": 0.2, "num_ctx": 8192})
    events = drain(stream)
    assert events[:4] == [Thinking("The user asks"), Thinking(" about chapter 2."), Content("Chapter 2 "),
                          Content("covers cells.")]
    assert isinstance(events[-1], Done) and events[-1].reason == "stop"
    assert events[-1].stats["eval_count"] > 0
    assert stream.reply.text == "Chapter 2 covers cells." and stream.reply.thought.startswith("The user")
    body = stub.bodies("/api/chat")[0]
    assert body == {"model": "qwen3:4b", "messages": USER, "stream": True, "think": True,
                    "options": {"temperature": 0.2, "num_ctx": 8192}}


def test_chat_not_streamed(stub, client):
    stub.enqueue_chat(["a", "b"], done_reason="length")
    events = drain(client.chat("llama3.2:3b", USER, stream=False))
    assert events == [Content("ab"), events[-1]] and events[-1].reason == "length"


def test_chat_with_format_schema(stub, client):
    schema = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}
    stub.enqueue_chat('{"question": "What is ATP?"}')
    reply = run(client.chat("llama3.2:3b", USER, format=schema, options={"temperature": 0}).collect())
    assert reply.text == '{"question": "What is ATP?"}'
    assert stub.bodies("/api/chat")[0]["format"] == schema


def test_chat_tool_calls(stub, client):
    tools = [{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}]
    stub.enqueue_chat(tool_calls=[{"name": "calculator", "arguments": {"expression": "6*7"}}])
    events = drain(client.chat("llama3.2:3b", USER, tools=tools))
    assert ToolCalls((ToolCall("calculator", {"expression": "6*7"}),)) in events
    assert stub.bodies("/api/chat")[0]["tools"] == tools


@pytest.mark.parametrize("model,kwargs,status,message", [
    ("missing-model", {}, 404, 'model "missing-model" not found, try pulling it first'),
    ("llama3.2:3b", {"think": True}, 400, '"llama3.2:3b" does not support thinking'),
    ("embeddinggemma", {}, 400, '"embeddinggemma" does not support chat'),
])
def test_chat_http_errors(client, model, kwargs, status, message):
    with pytest.raises(LLMError) as err:
        drain(client.chat(model, USER, **kwargs))
    assert (err.value.status, err.value.message, err.value.kind) == (status, message, "http")
    assert err.value.model_missing is (status == 404)


def test_chat_mid_stream_error_keeps_partial(stub, client):
    stub.enqueue_chat(["The cell ", "is"], error="model runner has unexpectedly stopped")
    stream = client.chat("llama3.2:3b", USER)
    got = []

    async def read():
        async for event in stream:
            got.append(event)

    with pytest.raises(LLMError) as err:
        run(read())
    assert got == [Content("The cell "), Content("is")]
    assert (err.value.kind, err.value.partial) == ("stream", "The cell is")
    assert "unexpectedly stopped" in str(err.value) and stream.reply.text == "The cell is"


def test_stop_button_closes_mid_stream(stub, client):
    hold = threading.Event()
    stub.enqueue_chat(["first", "second", "third"], hold=hold)
    stream = client.chat("llama3.2:3b", USER)

    async def stop():
        first = await anext(stream)  # arrives while the server holds the rest
        await stream.close()
        hold.set()
        with pytest.raises(StopAsyncIteration):
            await anext(stream)
        return first

    assert run(stop()) == Content("first")
    assert stream.reply.text == "first" and stream.reply.done is None


def test_pull(stub, client):
    progress = drain(client.pull("nomic-embed-text"))
    assert progress[0] == PullProgress("pulling manifest")
    assert [p.fraction for p in progress if p.total] == [0.0, 0.25, 0.5, 1.0]
    assert progress[-1].status == "success"
    assert "nomic-embed-text:latest" in [m.name for m in run(client.tags())]


def test_pull_unknown_model(client):
    with pytest.raises(LLMError, match="file does not exist") as err:
        drain(client.pull("no-such-model"))
    assert err.value.kind == "stream"


def test_connection_refused():
    client = _client(f"http://127.0.0.1:{free_port()}", timeout=5)
    with pytest.raises(LLMError) as err:
        run(client.version())
    assert err.value.kind == "connection" and err.value.status is None


def test_refused_origin_is_a_403_naming_cors(stub):
    client = _client(stub.url, {"Origin": "null"})
    with pytest.raises(LLMError, match="CORS") as err:
        run(client.version())
    assert err.value.status == 403


@pytest.mark.parametrize("cls", [OllamaClient, OpenAICompatClient])
def test_client_needs_a_transport(cls):
    with pytest.raises(ValueError, match=f"{cls.__name__} needs an AsyncTransport: FetchTransport"):
        cls("http://127.0.0.1:11434")
