"""Drive the async LLM clients from plain test functions.

    >>> async def two():
    ...     yield 1
    ...     yield 2
    >>> drain(two())
    [1, 2]
"""

import asyncio


def run(awaitable):
    """The awaitable's result, on a fresh event loop."""
    return asyncio.run(awaitable)


def answered(steps, answer):
    """A sans-I/O core (``quire.llm.ask.Steps``) run by the product's one driver,
    ``quire.llm.ask.drive``, with a plain function as the model.

    >>> from quire.llm.ask import Ask
    >>> def one():
    ...     return (yield Ask("q?", {}, 8))
    >>> answered(one(), lambda ask: ask.prompt.upper())
    'Q?'
    """
    from quire.llm.ask import drive

    async def model(ask):
        return answer(ask)
    return asyncio.run(drive(steps, model))


def drain(events) -> list:
    """Every item of an async iterator (a chat stream, a pull, an agent loop)."""
    async def collect():
        return [e async for e in events]

    return run(collect())
