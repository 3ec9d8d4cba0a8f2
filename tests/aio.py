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


def drain(events) -> list:
    """Every item of an async iterator (a chat stream, a pull, an agent loop)."""
    async def collect():
        return [e async for e in events]

    return run(collect())
