/* Hand-assembled WebAssembly SIMD kernels that Python calls on Pyodide's heap.
 *
 * Pyodide's numpy has no BLAS and no SIMD, so dense search's `matrix @ q` runs
 * several times slower than on CPython.  This tiny module imports the very
 * WebAssembly.Memory Pyodide runs in and reads numpy's buffers in place: Python
 * passes byte offsets (`arr.__array_interface__['data'][0]`), nothing is copied.
 * quire/retrieval/kernels.py uses it when `import quire_kernels` succeeds.
 *
 * The bytes are built below by a small emitter.  Rows go eight at a time: the
 * eight rows share each load of q, and eight independent sums and read streams keep
 * loads in flight (memory bandwidth is the limit).  The rows left over go one at a
 * time through the same block with k = 0 only.  As text (wabt's wasm2wat of
 * moduleBytes() prints it unabbreviated, with numbered locals):
 *
 *   (module
 *     (import "env" "memory" (memory 0))   ;; Pyodide's own Memory: 32-bit, not shared
 *     ;; out[r] = dot(mat[r, :], q) for r < rows; f32, rows contiguous, byte offsets
 *     (func (export "matvec") (param $p i32) (param $rows i32) (param $dim i32) (param $q i32) (param $out i32)
 *       (local $n4 i32) (local $n1 i32) (local $blockEnd i32) (local $outEnd i32)
 *       (local $qq i32) (local $end4 i32) (local $rowEnd i32) (local $d1 i32) ... (local $d7 i32)
 *       (local $acc0 v128) ... (local $acc7 v128) (local $qv v128) (local $s0 f32) ... (local $s7 f32)
 *       (local.set $n4 (i32.shl (i32.and (local.get $dim) (i32.const -4)) (i32.const 2)))
 *       (local.set $n1 (i32.shl (local.get $dim) (i32.const 2)))           ;; bytes per row
 *       (local.set $d1 (i32.mul (local.get $n1) (i32.const 1)))            ;; ... $d7 = 7 * $n1
 *       (local.set $blockEnd (i32.add (local.get $out)
 *         (i32.shl (i32.and (local.get $rows) (i32.const -8)) (i32.const 2))))
 *       (local.set $outEnd (i32.add (local.get $out) (i32.shl (local.get $rows) (i32.const 2))))
 *       (block
 *         (br_if 0 (i32.ge_u (local.get $out) (local.get $blockEnd)))
 *         (loop                                ;; eight rows; $p walks row 0
 *           (local.set $qq (local.get $q))
 *           (local.set $end4 (i32.add (local.get $p) (local.get $n4)))
 *           (local.set $rowEnd (i32.add (local.get $p) (local.get $n1)))
 *           (local.set $acc0 (v128.const i32x4 0 0 0 0))    ;; ... $acc7
 *           (block
 *             (br_if 0 (i32.ge_u (local.get $p) (local.get $end4)))
 *             (loop
 *               (local.set $qv (v128.load align=4 (local.get $qq)))
 *               (local.set $acc0 (f32x4.add (local.get $acc0)
 *                 (f32x4.mul (v128.load align=4 (local.get $p)) (local.get $qv))))
 *               (local.set $acc1 (f32x4.add (local.get $acc1)
 *                 (f32x4.mul (v128.load align=4 (i32.add (local.get $p) (local.get $d1))) (local.get $qv))))
 *               ;; ... $acc7 from $p + $d7
 *               (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *               (local.set $qq (i32.add (local.get $qq) (i32.const 16)))
 *               (br_if 0 (i32.lt_u (local.get $p) (local.get $end4)))))
 *           (local.set $s0 (f32.add                      ;; ... $s7 from $acc7
 *             (f32.add (f32x4.extract_lane 0 (local.get $acc0)) (f32x4.extract_lane 1 (local.get $acc0)))
 *             (f32.add (f32x4.extract_lane 2 (local.get $acc0)) (f32x4.extract_lane 3 (local.get $acc0)))))
 *           (block                                        ;; dim % 4 leftovers, one float at a time
 *             (br_if 0 (i32.ge_u (local.get $p) (local.get $rowEnd)))
 *             (loop
 *               (local.set $s0 (f32.add (local.get $s0)
 *                 (f32.mul (f32.load (local.get $p)) (f32.load (local.get $qq)))))
 *               (local.set $s1 (f32.add (local.get $s1)
 *                 (f32.mul (f32.load (i32.add (local.get $p) (local.get $d1))) (f32.load (local.get $qq)))))
 *               ;; ... $s7
 *               (local.set $p (i32.add (local.get $p) (i32.const 4)))
 *               (local.set $qq (i32.add (local.get $qq) (i32.const 4)))
 *               (br_if 0 (i32.lt_u (local.get $p) (local.get $rowEnd)))))
 *           (f32.store (local.get $out) (local.get $s0))
 *           (f32.store offset=4 (local.get $out) (local.get $s1))  ;; ... offset=28 $s7
 *           (local.set $out (i32.add (local.get $out) (i32.const 32)))
 *           (local.set $p (i32.add (local.get $p) (local.get $d7)))  ;; $p was at row 1
 *           (br_if 0 (i32.lt_u (local.get $out) (local.get $blockEnd)))))
 *       (block
 *         (br_if 0 (i32.ge_u (local.get $out) (local.get $outEnd)))
 *         (loop                                ;; the same for one row: $acc0, $s0, no $d
 *           ...
 *           (local.set $out (i32.add (local.get $out) (i32.const 4)))
 *           (br_if 0 (i32.lt_u (local.get $out) (local.get $outEnd))))))
 *
 * Comparisons are unsigned: Pyodide's heap may grow past 2 GiB.  Out-of-range
 * offsets trap (a RuntimeError in the caller), they cannot write outside the heap.
 */
