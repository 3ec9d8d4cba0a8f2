"""quire.study.schemas: every schema bounds itself, so grammar-constrained decoding ends."""

import json

import pytest

from quire.study.schemas import KINDS, LENGTHS, max_chars, schema_for, token_budget


def walk(schema, path="$"):
    """Every (path, sub-schema) in a schema."""
    yield path, schema
    for name, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{path}.{name}")
    if "items" in schema:
        yield from walk(schema["items"], f"{path}[]")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shrink", [0, 1])
def test_every_array_and_string_is_bounded(kind, shrink):
    for path, sub in walk(schema_for(kind, count=4, n_passages=5, shrink=shrink)):
        if sub.get("type") == "array":
            assert 0 <= sub["minItems"] <= sub["maxItems"], path
        if sub.get("type") == "string" and "enum" not in sub:
            assert 0 < sub["maxLength"] <= max(LENGTHS.values()), path
        if sub.get("type") == "object":
            assert sub["additionalProperties"] is False and set(sub["required"]) == set(sub["properties"]), path


@pytest.mark.parametrize("kind,key", [("quiz", "items"), ("flashcards", "cards")])
@pytest.mark.parametrize("count", [1, 3, 12])
def test_lists_ask_for_exactly_the_count(kind, key, count):
    array = schema_for(kind, count=count)["properties"][key]
    assert (array["minItems"], array["maxItems"]) == (count, count)


@pytest.mark.parametrize("n_passages,enum,most", [(1, [1], 1), (4, [1, 2, 3, 4], 3)])
def test_citations_are_the_passage_numbers_that_exist(n_passages, enum, most):
    cites = schema_for("flashcards", count=2, n_passages=n_passages)["properties"]["cards"]["items"]["properties"]["citations"]
    assert cites["items"]["enum"] == enum and cites["minItems"] == 1 and cites["maxItems"] == most


@pytest.mark.parametrize("kind", ["workshop_outline", "workshop_lesson", "mindmap"])
def test_a_retry_after_a_cut_asks_for_a_smaller_document(kind):
    assert max_chars(schema_for(kind, shrink=1)) < max_chars(schema_for(kind))


def test_budget_grows_with_the_count_and_covers_the_fullest_answer():
    budgets = [token_budget(schema_for("quiz", count=n, n_passages=10)) for n in (1, 2, 5, 10)]
    assert budgets == sorted(budgets) and len(set(budgets)) == 4
    full = {"items": [{"type": "multiple_choice", "question": "q" * LENGTHS["question"],
                       "options": ["o" * LENGTHS["option"]] * 4, "answer": 3,
                       "explanation": "e" * LENGTHS["explanation"], "citations": [10, 10, 10]}] * 2}
    assert len(json.dumps(full)) <= max_chars(schema_for("quiz", count=2, n_passages=10))


def test_unknown_kind_lists_the_known_ones():
    with pytest.raises(ValueError, match="quiz, flashcards, workshop_outline"):
        schema_for("poem")
