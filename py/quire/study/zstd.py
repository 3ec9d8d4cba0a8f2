"""Zstandard decompression (RFC 8878) in pure Python, for Anki's ``collection.anki21b``.

Pyodide's own ``zstandard`` is not in the distribution Quire pins, and PyPI's
pure-Python ``fzstd`` 0.1.1 returned wrong bytes (the right length, 99.96 % zeros)
for a collection Anki had just exported, and took 3.1 s for 139 KB where this
decoder takes 0.03 s, so Quire decodes the format itself.  Only what Anki writes is needed and
supported: frames without a dictionary.  Checksums are not verified (SQLite
notices a damaged database).  ``limit`` caps the output: a zstd frame is as
good a bomb as a zip member.

>>> decompress(bytes.fromhex("28b52ffd2003190000616263"))  # one raw block: "abc"
b'abc'
"""

from __future__ import annotations

from quire.study.zstd_entropy import ZstdError, Backward, Forward, fse_counts, fse_table, huffman_stream, \
    huffman_table

MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # ..0x184D2A5F: frames a decoder skips


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
            self.huffman, pos = huffman_table(block, pos)
        elif self.huffman is None:
            raise ZstdError("a block reuses a Huffman table that was never sent")
        if form == 0:
            return huffman_stream(block[pos:end], regen, self.huffman), end
        sizes = [int.from_bytes(block[pos + 2 * i:pos + 2 * i + 2], "little") for i in range(3)]
        pos += 6
        sizes.append(end - pos - sum(sizes))
        quarter = (regen + 3) // 4
        counts = [quarter, quarter, quarter, regen - 3 * quarter]
        parts = []
        for size_i, count in zip(sizes, counts):
            parts.append(huffman_stream(block[pos:pos + size_i], count, self.huffman))
            pos += size_i
        return b"".join(parts), end

    def table(self, name: str, mode: int, block: bytes, pos: int, default) -> int:
        if mode == 0:
            self.tables[name] = fse_table(*default)
        elif mode == 1:
            self.tables[name] = ([block[pos]], [0], [0], 0)
            return pos + 1
        elif mode == 2:
            r = Forward(block, pos)
            self.tables[name] = fse_table(*fse_counts(r, MAX_LOG[name], MAX_SYMBOL[name]))
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
        self.sequences(Backward(block[pos:]), n, literals)

    def sequences(self, r: Backward, n: int, literals: bytes) -> None:
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
