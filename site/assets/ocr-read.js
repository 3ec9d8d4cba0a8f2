/* OCR, part 4 of 4: reading pages one after another, and QuireOCR itself (see ocr.js). */
(function () {
  'use strict';
  var P = self.QuireOCRParts;  // ocr.js, ocr-pdf.js and ocr-tesseract.js load first
  var FILES = P.FILES, LANGUAGES = P.LANGUAGES, DEFAULT_DPI = P.DEFAULT_DPI;
  var available = P.available, notIncluded = P.notIncluded, untilAborted = P.untilAborted;
  var checkLang = P.checkLang, tesseract = P.tesseract, imageBytes = P.imageBytes;
  var pdfjs = P.pdfjs, openPdf = P.openPdf, checkPages = P.checkPages, renderPage = P.renderPage;

  /* ---------------- recognising pages ---------------- */

  /**
   * Read `count` images, asking getImage(i) -> Promise<{page, ...image}> for each in turn.
   * Progress: onProgress({page, done, total, etaSeconds}) once the engine is ready
   * (page null) and after every page.
   */
  function readPages(count, getImage, opts) {
    var lang;
    try { lang = checkLang(opts.lang); } catch (err) { return Promise.reject(err); }
    var signal = opts.signal;
    var results = [];
    var started = null;

    function progress(page) {
      if (!opts.onProgress) return;
      var done = results.length;
      var eta = done ? (performance.now() - started) / 1000 / done * (count - done) : null;
      opts.onProgress({ page: page, done: done, total: count, etaSeconds: eta == null ? null : Math.round(eta * 10) / 10 });
    }

    function next(ocr, i) {
      if (i >= count) return results;
      return untilAborted(getImage(i), signal).then(function (item) {
        var page = item.page != null ? item.page : i + 1;
        if (item.error) return { page: page, text: '', confidence: 0, error: item.error };
        return untilAborted(imageBytes(item), signal).then(function (bytes) {
          return untilAborted(ocr.recognize(bytes, page, item.dpi), signal);
        }).then(function (out) {
          return { page: page, text: out.text || '', confidence: out.confidence || 0 };
        }, function (err) {
          if (err.kind !== 'image') throw err;
          return { page: page, text: '', confidence: 0, error: err.message };
        });
      }).then(function (result) {
        results.push(result);
        if (opts.onPage) opts.onPage(result);
        progress(result.page);
        return next(ocr, i + 1);
      });
    }

    if (!available()) return Promise.reject(notIncluded());
    var used = tesseract(lang);
    return untilAborted(used.ready, signal).then(function (ocr) {
      started = performance.now();
      progress(null);
      return next(ocr, 0);
    }).then(function (out) {
      used.release();
      return out;
    }, function (err) {
      // A page in progress can only be interrupted by stopping its worker.
      if (used.busy()) used.stop(err);
      used.release();
      err.results = results;
      throw err;
    });
  }

  function recognize(images, opts) {
    opts = opts || {};
    var list = Array.from(images || []);
    return readPages(list.length, function (i) {
      var item = list[i];
      return Promise.resolve(item && item.page != null ? item : { page: i + 1, image: item });
    }, opts);
  }

  /** Draw and read PDF pages, drawing the next page while Tesseract reads this one. */
  function ocrPdf(pdfBytes, pageNumbers, opts) {
    opts = opts || {};
    var dpi = opts.dpi || DEFAULT_DPI;
    if (!available()) return Promise.reject(notIncluded());
    try { checkLang(opts.lang); } catch (err) { return Promise.reject(err); }
    return untilAborted(pdfjs().then(function (lib) { return openPdf(lib, pdfBytes); }), opts.signal).then(function (doc) {
      var pages = checkPages(doc, pageNumbers);
      var drawn = {};
      function draw(i) {
        if (i < pages.length && !drawn[i]) {
          // A page that cannot be drawn becomes an error entry; the others are still read.
          drawn[i] = renderPage(doc, pages[i], dpi).catch(function (err) {
            if (err.kind !== 'pdf') throw err;
            return { page: pages[i], error: err.message };
          });
          drawn[i].catch(function () {});  // reported when awaited
        }
        return drawn[i];
      }
      return readPages(pages.length, function (i) {
        var current = draw(i);
        draw(i + 1);
        delete drawn[i - 1];
        return current;
      }, opts).finally(function () { return doc.destroy(); });
    });
  }

  self.QuireOCR = {
    available: available,
    languages: Object.assign({}, LANGUAGES),
    renderPdfPages: P.renderPdfPages,
    recognize: recognize,
    ocrPdf: ocrPdf,
    dispose: P.dispose,
    files: Object.assign({}, FILES),
  };
})();
