"""Calculator, clock, tool schemas and the bounded agent loop."""

import datetime as dt
import logging

import pytest

from aio import drain
from ollama_server import OllamaStub
from quire.errors import InvalidInput
from quire.llm import BlockingAsyncTransport, Content, OllamaClient, UrllibTransport
from quire.chat.agent import (BUILTIN_IMPLS, TOOL_SCHEMAS, AgentDone, CalculatorError, ToolResult, calculator,
                              current_time, run_agent, tool_schemas)


@pytest.mark.parametrize("expr,value", [
    ("1 + 2 * 3", 7),
    ("(1 + 2) * 3", 9),
    ("7 / 2", 3.5),
    ("7 // 2", 3),
    ("-7 // 2", -4),
    ("7 % 3", 1),
    ("2 ** 10", 1024),
    ("2^10", 1024),  # caret means power here
    ("-3 ** 2", -9),
    ("+-+4", -4),
    ("10 ** -2", 0.01),
    ("sqrt(2) ** 2", pytest.approx(2.0)),
    ("log(e)", 1.0),
    ("log(8, 2)", pytest.approx(3.0)),
    ("sin(pi / 2)", 1.0),
    ("round(2.567, 2)", 2.57),
    ("max(1, 5, 3) - min(4, 2)", 3),
    ("factorial(5)", 120),
    ("factorial(5.0)", 120),
    ("abs(-2.5) + floor(2.7) + ceil(2.1)", 7.5),
    ("12 × 3 ÷ 4 − 1", 8.0),
    ("2 ** 1000 % 7", 2),
    ("1_000 + 1", 1001),
    ("  3  ", 3),
    ("(" * 90 + "1" + ")" * 90, 1),
])
def test_calculator(expr, value):
    assert calculator(expr) == value


@pytest.mark.parametrize("expr,message", [
    ("__import__('os').system('echo hi')", "not available"),
    ("().__class__.__bases__[0].__subclasses__()", "not available"),
    ("(1).__class__", "not allowed"),
    ("open('/etc/passwd').read()", "not available"),
    ("eval('1+1')", "not available"),
    ("(lambda: 1)()", "not available"),
    ("[1, 2, 3]", "not allowed"),
    ("'a' * 3", "not a number"),
    ("True + 1", "not a number"),
    ("1j * 1j", "not a number"),
    ("x + 1", "unknown name 'x'"),
    ("math.pi", "not allowed"),
    ("sqrt(x=4)", "keyword"),
    ("1 if 1 else 2", "not allowed"),
    ("1 < 2", "not allowed"),
    ("1 << 100000", "not allowed"),
    ("9 ** 9 ** 9", "too large"),
    ("10 ** 100000", "too large"),
    ("2 ** 5000", "too large"),
    ("(10 ** 1000) * (10 ** 1000)", "too large"),
    ("2.0 ** 100000", "too large"),
    ("10.0 ** 400", "too large"),
    ("1e308 * 10", "too large"),
    ("exp(1000)", "too large"),
    ("factorial(100000)", "factorial"),
    ("factorial(-1)", "factorial"),
    ("1 / 0", "division by zero"),
    ("5 % 0", "division by zero"),
    ("(-8) ** 0.5", "not a real number"),
    ("sqrt(-1)", "math domain error"),
    ("", "empty"),
    ("1 +", "cannot parse"),
    ("1" + "+1" * 200, "longer than"),
    ("-" * 250 + "1", "too long"),
])
def test_calculator_refuses(expr, message):
    with pytest.raises(CalculatorError, match=message):
        calculator(expr)


def test_calculator_never_touches_eval(monkeypatch):
    import builtins

    def boom(*a, **k):
        raise AssertionError("eval called")

    monkeypatch.setattr(builtins, "eval", boom)
    assert calculator("1 + 1") == 2


def test_current_time():
    now = dt.datetime(2025, 3, 4, 9, 5, 30, tzinfo=dt.timezone(dt.timedelta(hours=1), "CET"))
    assert current_time(now) == {"iso": "2025-03-04T09:05:30+01:00", "date": "2025-03-04", "time": "09:05",
                                 "weekday": "Tuesday", "timezone": "CET"}
    assert set(current_time()) == {"iso", "date", "time", "weekday", "timezone"}


def test_tool_schemas_are_well_formed():
    assert list(TOOL_SCHEMAS) == ["search_knowledge_base", "list_documents", "analyze_document",
                                  "compare_documents", "calculator", "current_time"]
    for name, schema in TOOL_SCHEMAS.items():
        fn = schema["function"]
        assert schema["type"] == "function" and fn["name"] == name and fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])
    assert [s["function"]["name"] for s in tool_schemas(["calculator"])] == ["calculator"]
    with pytest.raises(ValueError, match="unknown tool.*valid: search_knowledge_base"):
        tool_schemas(["calculater"])


# --- agent loop against the stub ---------------------------------------------------------
@pytest.fixture
def stub():
    with OllamaStub() as s:
        yield s


@pytest.fixture
def client(stub):
    return OllamaClient(stub.url, BlockingAsyncTransport(UrllibTransport(timeout=10)))


USER = [{"role": "user", "content": "What is 6 times 7?"}]


