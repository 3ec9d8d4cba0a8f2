"""Quire's one small LLM interface: a client with ``chat``, ``embed``, ``tags``, ``pull``.

    client = OllamaClient("http://127.0.0.1:11434")          # CPython: UrllibTransport
    for event in client.chat("qwen3:4b", [{"role": "user", "content": "Hi"}], think=True):
        print(event.kind, getattr(event, "text", ""))

``OpenAICompatClient`` (llama-server, LM Studio) has the same surface.  In
Pyodide use ``AsyncOllamaClient`` / ``AsyncOpenAICompatClient`` with a
``js.fetch`` transport; ``quire.llm.transport`` shows the ~20 lines it takes.
Parsing lives in ``quire.llm.parse`` (pure, table-tested), diagnosis of
"Failed to fetch" in ``quire.llm.diagnosis``.
"""

from .diagnosis import Diagnosis, check, diagnose
from .events import Content, Done, LLMError, ModelInfo, PullProgress, Thinking, ToolCall, ToolCalls
from .ollama import AsyncChatStream, AsyncOllamaClient, ChatStream, OllamaClient
from .openai_compat import AsyncOpenAICompatClient, OpenAICompatClient
from .parse import OllamaDecoder, OpenAIDecoder, Reply, SSEDecoder
from .transport import AsyncTransport, BlockingAsyncTransport, Transport, UrllibTransport

__all__ = [
    "AsyncChatStream", "AsyncOllamaClient", "AsyncOpenAICompatClient", "AsyncTransport", "BlockingAsyncTransport", "ChatStream",
    "Content", "Diagnosis", "Done", "LLMError", "ModelInfo", "OllamaClient", "OllamaDecoder",
    "OpenAICompatClient", "OpenAIDecoder", "PullProgress", "Reply", "SSEDecoder", "Thinking", "ToolCall",
    "ToolCalls", "Transport", "UrllibTransport", "check", "diagnose",
]
