"""Doctests of the engine run with the suite (``testpaths`` includes ``py``); only
``quire/browser.py`` needs Pyodide's ``js`` module and is left to the browser tests."""

collect_ignore = ["quire/browser.py"]
