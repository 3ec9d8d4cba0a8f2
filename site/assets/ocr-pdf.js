/* OCR, part 2 of 4: pdf.js draws PDF pages as PNG images for Tesseract to read.
 *
 * pdf.js runs in its own blob: worker, started on first use and shared by every document.
 */
(function () {
  'use strict';
  var P = self.QuireOCRParts;  // ocr.js loads first
  var FILES = P.FILES, LIMITS = P.LIMITS, MAX_PIXELS = P.MAX_PIXELS, DEFAULT_DPI = P.DEFAULT_DPI;
  var ocrError = P.ocrError, withTimeout = P.withTimeout, scriptUrl = P.scriptUrl;
  var available = P.available, notIncluded = P.notIncluded;

  var pdfjsReady = null;
  var pdfWorker = null;  // one pdf.js worker shared by every document; destroying a document keeps it
  function pdfjs() {
    if (!pdfjsReady) {
      pdfjsReady = Promise.all([scriptUrl(FILES.pdf), scriptUrl(FILES.pdfWorker)]).then(function (urls) {
        return withTimeout(addScript(urls[0]), LIMITS.assetMs, 'starting pdf.js').then(function () {
          var lib = self.pdfjsLib;
          if (!lib || typeof lib.getDocument !== 'function') throw ocrError('damaged', 'pdf.js did not start: ' + FILES.pdf + ' is damaged.');
          // A worker given as a port; setting workerSrc instead silently parses on the main thread.
          lib.GlobalWorkerOptions.workerPort = new Worker(urls[1], { name: 'quire-pdfjs' });
          pdfWorker = lib.PDFWorker.fromPort({ port: lib.GlobalWorkerOptions.workerPort });
          return lib;
        });
      });
      pdfjsReady.catch(function () { pdfjsReady = null; });
    }
    return pdfjsReady;
  }

  function addScript(url) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement('script');
      s.src = url;
      s.onload = function () { s.remove(); resolve(); };
      s.onerror = function () { s.remove(); reject(ocrError('damaged', 'pdf.js could not be started from ' + FILES.pdf + '.')); };
      document.head.appendChild(s);
    });
  }

  function openPdf(lib, bytes) {
    var task = lib.getDocument({
      data: new Uint8Array(bytes),  // a copy: pdf.js hands its buffer to the worker
      worker: pdfWorker,            // passed in, so destroying this document leaves it running
      isEvalSupported: false,       // CVE-2024-4367 in pdf.js < 4.2.67; the CSP forbids eval anyway
      verbosity: lib.VerbosityLevel.ERRORS,
      enableXfa: false,
      useSystemFonts: false,
    });
    return withTimeout(task.promise, LIMITS.openPdfMs, 'opening the PDF', function () { task.destroy(); })
      .catch(function (err) {
        if (err.kind) throw err;
        throw ocrError('pdf', 'pdf.js could not open this PDF: ' + err.message);
      });
  }

  function checkPages(doc, pageNumbers) {
    var pages = pageNumbers || Array.from({ length: doc.numPages }, function (_, i) { return i + 1; });
    pages.forEach(function (n) {
      if (!(Number.isInteger(n) && n >= 1 && n <= doc.numPages)) {
        throw ocrError('pdf', 'Page ' + n + ' is not in this PDF (it has pages 1 to ' + doc.numPages + ').');
      }
    });
    return pages;
  }

  function canvasToPng(canvas) {
    return new Promise(function (resolve, reject) {
      canvas.toBlob(function (blob) {
        if (!blob) reject(ocrError('pdf', 'The browser could not encode the page image (out of memory?).'));
        else blob.arrayBuffer().then(function (b) { resolve(new Uint8Array(b)); }, reject);
      }, 'image/png');
    });
  }

  function renderPage(doc, number, dpi) {
    var task = null;
    var drawn = doc.getPage(number).then(function (page) {
      var viewport = page.getViewport({ scale: dpi / 72 });
      var shrink = Math.min(1, Math.sqrt(MAX_PIXELS / (viewport.width * viewport.height)));
      if (shrink < 1) viewport = page.getViewport({ scale: dpi / 72 * shrink });
      var canvas = document.createElement('canvas');
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      task = page.render({ canvasContext: canvas.getContext('2d', { alpha: false }), viewport: viewport });
      return task.promise.then(function () { return canvasToPng(canvas); }).then(function (png) {
        var out = { page: number, width: canvas.width, height: canvas.height, dpi: Math.round(dpi * shrink), png: png };
        canvas.width = canvas.height = 0;  // give the pixels back now, not at the next GC
        page.cleanup();
        return out;
      });
    }).catch(function (err) {
      if (err.kind) throw err;
      throw ocrError('pdf', 'Page ' + number + ' could not be drawn: ' + err.message);
    });
    return withTimeout(drawn, LIMITS.renderMs, 'drawing page ' + number, function () { if (task) task.cancel(); });
  }

  function renderPdfPages(pdfBytes, pageNumbers, opts) {
    var dpi = (opts && opts.dpi) || DEFAULT_DPI;
    if (!available()) return Promise.reject(notIncluded());
    return pdfjs().then(function (lib) { return openPdf(lib, pdfBytes); }).then(function (doc) {
      var out = [];
      var pages = checkPages(doc, pageNumbers);
      return pages.reduce(function (chain, n) {
        return chain.then(function () { return renderPage(doc, n, dpi); }).then(function (r) { out.push(r); });
      }, Promise.resolve()).then(function () { return out; }).finally(function () { return doc.destroy(); });
    });
  }

  Object.assign(P, { pdfjs: pdfjs, openPdf: openPdf, checkPages: checkPages, canvasToPng: canvasToPng,
    renderPage: renderPage, renderPdfPages: renderPdfPages });
})();
