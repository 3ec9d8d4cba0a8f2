"""Zstandard decompression (RFC 8878) in pure Python, for Anki's ``collection.anki21b``.

Pyodide ships no zstd module we may bundle, and PyPI's pure-Python ``fzstd`` 0.1.1
returned wrong bytes (zeros) for a real Anki collection and took 3 s for 139 KB,
so Quire decodes the format itself.  Only what Anki writes is needed and
supported: frames without a dictionary.  Checksums are not verified (SQLite
notices a damaged database).  ``limit`` caps the output: a zstd frame is as
good a bomb as a zip member.

>>> decompress(bytes.fromhex("28b52ffd2003190000616263"))  # one raw block: "abc"
b'abc'
"""

from __future__ import annotations

MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # ..0x184D2A5F: frames a decoder skips


class ZstdError(ValueError):
    """Not a zstd stream Quire can read, or more output than allowed."""


# Literal-length and match-length codes: (baseline, extra bits).
LL_CODES = [(i, 0) for i in range(16)] + [
    (16, 1), (18, 1), (20, 1), (22, 1), (24, 2), (28, 2), (32, 3), (40, 3), (48, 4), (64, 6), (128, 7),
    (256, 8), (512, 9), (1024, 10), (2048, 11), (4096, 12), (8192, 13), (16384, 14), (32768, 15), (65536, 16)]
ML_CODES = [(i + 3, 0) for i in range(32)] + [
    (35, 1), (37, 1), (39, 1), (41, 1), (43, 2), (47, 2), (51, 3), (59, 3), (67, 4), (83, 4), (99, 5), (131, 7),
    (259, 8), (515, 9), (1027, 10), (2051, 11), (4099, 12), (8195, 13), (16387, 14), (32771, 15), (65539, 16)]
# The predefined distributions (RFC 8878 3.1.1.3.2.2), with their accuracy logs.
LL_DEFAULT = ([4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
               -1, -1, -1, -1], 6)
ML_DEFAULT = ([1, 4, 3, 2, 2, 2, 2, 2, 2] + [1] * 37 + [-1] * 7, 6)
OF_DEFAULT = ([1, 1, 1, 1, 1, 1, 2, 2, 2] + [1] * 15 + [-1] * 5, 5)
MAX_LOG = {"ll": 9, "ml": 9, "of": 8}
MAX_SYMBOL = {"ll": 35, "ml": 52, "of": 31}


class _Forward:
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


class _Backward:
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
def _fse_counts(r: _Forward, max_log: int, max_symbol: int) -> tuple[list[int], int]:
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


