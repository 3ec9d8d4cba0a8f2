/* The head of Quire's OCR worker: one blob: worker holding Tesseract whole.
 *
 * build.py joins this file, tesseract.js-core's loader (which defines TesseractCore)
 * and tesseract.js's worker.min.js into one script, because a blob: worker opened
 * from file:// may not importScripts or fetch anything else.  The page (assets/ocr.js)
 * posts the bytes first, {quireOcr: 'files', files: {name: Uint8Array}}, then speaks
 * tesseract.js's own worker protocol.  This head
 *   - hands the core its wasm as wasmBinary, so the core never fetches it;
 *   - answers fetches under a virtual base from the posted files (the language data,
 *     gunzipped here with the browser's DecompressionStream);
 *   - reports failures Tesseract would otherwise swallow, so the page fails fast
 *     instead of waiting for its timeout.
 */
(function () {
  'use strict';
  var VIRTUAL_BASE = 'https://ocr.quire.invalid/';  // never on the network: fetch below answers it
  var files = {};
  var coreWrapped = false;

  function fatal(message) {
    self.postMessage({ quireOcr: 'fatal', message: String(message) });
  }

  function wrapCore() {
    var Core = self.TesseractCore;
    if (typeof Core !== 'function') { fatal('the Tesseract core is missing from the OCR worker'); return; }
    coreWrapped = true;
    self.TesseractCore = function (moduleArg) {
      var wasm = files['core.wasm'];
      if (!wasm) { fatal('the page did not send the Tesseract core (wasm)'); return new Promise(function () {}); }
      // Tesseract's chatter ("Estimating resolution as ...") is not an error: keep it at debug level.
      var quiet = function (text) { console.debug('Tesseract:', text); };
      var started = Core(Object.assign({}, moduleArg, { wasmBinary: wasm, print: quiet, printErr: quiet }));
      // tesseract.js never handles this rejection: without the report the page would wait.
      started.catch(function (err) { fatal('the Tesseract core did not start: ' + ((err && err.message) || err)); });
      return started;
    };
  }

  // Registered before worker.min.js adds its own listener, so it runs first.
  self.addEventListener('message', function (event) {
    var msg = event.data;
    if (msg && msg.quireOcr === 'files') {
      event.stopImmediatePropagation();
      Object.keys(msg.files).forEach(function (name) { files[name] = msg.files[name]; });
      return;
    }
    if (msg && msg.action === 'load' && !coreWrapped) wrapCore();
  });

  self.addEventListener('unhandledrejection', function (event) {
    fatal((event.reason && event.reason.message) || event.reason);
  });

  self.fetch = function (input) {
    var url = typeof input === 'string' ? input : (input && input.url) || String(input);
    if (url.indexOf(VIRTUAL_BASE) !== 0) {
      return Promise.reject(new TypeError('The OCR worker reads only the files Quire gave it, not ' + url));
    }
    var name = url.slice(VIRTUAL_BASE.length);
    var bytes = files[name];
    if (!bytes) return Promise.resolve(new Response(null, { status: 404, statusText: 'Not in the OCR worker' }));
    // A stream of the bytes themselves: WebKit's blob: workers of a file:// page cannot read Blobs.
    var body = /\.gz$/.test(name)
      ? new ReadableStream({ start: function (c) { c.enqueue(bytes); c.close(); } }).pipeThrough(new DecompressionStream('gzip'))
      : bytes;
    return Promise.resolve(new Response(body, { status: 200 }));
  };

  self.importScripts = function (url) {
    throw new Error('The OCR worker is self-contained and cannot load ' + url);
  };
})();
