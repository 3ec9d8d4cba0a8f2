"""Quire: a private study companion whose engine runs in a browser tab.

The pure modules here run the same on CPython and in Pyodide; only
``quire.browser`` touches ``js``/``pyodide`` and it is imported by the worker.
"""

__version__ = "0.1.0"
