"""The chat agent: a safe calculator, the clock, the tool schemas the model is given, and
the bounded loop that runs the tool calls it asks for.

    >>> calculator("2 * (3 + 4) ** 2")
    98
    >>> calculator("sqrt(16) + pi")
    7.141592653589793
"""

from __future__ import annotations

import ast
import datetime as _dt
import inspect
import json
import logging
import math
import operator
from dataclasses import dataclass, field
from typing import ClassVar

from quire.errors import QuireError
from quire.llm.events import Event, ToolCall

MAX_EXPR_CHARS = 300  # longer input is not arithmetic a model needs help with
MAX_NODES = 120  # caps the work of one expression
MAX_INT_BITS = 4096  # ~1233 decimal digits; bigger ints are refused before they are built
MAX_EXPONENT = 10_000
MAX_FACTORIAL = 170  # 171! overflows a float anyway
MAX_TOOL_RESULT = 8000  # characters of a tool result fed back to the model
_log = logging.getLogger("quire.chat")


class CalculatorError(QuireError, ValueError):
    """The expression is not plain arithmetic, or its value would be too big."""


def _pow(a, b):
    if isinstance(b, int) and isinstance(a, int):
        if abs(b) > MAX_EXPONENT or (b > 0 and abs(a) > 1 and math.log2(abs(a)) * b > MAX_INT_BITS):
            raise CalculatorError("exponent too large")
    elif isinstance(b, (int, float)) and abs(b) > MAX_EXPONENT:
        raise CalculatorError("exponent too large")
    result = a ** b
    if isinstance(result, complex):
        raise CalculatorError("result is not a real number")
    return result


def _factorial(n):
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    if not isinstance(n, int) or n < 0 or n > MAX_FACTORIAL:
        raise CalculatorError(f"factorial needs a whole number from 0 to {MAX_FACTORIAL}")
    return math.factorial(n)


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow,
           ast.BitXor: _pow}  # people (and models) write 2^10 meaning a power
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
FUNCTIONS = {
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "ln": math.log, "log10": math.log10, "log2": math.log2,
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "atan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh, "degrees": math.degrees,
    "radians": math.radians, "hypot": math.hypot, "floor": math.floor, "ceil": math.ceil, "abs": abs,
    "round": round, "min": min, "max": max, "factorial": _factorial, "gcd": math.gcd,
}
CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _check_size(value):
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculatorError("result too large")
    if isinstance(value, float) and math.isinf(value):
        raise CalculatorError("result too large")
    if isinstance(value, float) and math.isnan(value):
        raise CalculatorError("result is not a number")
    return value


def _eval(node):
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if type(node.value) in (int, float):  # not bool, complex or str
            return _check_size(node.value)
        raise CalculatorError(f"not a number: {node.value!r}")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
                raise CalculatorError("result too large")
        return _check_size(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.Name) and node.id in CONSTANTS:
        return CONSTANTS[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        if node.keywords:
            raise CalculatorError("keyword arguments are not supported")
        return _check_size(FUNCTIONS[node.func.id](*[_eval(a) for a in node.args]))
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
        raise CalculatorError(f"function {name!r} is not available; known: {', '.join(sorted(FUNCTIONS))}")
    if isinstance(node, ast.Name):
        raise CalculatorError(f"unknown name {node.id!r}; known: {', '.join(sorted(FUNCTIONS | CONSTANTS))}")
    raise CalculatorError(f"not allowed in a calculation: {type(node).__name__}")


def calculator(expr: str) -> int | float:
    """Evaluate arithmetic from a parsed tree; nothing is ever passed to eval()."""
    if not isinstance(expr, str) or not expr.strip():
        raise CalculatorError("empty expression")
    if len(expr) > MAX_EXPR_CHARS:
        raise CalculatorError(f"expression longer than {MAX_EXPR_CHARS} characters")
    expr = expr.replace("×", "*").replace("÷", "/").replace("−", "-")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalculatorError(f"cannot parse {expr!r}") from exc
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError("expression too long")
    try:
        return _eval(tree)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except OverflowError:
        raise CalculatorError("result too large") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, CalculatorError):
            raise
        raise CalculatorError(str(exc)) from None


def current_time(now: _dt.datetime | None = None) -> dict:
    """The local date and time (``now`` is for tests).

    >>> current_time(_dt.datetime(2025, 3, 4, 9, 5, tzinfo=_dt.timezone.utc))["weekday"]
    'Tuesday'
    """
    now = now or _dt.datetime.now().astimezone()
    return {"iso": now.isoformat(timespec="seconds"), "date": now.date().isoformat(),
            "time": now.strftime("%H:%M"), "weekday": now.strftime("%A"), "timezone": now.tzname() or ""}


def _tool(name: str, description: str, properties: dict | None = None, required=()) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties or {}, "required": list(required)}}}


