"""quire.llm.budget: every request bounded, prompt plus answer inside the context."""

import pytest

from quire.llm.budget import MIN_TOKENS, fit

PROMPT = [{"role": "user", "content": "x" * 3000}]  # ~1,000 tokens at 3 characters each


@pytest.mark.parametrize("options,context,want_predict,want_ctx", [
    ({}, None, 1024, None),                                      # nothing set: still bounded
    ({"num_predict": 300}, None, 300, None),                     # the Answer length setting
    ({"num_predict": 4096, "num_ctx": 8192}, None, 4096, 8192),  # fits the Context size setting
    ({"num_predict": 4096, "num_ctx": 2048}, None, 1048, 2048),  # the setting's context is the bound
    ({"num_predict": 4096, "num_ctx": 8192}, 1500, 500, 1500),   # the server's own context wins
    ({"num_predict": 4096}, 1000, MIN_TOKENS, 1000),             # a full context still leaves a little
    ({"num_predict": 16}, 1000, 16, 1000),                       # never more than asked
])
def test_fit(options, context, want_predict, want_ctx):
    out = fit(options, context, PROMPT)
    assert out["num_predict"] == want_predict and out.get("num_ctx") == want_ctx
