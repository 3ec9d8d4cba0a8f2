"""How pure code asks the model: it yields an ``Ask`` and is sent the reply (sans-I/O).

Study generation (``quire.study.generate``) and the document tools (``quire.chat.doctools``)
never call a model.  They are generators: each structured request is ``reply = yield
Ask(prompt, schema, max_tokens)``, and what comes back is the model's text (a
``quire.study.generate.CutReply`` when the server cut it at ``max_tokens``).  The code
that owns the connection runs them: ``drive``, the one driver, with an async ``answer(ask)``: the page, CPython and the
real-server tests (all through ``services.study`` / ``services.chat``), and the unit
tests with a fake model.  A core that fails raises from inside the generator, as any
function would.

>>> def two_questions():
...     first = yield Ask("first?", {"type": "object"}, 16)
...     second = yield Ask("second?", {"type": "object"}, 16)
...     return first + second
>>> import asyncio
>>> async def model(ask):
...     return ask.prompt[:-1]
>>> asyncio.run(drive(two_questions(), model))
'firstsecond'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generator


@dataclass(frozen=True)
class Ask:
    """One structured request: the prompt (one user message), the JSON schema the answer
    must follow, and the most tokens it may take (what the schema allows)."""

    prompt: str
    schema: dict
    max_tokens: int


Steps = Generator[Ask, str, Any]


async def drive(steps: Steps, answer: Callable[[Ask], Awaitable[str]]):
    """Run ``steps`` to its result, answering each ``Ask`` with ``await answer(ask)``: the one
    way the product asks the model for pure code."""
    try:
        ask = next(steps)
        while True:
            ask = steps.send(await answer(ask))
    except StopIteration as done:
        return done.value
