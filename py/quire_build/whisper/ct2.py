"""Read a CTranslate2 ``model.bin`` (binary version 6) into numpy arrays.

The layout is CTranslate2's own ``ModelSpec._serialize``: a version, the spec name,
its revision, then each variable as name, rank, dims, dtype id, byte count, bytes;
then aliases (name -> variable).

    >>> spec, variables = read_model(open("model.bin", "rb").read())   # doctest: +SKIP
    >>> spec, variables["encoder/conv1/weight"].shape                  # doctest: +SKIP
    ('WhisperSpec', (384, 80, 3))
"""

from __future__ import annotations

import struct

import numpy as np

BINARY_VERSION = 6
# CTranslate2's DataType enum, in its order.
DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


class Ct2Error(ValueError):
    """The file is not a CTranslate2 model this reader understands."""


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def string(self) -> str:
        (n,) = self.take("H")  # length including the trailing NUL
        text = self.data[self.pos:self.pos + n - 1].decode("utf-8")
        self.pos += n
        return text

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise Ct2Error("model.bin ends inside a variable: the file is truncated")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk


def read_model(data: bytes) -> tuple[str, dict[str, np.ndarray]]:
    """``(spec name, {variable name: array})``, aliases resolved to their variable."""
    r = _Reader(data)
    (version,) = r.take("I")
    if version != BINARY_VERSION:
        raise Ct2Error(f"CTranslate2 binary version {version}; this reader knows version {BINARY_VERSION}")
    spec = r.string()
    r.take("I")  # spec revision
    (count,) = r.take("I")
    variables = {}
    for _ in range(count):
        name = r.string()
        (rank,) = r.take("B")
        shape = r.take(f"{rank}I")
        (dtype_id,) = r.take("B")
        (nbytes,) = r.take("I")
        if dtype_id not in DTYPES:
            raise Ct2Error(f"{name}: unknown CTranslate2 dtype id {dtype_id}")
        variables[name] = np.frombuffer(r.raw(nbytes), dtype=DTYPES[dtype_id]).reshape(shape)
    (aliases,) = r.take("I")
    for _ in range(aliases):
        alias, target = r.string(), r.string()
        variables[alias] = variables[target]
    return spec, variables