def test_agent_runs_a_tool_and_answers(stub, client):
    stub.enqueue_chat(tool_calls=[{"name": "calculator", "arguments": {"expression": "6*7"}}])
    stub.enqueue_chat(["It is ", "42."])
    events = drain(run_agent(client, "llama3.2:3b", USER, BUILTIN_IMPLS))
    results = [e for e in events if isinstance(e, ToolResult)]
    assert results == [ToolResult("calculator", {"expression": "6*7"}, "42")]
    done = events[-1]
    assert isinstance(done, AgentDone) and (done.content, done.steps, done.hit_limit) == ("It is 42.", 2, False)
    assert Content("It is ") in events
    first, second = stub.bodies("/api/chat")
    assert [t["function"]["name"] for t in first["tools"]] == ["calculator", "current_time"]
    assert second["messages"][1:] == [
        {"role": "assistant", "content": "",
         "tool_calls": [{"function": {"name": "calculator", "arguments": {"expression": "6*7"}}}]},
        {"role": "tool", "content": "42", "tool_name": "calculator"}]
    assert USER == [{"role": "user", "content": "What is 6 times 7?"}]  # the caller's list is not changed


def test_agent_is_bounded(stub, client):
    for _ in range(6):
        stub.enqueue_chat(tool_calls=[{"name": "current_time", "arguments": {}}])
    events = drain(run_agent(client, "llama3.2:3b", USER, BUILTIN_IMPLS, max_steps=3))
    bodies = stub.bodies("/api/chat")
    assert len(bodies) == 3
    assert ["tools" in b for b in bodies] == [True, True, False]  # the last call must answer
    done = events[-1]
    assert done.hit_limit and done.steps == 3
    assert sum(isinstance(e, ToolResult) for e in events) == 2


def test_agent_reports_tool_failures_to_the_model_and_logs_bugs(stub, client, caplog):
    def search_knowledge_base(query):
        raise RuntimeError("index not built yet")  # a bug, not something the model did

    def list_documents():
        raise InvalidInput("no document named 'x'; the library has: a.md")  # expected: the model may retry

    def analyze_document(document):
        return len(document) + None  # a TypeError inside the tool: a bug, not bad arguments

    stub.enqueue_chat(tool_calls=[
        {"name": "calculator", "arguments": {"expression": "__import__('os')"}},
        {"name": "search_knowledge_base", "arguments": {"query": "cells"}},
        {"name": "delete_everything", "arguments": {}},
        {"name": "calculator", "arguments": {"expr": "1+1"}},
        {"name": "list_documents", "arguments": {}},
        {"name": "analyze_document", "arguments": {"document": "x"}},
    ])
    stub.enqueue_chat("Sorry, I could not do that.")
    impls = {**BUILTIN_IMPLS, "search_knowledge_base": search_knowledge_base, "list_documents": list_documents,
             "analyze_document": analyze_document}
    with caplog.at_level(logging.ERROR, logger="quire.chat"):
        events = drain(run_agent(client, "llama3.2:3b", USER, impls))
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.ok for r in results] == [False] * 6
    assert "not available" in results[0].result
    assert results[1].result == "error: search_knowledge_base failed unexpectedly (RuntimeError); answer without it"
    assert results[2].result.startswith("error: unknown tool 'delete_everything'; available: calculator")
    assert results[3].result.startswith("error: bad arguments for calculator: missing a required argument: 'expression'")
    assert results[4].result == "error: no document named 'x'; the library has: a.md"
    assert results[5].result == "error: analyze_document failed unexpectedly (TypeError); answer without it"
    tool_msgs = [m for m in stub.bodies("/api/chat")[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == [r.result for r in results]
    bugs = [r for r in caplog.records if r.name == "quire.chat"]
    assert [r.exc_info[0] for r in bugs] == [RuntimeError, TypeError]  # each bug logged with its traceback
    assert "index not built yet" in caplog.text and "Traceback" in caplog.text


def test_agent_structured_result_is_json(stub, client):
    stub.enqueue_chat(tool_calls=[{"name": "list_documents", "arguments": {}}])
    stub.enqueue_chat("Two documents.")
    impls = {"list_documents": lambda: [{"name": "bio.pdf", "pages": 12}, {"name": "notes.md"}]}
    events = drain(run_agent(client, "llama3.2:3b", USER, impls))
    assert events[-1].messages[2]["content"] == '[{"name": "bio.pdf", "pages": 12}, {"name": "notes.md"}]'


def test_agent_with_coroutine_tool(stub, client):
    async def search_knowledge_base(query, top_k=5):
        return f"[bio.pdf p.3] {query}: mitochondria make ATP"

    stub.enqueue_chat(tool_calls=[{"name": "search_knowledge_base", "arguments": {"query": "ATP"}}])
    stub.enqueue_chat("Mitochondria make ATP [bio.pdf p.3].")
    events = drain(run_agent(client, "llama3.2:3b", USER, {"search_knowledge_base": search_knowledge_base}))
    assert [e.result for e in events if isinstance(e, ToolResult)] == ["[bio.pdf p.3] ATP: mitochondria make ATP"]
    assert events[-1].content == "Mitochondria make ATP [bio.pdf p.3]." and not events[-1].hit_limit
    assert events[-1].steps == 2
