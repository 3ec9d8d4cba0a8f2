"""``matrix @ q`` for dense search, on a WebAssembly SIMD kernel when the worker installed one.

Pyodide's numpy has no BLAS and no SIMD, so there a float32 matrix-vector
product runs several times slower than on CPython.  The worker registers
``quire_kernels`` (site/engine/kernels.js), whose ``matvec_f32`` reads both
arrays in place on Pyodide's heap by byte address; anywhere else, or for
arrays it cannot take, this is numpy's ``@``.

>>> m = np.array([[1, 2, 3, 4, 5], [0.5, 0, 0, 0, -1]], dtype=np.float32)
>>> matvec(m, np.array([1, 1, 0, 0, 1], dtype=np.float32)).tolist()
[8.0, -0.5]
>>> backend() in ("wasm-simd", "numpy")
True
"""

from __future__ import annotations

import numpy as np

_UNSET = object()
_kernels = _UNSET  # the quire_kernels module, or None where it is absent; looked up once


def _module():
    global _kernels
    if _kernels is _UNSET:
        try:
            import quire_kernels  # registered by the worker before quire is imported
        except ImportError:
            quire_kernels = None
        _kernels = quire_kernels
    return _kernels


def backend() -> str:
    """Which code ``matvec`` runs: ``"wasm-simd"`` in a worker with the kernel, else ``"numpy"``."""
    return "wasm-simd" if _module() is not None else "numpy"


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def matvec(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """float32 ``matrix @ q``: one dot product per row of a (rows, dim) matrix."""
    kernels = _module()
    if (
        kernels is None
        or matrix.dtype != np.float32 or q.dtype != np.float32
        or matrix.ndim != 2 or q.ndim != 1 or matrix.shape[1] != q.shape[0]
        or matrix.size == 0
        or not (matrix.flags.c_contiguous and q.flags.c_contiguous)
    ):
        return matrix @ q
    rows, dim = matrix.shape
    out = np.empty(rows, dtype=np.float32)
    kernels.matvec_f32(_address(matrix), rows, dim, _address(q), _address(out))
    return out