self.quireKernels = (function () {
  'use strict';

  // Rows per block (1..16 and 1..8 sums per row measured in Node 20: 8 rows, one sum each, was fastest).
  var ROWS_AT_ONCE = 8;

  // Opcodes (WebAssembly core spec, SIMD proposal as standardised in 2.0).
  var I32 = 0x7f, F32 = 0x7d, V128 = 0x7b, VOID = 0x40;
  var BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR_IF = 0x0d;
  var GET = 0x20, SET = 0x21;
  var I32_CONST = 0x41, I32_GE_U = 0x4f, I32_LT_U = 0x49;
  var I32_ADD = 0x6a, I32_MUL = 0x6c, I32_AND = 0x71, I32_SHL = 0x74;
  var F32_LOAD = 0x2a, F32_STORE = 0x38, F32_ADD = 0x92, F32_MUL = 0x94;
  var SIMD = 0xfd;
  var V128_LOAD = [SIMD, 0x00], V128_CONST = [SIMD, 0x0c], F32X4_EXTRACT = [SIMD, 0x1f];
  var F32X4_ADD = [SIMD, 0xe4, 0x01], F32X4_MUL = [SIMD, 0xe6, 0x01];

  function uleb(n) {
    var out = [];
    do {
      var b = n & 0x7f;
      n >>>= 7;
      out.push(n ? b | 0x80 : b);
    } while (n);
    return out;
  }

  function sleb(n) {
    var out = [];
    for (;;) {
      var b = n & 0x7f;
      n >>= 7;
      if ((n === 0 && !(b & 0x40)) || (n === -1 && (b & 0x40))) return out.concat(b);
      out.push(b | 0x80);
    }
  }

  function str(s) {
    var bytes = Array.from(s, function (c) { return c.charCodeAt(0); });
    return uleb(bytes.length).concat(bytes);
  }

  function flat(parts) { return [].concat.apply([], parts); }  // one level: byte arrays -> bytes
  function vec(items) { return flat([uleb(items.length)].concat(items)); }
  function section(id, body) { return [id].concat(uleb(body.length), body); }

  // Locals: the five params, then the declared ones in this order.
  var P = 0, ROWS = 1, DIM = 2, Q = 3, OUT = 4;
  var N4 = 5, N1 = 6, BLOCK_END = 7, OUT_END = 8, QQ = 9, END4 = 10, ROW_END = 11;
  var D = 12;                      // D + k - 1: bytes from row 0 to row k of a block, k >= 1
  var ACC = D + ROWS_AT_ONCE - 1;  // ACC + k: row k's f32x4 sums
  var QV = ACC + ROWS_AT_ONCE;     // the four floats of q that every row of the block multiplies
  var S = QV + 1;                  // S + k: row k's f32 sum
  var I32_LOCALS = ACC - 5, V128_LOCALS = ROWS_AT_ONCE + 1, F32_LOCALS = ROWS_AT_ONCE;

  var get = function (i) { return [GET].concat(uleb(i)); };
  var set = function (i) { return [SET].concat(uleb(i)); };
  var i32 = function (n) { return [I32_CONST].concat(sleb(n)); };
  var bump = function (local, bytes) { return flat([get(local), i32(bytes), [I32_ADD], set(local)]); };
  var rowAddr = function (k) { return k ? flat([get(P), get(D + k - 1), [I32_ADD]]) : get(P); };
  var times = function (n, f) { var out = []; for (var i = 0; i < n; i++) out.push(f(i)); return flat(out); };
  // block { if (p >= end) break; loop { body; if (p < end) continue } }
  var stride = function (end, body) {
    return flat([[BLOCK, VOID], get(P), get(end), [I32_GE_U, BR_IF, 0],
                 [LOOP, VOID], body, get(P), get(end), [I32_LT_U, BR_IF, 0, END, END]]);
  };
  // block { if (out >= end) break; loop { body; if (out < end) continue } }
  var overRows = function (end, body) {
    return flat([[BLOCK, VOID], get(OUT), get(end), [I32_GE_U, BR_IF, 0],
                 [LOOP, VOID], body, get(OUT), get(end), [I32_LT_U, BR_IF, 0, END, END]]);
  };

  /* out[k] = dot(row k, q) for `rows` consecutive rows at $p; leaves $p at the next row. */
  function rowBlock(rows) {
    var lane = function (k, i) { return flat([get(ACC + k), F32X4_EXTRACT, [i]]); };
    return flat([
      get(Q), set(QQ),
      get(P), get(N4), [I32_ADD], set(END4),
      get(P), get(N1), [I32_ADD], set(ROW_END),
      times(rows, function (k) { return flat([V128_CONST, new Array(16).fill(0), set(ACC + k)]); }),
      stride(END4, flat([
        get(QQ), V128_LOAD, [2, 0], set(QV),  // memarg: align 2^2, offset 0
        times(rows, function (k) {
          return flat([get(ACC + k), rowAddr(k), V128_LOAD, [2, 0], get(QV), F32X4_MUL, F32X4_ADD, set(ACC + k)]);
        }),
        bump(P, 16), bump(QQ, 16)])),
      times(rows, function (k) {
        return flat([lane(k, 0), lane(k, 1), [F32_ADD], lane(k, 2), lane(k, 3), [F32_ADD, F32_ADD], set(S + k)]);
      }),
      stride(ROW_END, flat([
        times(rows, function (k) {
          return flat([get(S + k), rowAddr(k), [F32_LOAD, 2, 0], get(QQ), [F32_LOAD, 2, 0], [F32_MUL, F32_ADD], set(S + k)]);
        }),
        bump(P, 4), bump(QQ, 4)])),
      times(rows, function (k) { return flat([get(OUT), get(S + k), [F32_STORE, 2], uleb(4 * k)]); }),
      bump(OUT, 4 * rows),
      rows > 1 ? flat([get(P), get(D + rows - 2), [I32_ADD], set(P)]) : [],
    ]);
  }

  function matvecBody() {
    var code = flat([
      get(DIM), i32(-4), [I32_AND], i32(2), [I32_SHL], set(N4),
      get(DIM), i32(2), [I32_SHL], set(N1),
      times(ROWS_AT_ONCE - 1, function (k) { return flat([get(N1), i32(k + 1), [I32_MUL], set(D + k)]); }),
      get(OUT), get(ROWS), i32(-ROWS_AT_ONCE), [I32_AND], i32(2), [I32_SHL, I32_ADD], set(BLOCK_END),
      get(OUT), get(ROWS), i32(2), [I32_SHL, I32_ADD], set(OUT_END),
      overRows(BLOCK_END, rowBlock(ROWS_AT_ONCE)),
      overRows(OUT_END, rowBlock(1)),
      [END],
    ]);
    var locals = vec([[I32_LOCALS, I32], [V128_LOCALS, V128], [F32_LOCALS, F32]]
      .map(function (l) { return uleb(l[0]).concat(l[1]); }));
    var body = locals.concat(code);
    return uleb(body.length).concat(body);
  }

  function moduleBytes() {
    return new Uint8Array(flat([
      [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
      section(1, vec([flat([[0x60], vec([[I32], [I32], [I32], [I32], [I32]]), vec([])])])),
      section(2, vec([flat([str('env'), str('memory'), [0x02, 0x00], uleb(0)])])),  // memory, min 0, no max
      section(3, vec([uleb(0)])),
      section(7, vec([flat([str('matvec'), [0x00], uleb(0)])])),
      section(10, vec([matvecBody()])),
    ]));
  }

  /* Register `quire_kernels` for Python; false (and nothing registered) without SIMD. */
  function install(pyodide, memory) {
    if (!(memory instanceof WebAssembly.Memory)) throw new TypeError('quireKernels.install needs the WebAssembly.Memory Pyodide imports');
    if (pyodide._module && pyodide._module.HEAP8 && pyodide._module.HEAP8.buffer !== memory.buffer) {
      throw new Error('quireKernels.install: this Memory is not the one Pyodide runs in');
    }
    var bytes = moduleBytes();
    if (!WebAssembly.validate(bytes)) return false;
    var instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory: memory } });
    var matvec = instance.exports.matvec;
    // The instance holds the Memory object itself, so it sees the heap after it grows;
    // nothing here may keep memory.buffer, which detaches on growth.
    pyodide.registerJsModule('quire_kernels', {
      matvec_f32: function (matPtr, rows, dim, qPtr, outPtr) { matvec(matPtr, rows, dim, qPtr, outPtr); },
      simd: true,
    });
    return true;
  }

  return { install: install, moduleBytes: moduleBytes };
})();
