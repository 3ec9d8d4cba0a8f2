"""OllamaClient and AsyncOllamaClient against the stand-in server."""

import asyncio
import socket
import threading

import pytest

from ollama_server import OllamaStub
from quire.llm import (AsyncOllamaClient, BlockingAsyncTransport, Content, Done, LLMError, OllamaClient,
                       PullProgress, Thinking, ToolCall, ToolCalls, UrllibTransport)

USER = [{"role": "user", "content": "What is in chapter 2?"}]


@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


@pytest.fixture
def client(stub):
    return OllamaClient(stub.url, UrllibTransport(timeout=10))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_version(client):
    assert client.version().count(".") == 2


def test_tags_fall_back_to_show_for_older_servers(stub, client):
    stub.add_model("nomic-embed-text", ["embedding"], family="nomic-bert", context_length=2048,
                   embedding_length=768, caps_in_tags=False)
    models = {m.name: m for m in client.tags()}
    assert models["qwen3:4b"].capabilities == ["completion", "tools", "thinking"]
    assert models["qwen3:4b"].family == "qwen3" and models["qwen3:4b"].quantization == "Q4_K_M"
    old = models["nomic-embed-text:latest"]
    assert old.can("embedding") and (old.context_length, old.embedding_length) == (2048, 768)
    assert stub.bodies("/api/show") == [{"model": "nomic-embed-text:latest"}]  # only the one lacking capabilities


def test_show(client):
    assert client.show("qwen3:4b")["capabilities"] == ["completion", "tools", "thinking"]


def test_embed_batches_and_counts(stub, client):
    texts = [f"passage number {i} about cells" for i in range(5)]
    seen = []
    vectors = client.embed("embeddinggemma", texts, batch_size=2, progress=lambda d, t: seen.append((d, t)))
    assert len(vectors) == 5 and all(len(v) == 768 for v in vectors)
    assert [len(b["input"]) for b in stub.bodies("/api/embed")] == [2, 2, 1]
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert stub.embed_counts["embeddinggemma:latest"] == 5
    assert client.embed("embeddinggemma", texts[0]) == [vectors[0]]  # a str is one text
    assert stub.embed_counts["embeddinggemma:latest"] == 6


def test_embed_passes_truncate_and_dimensions(stub, client):
    client.embed("embeddinggemma", ["x"], dimensions=256, truncate=False, keep_alive="10m")
    assert stub.bodies("/api/embed")[-1] == {"model": "embeddinggemma", "input": ["x"], "truncate": False,
                                             "dimensions": 256, "keep_alive": "10m"}
    with pytest.raises(LLMError, match="exceeds the context length") as err:
        client.embed("all-minilm", ["word " * 400], truncate=False)
    assert err.value.status == 400


def test_embed_on_a_chat_model(client):
    with pytest.raises(LLMError, match='"qwen3:4b" does not support embeddings'):
        client.embed("qwen3:4b", ["x"])


def test_chat_stream_events(stub, client):
    stub.enqueue_chat(["Chapter 2 ", "covers cells."], thinking=["The user asks", " about chapter 2."])
    stream = client.chat("qwen3:4b", USER, think=True, options={"temperature": 0.2, "num_ctx": 8192})
    events = list(stream)
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
    events = list(client.chat("llama3.2:3b", USER, stream=False))
    assert events == [Content("ab"), events[-1]] and events[-1].reason == "length"


def test_chat_with_format_schema(stub, client):
    schema = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}
    stub.enqueue_chat('{"question": "What is ATP?"}')
    reply = client.chat("llama3.2:3b", USER, format=schema, options={"temperature": 0}).collect()
    assert reply.text == '{"question": "What is ATP?"}'
    assert stub.bodies("/api/chat")[0]["format"] == schema


def test_chat_tool_calls(stub, client):
    tools = [{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}]
    stub.enqueue_chat(tool_calls=[{"name": "calculator", "arguments": {"expression": "6*7"}}])
    events = list(client.chat("llama3.2:3b", USER, tools=tools))
    assert ToolCalls((ToolCall("calculator", {"expression": "6*7"}),)) in events
    assert stub.bodies("/api/chat")[0]["tools"] == tools


