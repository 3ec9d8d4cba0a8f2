"""Pure retrieval: tokenizing, BM25, exact dense search, rank fusion.

Runs unchanged on CPython and Pyodide (numpy and snowballstemmer only; no scipy on the search path).
"""

from .bm25 import BM25Index
from .dense import EMBED_PREFIXES, DenseIndex, doc_text, missing_hashes, query_text
from .fusion import Hit, rrf
from .index import HybridIndex
from .lang import detect_language
from .tokenize import Tokenizer

__all__ = [
    "BM25Index", "DenseIndex", "EMBED_PREFIXES", "Hit", "HybridIndex", "Tokenizer",
    "detect_language", "doc_text", "missing_hashes", "query_text", "rrf",
]
