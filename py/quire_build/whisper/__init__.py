"""Build-time voice pack: Whisper tiny.en for whisper.cpp compiled to WebAssembly.

Nothing here runs in the tab or ships in the bundle: it is part of the build
(``quire_build``), which the quire wheel does not contain.  ``ct2`` reads the CTranslate2 weights, ``ggml``
writes them in whisper.cpp's format, ``wasm`` compiles whisper.cpp with Emscripten,
``pack`` ties the three into the build step.
"""