@pytest.mark.parametrize("model,kwargs,status,message", [
    ("missing-model", {}, 404, 'model "missing-model" not found, try pulling it first'),
    ("llama3.2:3b", {"think": True}, 400, '"llama3.2:3b" does not support thinking'),
    ("embeddinggemma", {}, 400, '"embeddinggemma" does not support chat'),
])
def test_chat_http_errors(client, model, kwargs, status, message):
    with pytest.raises(LLMError) as err:
        list(client.chat(model, USER, **kwargs))
    assert (err.value.status, err.value.message, err.value.kind) == (status, message, "http")
    assert err.value.model_missing is (status == 404)


def test_chat_mid_stream_error_keeps_partial(stub, client):
    stub.enqueue_chat(["The cell ", "is"], error="model runner has unexpectedly stopped")
    stream = client.chat("llama3.2:3b", USER)
    got = []
    with pytest.raises(LLMError) as err:
        for event in stream:
            got.append(event)
    assert got == [Content("The cell "), Content("is")]
    assert (err.value.kind, err.value.partial) == ("stream", "The cell is")
    assert "unexpectedly stopped" in str(err.value) and stream.reply.text == "The cell is"


def test_stop_button_closes_mid_stream(stub, client):
    hold = threading.Event()
    stub.enqueue_chat(["first", "second", "third"], hold=hold)
    stream = client.chat("llama3.2:3b", USER)
    assert next(stream) == Content("first")  # arrives while the server holds the rest
    stream.close()
    hold.set()
    assert stream.reply.text == "first" and stream.reply.done is None
    with pytest.raises(StopIteration):
        next(stream)


def test_pull(stub, client):
    progress = list(client.pull("nomic-embed-text"))
    assert progress[0] == PullProgress("pulling manifest")
    assert [p.fraction for p in progress if p.total] == [0.0, 0.25, 0.5, 1.0]
    assert progress[-1].status == "success"
    assert "nomic-embed-text:latest" in [m.name for m in client.tags()]


def test_pull_unknown_model(client):
    with pytest.raises(LLMError, match="file does not exist") as err:
        list(client.pull("no-such-model"))
    assert err.value.kind == "stream"


def test_connection_refused():
    client = OllamaClient(f"http://127.0.0.1:{free_port()}", UrllibTransport(timeout=5))
    with pytest.raises(LLMError) as err:
        client.version()
    assert err.value.kind == "connection" and err.value.status is None


def test_refused_origin_is_a_403_naming_cors(stub):
    client = OllamaClient(stub.url, UrllibTransport({"Origin": "null"}, timeout=10))
    with pytest.raises(LLMError, match="CORS") as err:
        client.version()
    assert err.value.status == 403


# --- async flavour: same surface over an AsyncTransport ------------------------------
def test_async_client(stub):
    async def run():
        client = AsyncOllamaClient(stub.url, BlockingAsyncTransport(UrllibTransport(timeout=10)))
        stub.enqueue_chat(["as", "ync"], thinking="t")
        stub.add_model("old-embed", ["embedding"], caps_in_tags=False)
        version = await client.version()
        models = {m.name: m for m in await client.tags()}
        vectors = await client.embed("all-minilm", ["a", "b", "c"], batch_size=2)
        stream = client.chat("qwen3:4b", USER, think=True)
        events = [e async for e in stream]
        pulled = [p async for p in client.pull("qwen3:0.6b")]
        with pytest.raises(LLMError) as err:
            await client.chat("nope", USER).collect()
        return version, models, vectors, events, stream, pulled, err.value

    version, models, vectors, events, stream, pulled, err = asyncio.run(run())
    assert version and models["old-embed:latest"].capabilities == ["embedding"]
    assert len(vectors) == 3 and stub.embed_counts["all-minilm:latest"] == 3
    assert events[:3] == [Thinking("t"), Content("as"), Content("ync")] and stream.reply.text == "async"
    assert pulled[-1].status == "success" and err.model_missing


def test_async_client_needs_a_transport():
    with pytest.raises(ValueError, match="AsyncTransport"):
        AsyncOllamaClient("http://127.0.0.1:11434")
