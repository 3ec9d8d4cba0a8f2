"""Where the tab keeps API keys: IndexedDB ``quire.main`` (``QuireStore.get/set/del``, the page's
small settings), never the library database, so no vault export carries them and no vault
import can set them.  "Erase all knowledge" clears ``quire.main`` unless asked to keep the keys."""

from __future__ import annotations

import json

import js
from pyodide.ffi import JsException

from quire.browser.idb import store_error


class KVSecrets:
    async def get(self, name: str):
        try:
            value = await js.QuireStore.get(name)
            return json.loads(value) if isinstance(value, str) else None  # stored as JSON text
        except JsException as exc:
            raise store_error(exc) from None

    async def set(self, name: str, value) -> None:
        try:
            await js.QuireStore.set(name, json.dumps(value))
        except JsException as exc:
            raise store_error(exc) from None

    async def delete(self, name: str) -> None:
        try:
            await getattr(js.QuireStore, "del")(name)  # "del" is a Python keyword
        except JsException as exc:
            raise store_error(exc) from None
