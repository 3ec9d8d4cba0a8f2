/* Starting Pyodide from the memory snapshot the build made (make-snapshot.js).
 *
 * A snapshot is Pyodide's whole heap right after Python started.  A quarter of that
 * heap is the wasm module's data segment, which the bundle already carries inside
 * pyodide.asm.wasm, so the build XORs the segment out of the heap (it becomes mostly
 * zeros and gzips a third smaller) and `load` XORs it back in and hands the result
 * to loadPyodide.
 *
 * Used by the worker (classic script) and by the build's Node script (module).
 */
var QuireSnapshot = (function () {
  'use strict';

  function leb(bytes, at) {
    var value = 0, shift = 0, b;
    do { b = bytes[at.i++]; value += (b & 0x7f) * Math.pow(2, shift); shift += 7; } while (b & 0x80);
    return value;
  }

  /**
   * The active data segments of a wasm module: [{memory offset, file offset, length}].
   * Offsets given as `global.get` (a relocatable module's __memory_base) use memoryBase.
   */
  function dataSegments(wasm, memoryBase) {
    var at = { i: 8 };
    while (at.i < wasm.length) {
      var id = wasm[at.i++];
      var size = leb(wasm, at);
      var end = at.i + size;
      if (id === 11) {
        var out = [];
        for (var n = leb(wasm, at); n > 0; n--) {
          var flags = leb(wasm, at);
          if (flags === 1) { var skip = leb(wasm, at); at.i += skip; continue; }  // passive
          if (flags === 2) leb(wasm, at);  // memory index
          var op = wasm[at.i++];
          var offset = leb(wasm, at);
          if (op === 0x23) offset = memoryBase;            // global.get
          else if (op !== 0x41) return [];                 // not i32.const: leave the heap alone
          if (wasm[at.i++] !== 0x0b) return [];
          var length = leb(wasm, at);
          out.push({ memory: offset, file: at.i, length: length });
          at.i += length;
        }
        return out;
      }
      at.i = end;
    }
    return [];
  }

  /** The snapshot's heap XOR the module's data segments, in place (its own inverse). */
  function xorSegments(snapshot, wasm, memoryBase) {
    var heapStart = new Uint32Array(snapshot.buffer, snapshot.byteOffset, 4)[1];
    dataSegments(wasm, memoryBase).forEach(function (seg) {
      var to = heapStart + seg.memory;
      var n = Math.max(0, Math.min(seg.length, snapshot.length - to));
      for (var i = 0; i < n; i++) snapshot[to + i] ^= wasm[seg.file + i];
    });
  }

  /**
   * loadPyodide(options) restored from `delta` (decoded in place).  The worker has
   * checked the sha256 of both inputs, and the build proved this round trip in Node.
   */
  function load(loadPyodide, options, delta, wasm, info) {
    xorSegments(delta, wasm, info.memoryBase);
    return loadPyodide(Object.assign({}, options, { _loadSnapshot: delta }));
  }

  return { dataSegments: dataSegments, xorSegments: xorSegments, load: load };
})();
if (typeof module !== 'undefined' && module.exports) module.exports = QuireSnapshot;
