"""The entropy-coding half of Zstandard (RFC 8878 4.1, 4.2): bit streams, FSE tables, Huffman literals.

Used by ``quire.study.zstd``; all pure functions over bytes.

Symbols are spread over the states with step (size/2 + size/8 + 3), here 5 mod 4:

>>> fse_table([2, 1, 1], 2)[0]  # which symbol each of the 4 states decodes
[0, 0, 1, 2]
"""

from __future__ import annotations

from quire.errors import QuireError


class ZstdError(QuireError):
    """Not a zstd stream Quire can read, or more output than allowed."""


class Forward:
    """Bits read least-significant first, from the start (FSE table headers)."""

    def __init__(self, data: bytes, start: int):
        self.data, self.bit = data, start * 8

    def read(self, n: int) -> int:
        byte = self.bit >> 3
        value = int.from_bytes(self.data[byte:byte + 4], "little") >> (self.bit & 7)
        self.bit += n
        if self.bit > len(self.data) * 8:
            raise ZstdError("the stream ends inside a table header")
        return value & ((1 << n) - 1)

    def end(self) -> int:
        return (self.bit + 7) >> 3


class Backward:
    """Bits read from the end towards the start (Huffman and sequence streams).

    The bytes are reversed once, so reading is most-significant-first from the
    front; the first set bit is the end marker.  Reading past the real start
    gives zeros and makes ``overflow`` true, as the format expects."""

    def __init__(self, data: bytes):
        if not data or data[-1] == 0:
            raise ZstdError("a bit stream has no end marker")
        self.data = bytes(reversed(data)) + bytes(8)
        self.size = len(data) * 8
        self.bit = 8 - data[-1].bit_length() + 1

    def read(self, n: int) -> int:
        if n == 0:
            return 0
        byte = self.bit >> 3
        window = int.from_bytes(self.data[byte:byte + 8], "big")
        value = (window >> (64 - (self.bit & 7) - n)) & ((1 << n) - 1)
        self.bit += n
        return value

    @property
    def overflow(self) -> bool:
        return self.bit > self.size


# ---------------------------------------------------------------- FSE
def fse_counts(r: Forward, max_log: int, max_symbol: int) -> tuple[list[int], int]:
    log = r.read(4) + 5
    if log > max_log:
        raise ZstdError(f"an FSE table's accuracy {log} is above {max_log}")
    remaining, counts = 1 << log, []
    while remaining > 0 and len(counts) <= max_symbol:
        bits = (remaining + 1).bit_length()
        value = r.read(bits)
        lower = (1 << (bits - 1)) - 1
        threshold = (1 << bits) - 1 - (remaining + 1)
        if (value & lower) < threshold:
            r.bit -= 1
            value &= lower
        elif value > lower:
            value -= threshold
        count = value - 1
        remaining -= abs(count)
        counts.append(count)
        if count == 0:
            while True:
                repeat = r.read(2)
                counts += [0] * repeat
                if repeat != 3:
                    break
    if remaining != 0 or len(counts) > max_symbol + 1:
        raise ZstdError("an FSE table is damaged")
    return counts, log


def fse_table(counts: list[int], log: int) -> tuple[list[int], list[int], list[int], int]:
    """``(symbol, bits, base, log)`` per state, as RFC 8878 4.1.1 spreads them."""
    size = 1 << log
    symbols = [0] * size
    high = size
    next_state = [0] * len(counts)
    for s, c in enumerate(counts):
        if c == -1:
            high -= 1
            symbols[high] = s
            next_state[s] = 1
    step, mask, pos = (size >> 1) + (size >> 3) + 3, size - 1, 0
    for s, c in enumerate(counts):
        if c <= 0:
            continue
        next_state[s] = c
        for _ in range(c):
            symbols[pos] = s
            pos = (pos + step) & mask
            while pos >= high:
                pos = (pos + step) & mask
    bits, base = [0] * size, [0] * size
    for i in range(size):
        s = symbols[i]
        n = next_state[s]
        next_state[s] += 1
        bits[i] = log - (n.bit_length() - 1)
        base[i] = (n << bits[i]) - size
    return symbols, bits, base, log


# ---------------------------------------------------------------- Huffman literals
def huffman_table(data: bytes, pos: int) -> tuple[tuple[list[int], list[int], int], int]:
    """The literal decoding table described at ``data[pos]``; returns it and the next position."""
    header = data[pos]
    pos += 1
    if header >= 128:
        n = header - 127
        packed = data[pos:pos + (n + 1) // 2]
        weights = [(packed[i // 2] >> 4) if i % 2 == 0 else (packed[i // 2] & 15) for i in range(n)]
        pos += (n + 1) // 2
    else:
        r = Forward(data[:pos + header], pos)
        counts, log = fse_counts(r, 6, 255)
        table = fse_table(counts, log)
        stream = Backward(data[r.end():pos + header])
        weights = _fse_weights(stream, table)
        pos += header
    total = sum(1 << (w - 1) for w in weights if w)
    if not total:
        raise ZstdError("a Huffman table has no symbols")
    max_bits = total.bit_length()
    rest = (1 << max_bits) - total
    if rest & (rest - 1):
        raise ZstdError("a Huffman table is damaged")
    weights.append(rest.bit_length())
    if max_bits > 11:
        raise ZstdError("a Huffman code is longer than 11 bits")
    nbits = [max_bits + 1 - w if w else 0 for w in weights]
    rank = [0] * (max_bits + 2)
    for b in nbits:
        if b:
            rank[b] += 1
    start, at = [0] * (max_bits + 2), 0
    for b in range(max_bits, 0, -1):
        start[b] = at
        at += rank[b] << (max_bits - b)
    symbols, lengths = [0] * (1 << max_bits), [0] * (1 << max_bits)
    for s, b in enumerate(nbits):
        if b:
            span = 1 << (max_bits - b)
            symbols[start[b]:start[b] + span] = [s] * span
            lengths[start[b]:start[b] + span] = [b] * span
            start[b] += span
    return (symbols, lengths, max_bits), pos


def _fse_weights(stream: Backward, table) -> list[int]:
    symbols, bits, base, log = table
    s1, s2, out = stream.read(log), stream.read(log), []
    while True:
        out.append(symbols[s1])
        s1 = base[s1] + stream.read(bits[s1])
        if stream.overflow:
            out.append(symbols[s2])
            break
        out.append(symbols[s2])
        s2 = base[s2] + stream.read(bits[s2])
        if stream.overflow:
            out.append(symbols[s1])
            break
        if len(out) > 255:
            raise ZstdError("a Huffman table is damaged")
    return out


def huffman_stream(data: bytes, count: int, table) -> bytes:
    symbols, lengths, max_bits = table
    if not data or data[-1] == 0:
        raise ZstdError("a literals stream has no end marker")
    rev = bytes(reversed(data)) + bytes(4)
    bit = 8 - data[-1].bit_length() + 1
    shift, mask = 24 - max_bits, (1 << max_bits) - 1
    out = bytearray(count)
    for i in range(count):
        byte = bit >> 3
        index = (((rev[byte] << 16) | (rev[byte + 1] << 8) | rev[byte + 2]) >> (shift - (bit & 7))) & mask
        out[i] = symbols[index]
        bit += lengths[index]
    if bit > len(data) * 8:
        raise ZstdError("a literals stream is damaged")
    return bytes(out)
