"""Expected errors versus bugs, and how either reaches the page.

An error the engine expects derives from ``QuireError``: its message is written for the
person (what happened, what to do) and is shown as is.  Anything else that escapes an
engine call is a bug, even a ``ValueError`` (from numpy, ``int()``, ``json``): the page
then gets kind ``"bug"`` and the traceback as ``detail``, which it logs and offers to copy.

>>> reply(InvalidInput("the edited question is empty"))
{'ok': False, 'error': 'the edited question is empty', 'kind': 'InvalidInput'}
>>> try:
...     int("seven")
... except ValueError as exc:
...     bug = reply(exc)
>>> bug["kind"], bug["error"], "Traceback" in bug["detail"]
('bug', "ValueError: invalid literal for int() with base 10: 'seven'", True)
"""

from __future__ import annotations

import traceback


class QuireError(Exception):
    """An expected, user-facing error; the message says what happened and what to do."""


class InvalidInput(QuireError, ValueError):
    """A value the engine cannot use: an unknown name, a setting out of range, an action that
    does not fit the current state.  Still a ``ValueError`` for callers that check arguments."""


class LibraryError(QuireError):
    """A request the library cannot carry out (an unknown source, a full disk); the message is for the person."""


def traceback_of(exc: BaseException) -> str:
    """The formatted traceback of ``exc`` (with its causes), as Python prints it."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def reply(exc: BaseException) -> dict:
    """The error answer for one engine call: expected errors by their class name and with
    their message (and their own ``detail`` text, if they carry one: an unreadable file's
    traceback); anything else as ``"bug"`` with the traceback in ``detail``."""
    if isinstance(exc, QuireError):
        out = {"ok": False, "error": str(exc), "kind": type(exc).__name__}
        detail = getattr(exc, "detail", None)
        return {**out, "detail": detail} if isinstance(detail, str) and detail else out
    return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "kind": "bug", "detail": traceback_of(exc)}
