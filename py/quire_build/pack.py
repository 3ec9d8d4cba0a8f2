"""Every asset as a classic ``.js`` file that hands its bytes to ``self.__quirePack``.

A page opened from ``file://`` may run classic scripts but may not ``fetch``, so this
is the one asset format that loads in every way Quire is opened (site/assets/boot-assets.js
decodes it).
"""

from __future__ import annotations

import array
import gzip
import json
import sys

from quire_build.common import GZIP_WORTH_IT

PACK_BLOCK = 120  # bytes per block: 120 bytes = 64 code units of 15 bits
PACK_OFFSET = 0x1000  # code units 0x1000..0x8FFF: no quote, backslash, line break or surrogate
PACK_SHIFTS = tuple(range(PACK_BLOCK * 8 - 15, -1, -15))
BOM = b"\xff\xfe"


def encode15(data: bytes) -> bytes:
    """``data`` as UTF-16LE code units holding 15 bits each (6.7% overhead; base64 is 33%).

    The bit stream is big-endian: the first unit holds the first 15 bits.  The tail is
    padded with zero bits; the loader is told the true length.

    >>> encode15(b"\\xff\\xfe")[:2].hex()  # 0b111111111111111 + 0x1000
    'ff8f'
    """
    data = data + bytes(-len(data) % PACK_BLOCK)
    units = array.array("H")
    for i in range(0, len(data), PACK_BLOCK):
        n = int.from_bytes(data[i:i + PACK_BLOCK], "big")
        units.extend([((n >> s) & 0x7FFF) + PACK_OFFSET for s in PACK_SHIFTS])
    if sys.byteorder == "big":
        units.byteswap()
    return units.tobytes()


def decode15(units: bytes, size: int) -> bytes:
    """Inverse of :func:`encode15` (the page does the same in JavaScript)."""
    values = array.array("H", units)
    if sys.byteorder == "big":
        values.byteswap()
    out = bytearray()
    group = len(PACK_SHIFTS)
    for i in range(0, len(values), group):
        n = 0
        for v in values[i:i + group]:
            n = (n << 15) | (v - PACK_OFFSET)
        out += n.to_bytes(PACK_BLOCK, "big")
    return bytes(out[:size])


def pack(name: str, data: bytes) -> tuple[bytes, bool]:
    """A classic script handing ``data`` to the loader: ``__quirePack(name, gz, size, units)``.

    The script is UTF-16 with a byte-order mark, which every browser honours over any
    charset a server claims, so the payload string can carry 15 bits per character.
    """
    squeezed = gzip.compress(data, compresslevel=9, mtime=0)
    gz = len(squeezed) < GZIP_WORTH_IT * len(data)
    payload = squeezed if gz else data
    head = f'self.__quirePack({json.dumps(name)},{int(gz)},{len(payload)},"'
    return BOM + head.encode("utf-16-le") + encode15(payload) + '");\n'.encode("utf-16-le"), gz


def unpack(script: bytes) -> tuple[str, bytes]:
    """``(name, bytes)`` carried by a pack script: the inverse of :func:`pack`."""
    if not script.startswith(BOM):
        raise ValueError("pack script has no UTF-16 byte-order mark")
    body = script[len(BOM):]
    quote = body.index('"'.encode("utf-16-le"), body.index(",".encode("utf-16-le")))  # the payload's opening quote
    head = body[:quote].decode("utf-16-le")
    if not (head.startswith("self.__quirePack(") and body.endswith('");\n'.encode("utf-16-le"))):
        raise ValueError("pack script does not have the loader's shape")
    name_json, gz, size = head.removeprefix("self.__quirePack(").rstrip(",").rsplit(",", 2)
    data = decode15(body[quote + 2:-len('");\n'.encode("utf-16-le"))], int(size))
    return json.loads(name_json), gzip.decompress(data) if gz == "1" else data


def pack_name(name: str) -> str:
    return f"assets/pack/{name}.js"
