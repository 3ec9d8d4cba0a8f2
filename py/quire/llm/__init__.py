"""Quire's one small LLM interface: a client with ``chat``, ``embed``, ``tags``, ``pull``.

    client = OllamaClient("http://127.0.0.1:11434", BlockingAsyncTransport())  # CPython
    async for event in client.chat("qwen3:4b", [{"role": "user", "content": "Hi"}], think=True):
        print(event.kind, getattr(event, "text", ""))

``OpenAICompatClient`` (llama-server, LM Studio) has the same surface.  Both
clients are async; in Pyodide they get a ``js.fetch`` transport
(``quire.browser.fetch.FetchTransport``; ``quire.llm.transport`` shows the ~20 lines it takes).
Parsing lives in ``quire.llm.parse`` (pure, table-tested), diagnosis of
"Failed to fetch" in ``quire.llm.diagnosis``.
"""

# Names resolve on first use (PEP 562): the browser imports quire.llm.events at start-up and
# should not pay for the clients, the parsers and urllib until a model server is used.
_WHERE = {
    "Diagnosis": "diagnosis",
    "check": "diagnosis",
    "diagnose": "diagnosis",
    "Content": "events",
    "Done": "events",
    "LLMError": "events",
    "ModelInfo": "events",
    "PullProgress": "events",
    "Thinking": "events",
    "ToolCall": "events",
    "ToolCalls": "events",
    "ChatStream": "client",
    "OllamaClient": "ollama",
    "OpenAICompatClient": "openai_compat",
    "OllamaDecoder": "parse",
    "OpenAIDecoder": "parse",
    "Reply": "parse",
    "SSEDecoder": "parse",
    "AsyncTransport": "transport",
    "BlockingAsyncTransport": "transport",
    "Transport": "transport",
    "UrllibTransport": "transport",
}


def __getattr__(name: str):
    if name in _WHERE:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AsyncTransport", "BlockingAsyncTransport", "ChatStream",
    "Content", "Diagnosis", "Done", "LLMError", "ModelInfo", "OllamaClient", "OllamaDecoder",
    "OpenAICompatClient", "OpenAIDecoder", "PullProgress", "Reply", "SSEDecoder", "Thinking", "ToolCall",
    "ToolCalls", "Transport", "UrllibTransport", "check", "diagnose",
]
