"""py/quire_build/pack.py: assets as classic scripts carrying 15 bits per UTF-16 character."""

import hashlib

import pytest

from quire_build import pack as packing


def unpack(script: bytes) -> bytes:
    return packing.unpack(script)[1]


def test_pack_gzips_only_when_it_pays():
    text = b"abc " * 1000
    script, gz = packing.pack("t.txt", text)
    assert gz and unpack(script) == text
    noise = hashlib.sha256(b"seed").digest() * 1  # 32 random-looking bytes do not compress
    script, gz = packing.pack("n.bin", noise)
    assert not gz and unpack(script) == noise


@pytest.mark.parametrize("size", [0, 1, 14, 15, 119, 120, 121, 1000])
def test_pack_round_trips_every_length(size):
    data = (hashlib.sha256(str(size).encode()).digest() * 40)[:size]
    script, _ = packing.pack("x.bin", data)
    assert packing.unpack(script) == ("x.bin", data)
    units = script[2:].decode("utf-16-le")
    declared = int(units[:units.index(',"')].rsplit(",", 1)[1])
    payload = units[units.index(',"') + 2:-4]
    # 15 bits per character, all in 0x1000..0x8FFF: no quote, backslash, line break or surrogate
    assert all(0x1000 <= ord(c) <= 0x8FFF for c in payload)
    assert len(payload) == 64 * -(-declared // packing.PACK_BLOCK)


def test_pack_is_utf16_with_a_byte_order_mark():
    """The BOM makes browsers read the script as UTF-16 whatever charset a server claims."""
    script, _ = packing.pack("x.bin", b"payload")
    assert script.startswith(b"\xff\xfe")
    assert script[2:].decode("utf-16-le").startswith('self.__quirePack("x.bin",0,7,"')