def _fse_table(counts: list[int], log: int) -> tuple[list[int], list[int], list[int], int]:
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
def _huffman_table(data: bytes, pos: int) -> tuple[tuple[list[int], list[int], int], int]:
    """The literal decoding table described at ``data[pos]``; returns it and the next position."""
    header = data[pos]
    pos += 1
    if header >= 128:
        n = header - 127
        packed = data[pos:pos + (n + 1) // 2]
        weights = [(packed[i // 2] >> 4) if i % 2 == 0 else (packed[i // 2] & 15) for i in range(n)]
        pos += (n + 1) // 2
    else:
        r = _Forward(data[:pos + header], pos)
        counts, log = _fse_counts(r, 6, 255)
        table = _fse_table(counts, log)
        stream = _Backward(data[r.end():pos + header])
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


def _fse_weights(stream: _Backward, table) -> list[int]:
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


def _huffman_stream(data: bytes, count: int, table) -> bytes:
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


# ---------------------------------------------------------------- blocks
class _Frame:
    """State that carries from block to block: output, repeat offsets, the last tables."""

    def __init__(self, limit: int):
        self.out = bytearray()
        self.limit = limit
        self.rep = [1, 4, 8]
        self.huffman = None
        self.tables = {"ll": None, "of": None, "ml": None}

    def grow(self, n: int) -> None:
        if len(self.out) + n > self.limit:
            raise ZstdError(f"the data unpacks to more than {self.limit:,} bytes")

    def literals(self, block: bytes) -> tuple[bytes, int]:
        b0 = block[0]
        kind, form = b0 & 3, (b0 >> 2) & 3
        if kind in (0, 1):  # raw or one repeated byte
            if form in (0, 2):
                size, pos = b0 >> 3, 1
            elif form == 1:
                size, pos = (b0 >> 4) + (block[1] << 4), 2
            else:
                size, pos = (b0 >> 4) + (block[1] << 4) + (block[2] << 12), 3
            if kind == 0:
                if pos + size > len(block):
                    raise ZstdError("a block's literals run past its end")
                return block[pos:pos + size], pos + size
            return bytes([block[pos]]) * size, pos + 1
        width = {0: 3, 1: 3, 2: 4, 3: 5}[form]
        header = int.from_bytes(block[:width], "little")
        bits = {3: 10, 4: 14, 5: 18}[width]
        regen, size = (header >> 4) & ((1 << bits) - 1), (header >> (4 + bits)) & ((1 << bits) - 1)
        self.grow(regen)
        pos, end = width, width + size
        if kind == 2:
            self.huffman, pos = _huffman_table(block, pos)
        elif self.huffman is None:
            raise ZstdError("a block reuses a Huffman table that was never sent")
        if form == 0:
            return _huffman_stream(block[pos:end], regen, self.huffman), end
        sizes = [int.from_bytes(block[pos + 2 * i:pos + 2 * i + 2], "little") for i in range(3)]
        pos += 6
        sizes.append(end - pos - sum(sizes))
        quarter = (regen + 3) // 4
        counts = [quarter, quarter, quarter, regen - 3 * quarter]
        parts = []
        for size_i, count in zip(sizes, counts):
            parts.append(_huffman_stream(block[pos:pos + size_i], count, self.huffman))
            pos += size_i
        return b"".join(parts), end

    def table(self, name: str, mode: int, block: bytes, pos: int, default) -> int:
        if mode == 0:
            self.tables[name] = _fse_table(*default)
        elif mode == 1:
            self.tables[name] = ([block[pos]], [0], [0], 0)
            return pos + 1
        elif mode == 2:
            r = _Forward(block, pos)
            self.tables[name] = _fse_table(*_fse_counts(r, MAX_LOG[name], MAX_SYMBOL[name]))
            return r.end()
        elif self.tables[name] is None:
            raise ZstdError("a block reuses a table that was never sent")
        return pos

    def compressed(self, block: bytes) -> None:
        literals, pos = self.literals(block)
        n = block[pos]
        if n == 0:
            self.grow(len(literals))
            self.out += literals
            return
        if n < 128:
            pos += 1
        elif n < 255:
            n, pos = ((n - 128) << 8) + block[pos + 1], pos + 2
        else:
            n, pos = block[pos + 1] + (block[pos + 2] << 8) + 0x7F00, pos + 3
        modes = block[pos]
        pos = self.table("ll", modes >> 6, block, pos + 1, LL_DEFAULT)
        pos = self.table("of", (modes >> 4) & 3, block, pos, OF_DEFAULT)
        pos = self.table("ml", (modes >> 2) & 3, block, pos, ML_DEFAULT)
        self.sequences(_Backward(block[pos:]), n, literals)

    def sequences(self, r: _Backward, n: int, literals: bytes) -> None:
        ll_sym, ll_bits, ll_next, ll_log = self.tables["ll"]
        of_sym, of_bits, of_next, of_log = self.tables["of"]
        ml_sym, ml_bits, ml_next, ml_log = self.tables["ml"]
        ll_state, of_state, ml_state = r.read(ll_log), r.read(of_log), r.read(ml_log)
        out, rep, lit, read, limit = self.out, self.rep, 0, r.read, self.limit
        for i in range(n):
            of_code, ll_code, ml_code = of_sym[of_state], ll_sym[ll_state], ml_sym[ml_state]
            if of_code > 31 or ll_code > 35 or ml_code > 52:
                raise ZstdError("a sequence is damaged")
            ml_base, ml_extra = ML_CODES[ml_code]
            ll_base, ll_extra = LL_CODES[ll_code]
            if of_code + ml_extra + ll_extra <= 56:  # one read for all three (offset bits come first)
                v = read(of_code + ml_extra + ll_extra)
                offset = (1 << of_code) + (v >> (ml_extra + ll_extra))
                match = ml_base + ((v >> ll_extra) & ((1 << ml_extra) - 1))
                length = ll_base + (v & ((1 << ll_extra) - 1))
            else:
                offset = (1 << of_code) + read(of_code)
                match = ml_base + read(ml_extra)
                length = ll_base + read(ll_extra)
            if offset > 3:
                offset -= 3
                rep[:] = [offset, rep[0], rep[1]]
            else:
                index = offset if length == 0 else offset - 1
                if index == 0:
                    offset = rep[0]
                elif index == 3:
                    offset = rep[0] - 1
                    rep[:] = [offset, rep[0], rep[1]]
                else:
                    offset = rep[index]
                    rep[:] = [offset] + [rep[j] for j in range(3) if j != index]
            if i < n - 1:  # next states, read in one go: literals length, match length, offset
                a, b, c = ll_bits[ll_state], ml_bits[ml_state], of_bits[of_state]
                v = read(a + b + c)
                ll_state = ll_next[ll_state] + (v >> (b + c))
                ml_state = ml_next[ml_state] + ((v >> c) & ((1 << b) - 1))
                of_state = of_next[of_state] + (v & ((1 << c) - 1))
            if len(out) + length + match > limit:
                self.grow(length + match)  # raises, with the message
            out += literals[lit:lit + length]
            lit += length
            if lit > len(literals) or offset <= 0 or offset > len(out):
                raise ZstdError("a sequence points outside the data")
            start = len(out) - offset
            if offset >= match:
                out += out[start:start + match]
            else:  # the copy overlaps what it writes: repeat the last `offset` bytes
                pattern = bytes(out[start:])
                out += (pattern * (match // offset + 1))[:match]
        if r.overflow:
            raise ZstdError("a block's sequences are damaged")
        self.grow(len(literals) - lit)
        out += literals[lit:]


def decompress(data: bytes, limit: int = 1 << 31) -> bytes:
    """The bytes of every frame in ``data``, concatenated; at most ``limit`` of them."""
    data = bytes(data)
    pos, parts, total = 0, [], 0
    while pos < len(data):
        if len(data) - pos < 4:
            raise ZstdError("the data ends inside a frame header")
        magic = int.from_bytes(data[pos:pos + 4], "little")
        if magic & 0xFFFFFFF0 == _SKIPPABLE:
            pos += 8 + int.from_bytes(data[pos + 4:pos + 8], "little")
            continue
        if magic != MAGIC:
            raise ZstdError("this is not zstd data")
        frame, pos = _frame(data, pos + 4, limit - total)
        parts.append(frame)
        total += len(frame)
    return b"".join(parts)


def _frame(data: bytes, pos: int, limit: int) -> tuple[bytes, int]:
    desc = data[pos]
    pos += 1
    single, checksum, dict_flag, fcs_flag = desc & 0x20, desc & 4, desc & 3, desc >> 6
    if desc & 8:
        raise ZstdError("a frame header has its reserved bit set")
    if not single:
        pos += 1  # window descriptor: the whole output stays in memory anyway
    if dict_flag:
        dict_id = int.from_bytes(data[pos:pos + (1, 2, 4)[dict_flag - 1]], "little")
        pos += (1, 2, 4)[dict_flag - 1]
        if dict_id:
            raise ZstdError("this zstd data needs a dictionary, which Quire does not have")
    size_bytes = (1 if single else 0, 2, 4, 8)[fcs_flag]
    declared = int.from_bytes(data[pos:pos + size_bytes], "little") + (256 if size_bytes == 2 else 0)
    pos += size_bytes
    if size_bytes and declared > limit:
        raise ZstdError(f"the data would unpack to {declared:,} bytes, more than the {limit:,} allowed")
    f = _Frame(limit)
    while True:
        if pos + 3 > len(data):
            raise ZstdError("the data ends inside a block")
        header = int.from_bytes(data[pos:pos + 3], "little")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        pos += 3
        if kind == 0:
            f.grow(size)
            f.out += data[pos:pos + size]
            pos += size
        elif kind == 1:
            f.grow(size)
            f.out += data[pos:pos + 1] * size
            pos += 1
        elif kind == 2:
            if size > 128 * 1024 or pos + size > len(data):
                raise ZstdError("a block is larger than the format allows, or cut off")
            f.compressed(data[pos:pos + size])
            pos += size
        else:
            raise ZstdError("a block has the reserved type")
        if pos > len(data):
            raise ZstdError("the data ends inside a block")
        if last:
            break
    if checksum:
        pos += 4
    return bytes(f.out), pos
