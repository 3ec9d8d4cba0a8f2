"""Build-time voice pack: Whisper tiny.en for whisper.cpp compiled to WebAssembly.

Nothing here runs in the tab or ships in the Pyodide bundle (build.py leaves this
package out of the quire wheel).  ``ct2`` reads the CTranslate2 weights, ``ggml``
writes them in whisper.cpp's format, ``wasm`` compiles whisper.cpp with Emscripten,
``pack`` ties the three into the build step.
"""