TOOL_SCHEMAS = {t["function"]["name"]: t for t in [
    _tool("search_knowledge_base", "Search the user's documents and return the most relevant passages "
          "with their source and page. Use it for any question about the documents' content.",
          {"query": {"type": "string", "description": "What to look for, in the documents' language"},
           "top_k": {"type": "integer", "description": "How many passages to return (1-20)", "minimum": 1,
                     "maximum": 20},
           "document": {"type": "string", "description": "Restrict the search to this document's name"}},
          ["query"]),
    _tool("list_documents", "List the documents in the knowledge base with their names, kinds and sizes."),
    _tool("analyze_document", "Summarise one document or answer a question about it as a whole "
          "(structure, main ideas, key terms).",
          {"document": {"type": "string", "description": "The document's name as list_documents shows it"},
           "aspect": {"type": "string", "enum": ["summary", "outline", "key_terms", "question"],
                      "description": "What to analyse"},
           "question": {"type": "string", "description": "The question when aspect is 'question'"}},
          ["document"]),
    _tool("compare_documents", "Compare two or more documents on a topic and report agreements and differences.",
          {"documents": {"type": "array", "items": {"type": "string"}, "minItems": 2,
                         "description": "Document names as list_documents shows them"},
           "topic": {"type": "string", "description": "What to compare them on"}},
          ["documents", "topic"]),
    _tool("calculator", "Evaluate an arithmetic expression exactly: + - * / // % ** and parentheses, "
          "functions sqrt, log, exp, sin, cos, tan, floor, ceil, round, min, max, factorial; constants pi, e.",
          {"expression": {"type": "string", "description": "For example: (17.5 * 12) / 3 + sqrt(2)"}},
          ["expression"]),
    _tool("current_time", "The current local date, time and weekday."),
]}


def tool_schemas(names=None) -> list[dict]:
    """Schemas for ``names`` (all by default); an unknown name fails listing the valid ones."""
    names = list(TOOL_SCHEMAS) if names is None else list(names)
    unknown = [n for n in names if n not in TOOL_SCHEMAS]
    if unknown:
        raise ValueError(f"unknown tool(s) {', '.join(unknown)}; valid: {', '.join(TOOL_SCHEMAS)}")
    return [TOOL_SCHEMAS[n] for n in names]


# Default implementations for the tools that need no knowledge base.
BUILTIN_IMPLS = {"calculator": lambda expression: calculator(expression), "current_time": lambda: current_time()}


# --- the agent loop --------------------------------------------------------------
@dataclass(frozen=True)
class ToolResult(Event):
    """A tool ran (or failed: ``ok`` is False and ``result`` says why, as the model sees it)."""

    kind: ClassVar[str] = "tool_result"
    name: str
    arguments: dict
    result: str
    ok: bool = True


@dataclass(frozen=True)
class AgentDone(Event):
    """The loop ended.  ``hit_limit`` is True when the model still wanted tools at the last step."""

    kind: ClassVar[str] = "agent_done"
    content: str
    steps: int
    hit_limit: bool
    messages: list = field(default_factory=list)


def _as_text(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_TOOL_RESULT else text[:MAX_TOOL_RESULT] + " …[truncated]"


def _prepare(call: ToolCall, tool_impls: dict):
    """The implementation to run, or why there is none (an unknown tool, arguments that are
    no JSON or do not fit its parameters): the model reads that and may try again."""
    impl = tool_impls.get(call.name)
    if impl is None:
        return None, f"unknown tool {call.name!r}; available: {', '.join(tool_impls)}"
    if "_unparsed" in call.arguments:
        return None, "the arguments were not valid JSON"
    try:
        inspect.signature(impl).bind(**call.arguments)
    except TypeError as exc:
        return None, f"bad arguments for {call.name}: {exc}"
    return impl, None


async def _call(call: ToolCall, impl) -> ToolResult:
    """Run one tool.  An expected failure (``QuireError``: no such document, not arithmetic,
    the model's own answer unusable) is information for the model; anything else is a bug:
    logged with its traceback, and the model is told the tool failed."""
    try:
        value = impl(**call.arguments)
        if inspect.isawaitable(value):
            value = await value
    except QuireError as exc:
        return _failed(call, str(exc) or type(exc).__name__)
    except Exception as exc:
        _log.error("the chat tool %s failed", call.name, exc_info=exc)
        return _failed(call, f"{call.name} failed unexpectedly ({type(exc).__name__}); answer without it")
    return ToolResult(call.name, call.arguments, _as_text(value))


def _failed(call: ToolCall, reason: str) -> ToolResult:
    return ToolResult(call.name, call.arguments, f"error: {reason}", ok=False)


def _tool_message(call: ToolCall, result: ToolResult) -> dict:
    msg = {"role": "tool", "content": result.result, "tool_name": call.name}
    if call.id:
        msg["tool_call_id"] = call.id
    return msg


def _schemas(tool_impls: dict, tools) -> list[dict]:
    return tools if tools is not None else tool_schemas([n for n in tool_impls if n in TOOL_SCHEMAS])


async def run_agent(client, model: str, messages: list[dict], tool_impls: dict, max_steps: int = 4, *, tools=None,
                    **chat_kwargs):
    """Chat, run the tools the model asks for, feed results back; at most ``max_steps`` model calls.

    The last call offers no tools, so the model has to answer with what it has.
    Yields the chat events, a ``ToolResult`` per call and finally ``AgentDone``.
    A tool that fails becomes an ``error: ...`` result the model can read (a bug is
    logged too); a tool may be a plain function or a coroutine function.
    """
    history, schemas = list(messages), _schemas(tool_impls, tools)
    for step in range(1, max_steps + 1):
        last = step == max_steps
        stream = client.chat(model, history, tools=None if last else schemas, **chat_kwargs)
        async for event in stream:
            yield event
        reply = stream.reply
        history.append(reply.message())
        if not reply.tool_calls or last:
            yield AgentDone(reply.text, step, bool(reply.tool_calls), history)
            return
        for call in reply.tool_calls:
            impl, error = _prepare(call, tool_impls)
            result = _failed(call, error) if impl is None else await _call(call, impl)
            history.append(_tool_message(call, result))
            yield result
