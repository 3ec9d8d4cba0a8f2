/* QuireOCR: scanned pages to text inside this tab, over http and from file://, offline.
 *
 * pdf.js draws PDF pages; Tesseract reads them.  Both run in blob: workers built from
 * assets the page loads only when OCR is first used (never on the boot path), through
 * the same classic-script packs as every other asset (quire.loadChecked, assets/boot-assets.js).
 *
 *   QuireOCR.available()                          -> false when the build left OCR out
 *   QuireOCR.renderPdfPages(bytes, [1, 3], {dpi}) -> [{page, width, height, dpi, png}]
 *   QuireOCR.recognize(images, {lang, onProgress, onPage, signal}) -> [{page, text, confidence}]
 *   QuireOCR.ocrPdf(bytes, [1, 3], opts)          -> the two above, drawing one page ahead
 *
 * confidence is Tesseract's mean word confidence, 0-100.  Every step has a time limit
 * (tesseract.js hangs instead of failing on some errors), so a hang becomes an error
 * with kind 'timeout'.  Aborting the signal rejects with an AbortError whose .results
 * holds the pages already recognised; onPage(result) also hands over each page as it ends.
 *
 * Four classic scripts, loaded in this order: ocr.js (names, limits, errors, files),
 * ocr-pdf.js (pdf.js), ocr-tesseract.js (the Tesseract worker), ocr-read.js (reading
 * pages; it defines QuireOCR).  They share self.QuireOCRParts, which is no API.
 */
(function () {
  'use strict';

  // Asset names; the build's ocr_asset_names() (py/quire_build/ocr.py) makes the same ones (tests check both agree).
  var FILES = {
    pdf: 'ocr/pdf-3.11.174.min.js',
    pdfWorker: 'ocr/pdf.worker-3.11.174.min.js',
    worker: 'ocr/tesseract-worker-7.0.0.js',
    wasm: 'ocr/tesseract-core-simd-lstm-7.0.0.wasm',
    eng: 'ocr/eng-4.0.0_best_int.traineddata.gz',
    deu: 'ocr/deu-4.0.0_best_int.traineddata.gz',
  };
  var LANGUAGES = { eng: 'English', deu: 'German' };
  var VIRTUAL_BASE = 'https://ocr.quire.invalid/';  // answered by the OCR worker's fetch shim (engine/ocr/tesseract-head.js)
  var PSM_AUTO = '3';          // automatic page layout; the default interleaves two-column scans (CER ~40%)
  var OEM_LSTM_ONLY = 1;       // the only engine the LSTM core carries
  var DEFAULT_DPI = 300;       // Tesseract's best size for body text
  var MAX_PIXELS = 24e6;       // bigger pages are drawn at a lower dpi (A3 at 300 dpi is 17 MP)
  var LIMITS = {
    assetMs: 120000,           // loading one OCR file from the bundle
    startMs: 60000,            // compiling and starting the Tesseract core
    languageMs: 60000,         // unpacking the language data into the worker
    initMs: 60000,             // Tesseract reading its language model
    pageMs: 180000,            // recognising one page (2-6 s is normal at 300 dpi on 2 cores)
    openPdfMs: 60000,          // pdf.js parsing a document
    renderMs: 120000,          // pdf.js drawing one page
    idleMs: 120000,            // an unused Tesseract worker is stopped to give back its memory
  };

  var B = self.QUIRE_BUNDLE;

  /* ---------------- errors ---------------- */

  function ocrError(kind, message) {
    var err = new Error(message);
    err.name = kind === 'aborted' ? 'AbortError' : 'OcrError';
    err.kind = kind;  // not-included | missing | damaged | timeout | engine | language | pdf | image | aborted
    return err;
  }

  function notIncluded() {
    return ocrError('not-included', 'OCR is not included in this bundle. Build Quire without --no-ocr to read scanned pages.');
  }

  function withTimeout(promise, ms, what, onTimeout) {
    var timer;
    var limit = new Promise(function (resolve, reject) {
      timer = setTimeout(function () {
        var err = ocrError('timeout', 'OCR stopped: ' + what + ' did not finish within ' + Math.round(ms / 1000) + ' s.');
        if (onTimeout) onTimeout(err);
        reject(err);
      }, ms);
    });
    return Promise.race([promise, limit]).finally(function () { clearTimeout(timer); });
  }

  /** Rejects as soon as the signal aborts, whatever the promise is doing. */
  function untilAborted(promise, signal) {
    if (!signal) return promise;
    if (signal.aborted) return Promise.reject(ocrError('aborted', 'OCR was cancelled.'));
    var onAbort;
    var aborted = new Promise(function (resolve, reject) {
      onAbort = function () { reject(ocrError('aborted', 'OCR was cancelled.')); };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([promise, aborted]).finally(function () { signal.removeEventListener('abort', onAbort); });
  }

  /* ---------------- assets ---------------- */

  function available() {
    return !!(B && B.assets && Object.keys(FILES).every(function (role) { return B.assets[FILES[role]]; }));
  }

  /* One OCR file's bytes, checked against its sha256 by the page's loader (quire.loadChecked). */
  function loadFile(name) {
    var info = B.assets[name];
    if (!self.quire || typeof self.quire.loadChecked !== 'function') {
      return Promise.reject(ocrError('missing', 'OCR cannot load its files: Quire’s loader (assets/boot.js) is not running.'));
    }
    return self.quire.loadChecked(name).then(function (buffer) { return new Uint8Array(buffer); }, function (err) {
      var file = (err && err.arg) || info.src;
      if (err && err.checksum) {
        throw ocrError('damaged', 'The OCR file ' + file + ' does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
      }
      if (err && err.kind === 'damaged') {
        throw ocrError('damaged', 'The OCR file ' + file + ' is damaged. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
      }
      throw ocrError('missing', 'The OCR file ' + file + ' could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
    });
  }

  var bytesCache = {};
  function assetBytes(name) {
    if (!bytesCache[name]) {
      bytesCache[name] = withTimeout(loadFile(name), LIMITS.assetMs, 'loading ' + name);
      bytesCache[name].catch(function () { delete bytesCache[name]; });  // a later call may try again
    }
    return bytesCache[name];
  }

  var urlCache = {};
  function scriptUrl(name) {
    if (!urlCache[name]) {
      urlCache[name] = assetBytes(name).then(function (bytes) {
        return URL.createObjectURL(new Blob([bytes], { type: 'text/javascript' }));
      });
      urlCache[name].catch(function () { delete urlCache[name]; });
    }
    return urlCache[name];
  }

  self.QuireOCRParts = {
    FILES: FILES, LANGUAGES: LANGUAGES, VIRTUAL_BASE: VIRTUAL_BASE, PSM_AUTO: PSM_AUTO, OEM_LSTM_ONLY: OEM_LSTM_ONLY,
    DEFAULT_DPI: DEFAULT_DPI, MAX_PIXELS: MAX_PIXELS, LIMITS: LIMITS,
    ocrError: ocrError, notIncluded: notIncluded, withTimeout: withTimeout, untilAborted: untilAborted,
    available: available, assetBytes: assetBytes, scriptUrl: scriptUrl,
  };
})();
