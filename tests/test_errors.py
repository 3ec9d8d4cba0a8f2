"""quire.errors: an expected error reaches the page by its class name and message alone; anything
else, a ValueError from a bug included, is kind "bug" with its traceback."""

import json

import numpy as np
import pytest

from quire import errors, prompts
from quire.chat import memory
from quire.extract import ExtractError
from quire.errors import LibraryError
from quire.llm.events import LLMError
from quire.llm.settings import check_url
from quire.store import StoreError
from quire.study import quiz
from quire.training import TrainCancelled
from quire.vault import VaultError


def asked() -> dict:
    session = memory.new_session()
    memory.add_question(session, "What is ATP?")
    return session


def raised(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the point is to catch whatever it raises
        return exc
    raise AssertionError("did not raise")


EXPECTED = [  # (what raises, its kind, a piece of its message)
    (lambda: check_url("ftp://x"), "InvalidInput", "must start with http:// or https://"),
    # the user's own prompt template in Study naming a variable Quire does not give
    (lambda: prompts.render_text("Use $tone.", {}, name="your quiz template"), "PromptError", "no value given for $tone"),
    (lambda: quiz.start([], "2026-01-01T00:00:00Z"), "InvalidInput", "at least one question"),
    (lambda: memory.edit_question(asked(), 0, " "), "InvalidInput", "the edited question is empty"),
    (lambda: (_ for _ in ()).throw(LibraryError("no source x")), "LibraryError", "no source x"),
    (lambda: (_ for _ in ()).throw(LLMError("could not reach", kind="connection")), "LLMError", "could not reach"),
    (lambda: (_ for _ in ()).throw(TrainCancelled("Train was cancelled")), "TrainCancelled", "cancelled"),
    (lambda: (_ for _ in ()).throw(StoreError("storage failed")), "StoreError", "storage failed"),
    (lambda: (_ for _ in ()).throw(VaultError("the vault is damaged")), "VaultError", "damaged"),
]


@pytest.mark.parametrize("fn, kind, message", EXPECTED, ids=[k + ":" + m for _, k, m in EXPECTED])
def test_an_expected_error_goes_by_its_class_with_no_detail(fn, kind, message):
    exc = raised(fn)
    assert isinstance(exc, errors.QuireError)
    out = errors.reply(exc)
    assert out["kind"] == kind and message in out["error"] and "detail" not in out, out
    assert not out["error"].startswith(kind + ":")  # the message is shown as is, for the person
    json.dumps(out)  # and it crosses to the page as JSON


BUGS = [  # ValueErrors (and others) that only a bug in Quire would raise
    (lambda: int("seven"), "ValueError: invalid literal for int()"),
    (lambda: json.loads("{"), "JSONDecodeError: Expecting property name"),
    (lambda: np.zeros(3).reshape(2, 2), "ValueError: cannot reshape array"),
    (lambda: {}["missing"], "KeyError: 'missing'"),
    (lambda: [].pop(), "IndexError: pop from empty list"),
]


@pytest.mark.parametrize("fn, message", BUGS, ids=[m.split(":")[0] for _, m in BUGS])
def test_anything_else_is_a_bug_with_its_traceback(fn, message):
    out = errors.reply(raised(fn))
    assert out["kind"] == "bug" and out["error"].startswith(message), out
    assert out["detail"].startswith("Traceback (most recent call last):")
    assert "test_errors.py" in out["detail"] and message.split(":")[0] in out["detail"]


def test_a_value_error_is_not_expected_just_for_being_a_value_error():
    assert not isinstance(ValueError("x"), errors.QuireError)
    assert errors.reply(ValueError("x"))["kind"] == "bug"


def test_invalid_input_is_still_a_value_error_for_callers_that_check_arguments():
    with pytest.raises(ValueError, match="must start with http"):
        check_url("ftp://x")


def test_an_expected_error_with_a_traceback_of_its_own_passes_it_on():
    exc = ExtractError("could not read a.txt: KeyError: 'x'", detail="Traceback (most recent call last):\n  ...")
    out = errors.reply(exc)
    assert out == {"ok": False, "error": "could not read a.txt: KeyError: 'x'", "kind": "ExtractError",
                   "detail": "Traceback (most recent call last):\n  ..."}


def test_every_engine_error_class_the_page_may_see_is_expected():
    """The classes quire.browser used to list by name (and the ValueError ones) all derive from QuireError."""
    from quire.services.chat import ChatError
    from quire.study.anki_read import AnkiError
    from quire.study.validate import StudyError
    from quire.vault_library import LibraryDataError

    for cls in (LibraryError, LLMError, TrainCancelled, StoreError, ExtractError, VaultError, ChatError,
                AnkiError, StudyError, LibraryDataError):
        assert issubclass(cls, errors.QuireError), cls
