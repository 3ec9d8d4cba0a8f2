/* QuireOCR: scanned pages to text inside this tab, over http and from file://, offline.
 *
 * pdf.js draws PDF pages; Tesseract reads them.  Both run in blob: workers built from
 * assets the page loads only when OCR is first used (never on the boot path), through
 * the same classic-script packs as every other asset (quire.loadAsset in boot.js).
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
 */
(function () {
  'use strict';

  // Asset names; build.py's ocr_asset_names() makes the same ones (tests check both agree).
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

  function hex(buffer) {
    return Array.prototype.map.call(new Uint8Array(buffer), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join('');
  }

  function loadChecked(name) {
    var info = B.assets[name];
    if (!self.quire || typeof self.quire.loadAsset !== 'function') {
      return Promise.reject(ocrError('missing', 'OCR cannot load its files: Quire’s loader (assets/boot.js) is not running.'));
    }
    return self.quire.loadAsset(name).then(function (blob) { return blob.arrayBuffer(); }, function (err) {
      var file = (err && err.arg) || info.src;
      if (err && err.kind === 'damaged') {
        throw ocrError('damaged', 'The OCR file ' + file + ' is damaged. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
      }
      throw ocrError('missing', 'The OCR file ' + file + ' could not be loaded, so this copy of Quire is incomplete. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
    }).then(function (buffer) {
      return crypto.subtle.digest('SHA-256', buffer).then(function (digest) {
        if (hex(digest) !== info.sha256) {
          throw ocrError('damaged', 'The OCR file ' + info.src + ' does not match its checksum. Copy the whole dist/ folder again (or run “python3 build.py”), then reload.');
        }
        return new Uint8Array(buffer);
      });
    });
  }

  var bytesCache = {};
  function assetBytes(name) {
    if (!bytesCache[name]) {
      bytesCache[name] = withTimeout(loadChecked(name), LIMITS.assetMs, 'loading ' + name);
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

  /* ---------------- pdf.js: pages to PNG ---------------- */

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

  /* ---------------- Tesseract: one worker, kept while in use ---------------- */

  var engine = null;

  function checkLang(lang) {
    lang = lang || 'eng';
    var codes = lang.split('+');
    codes.forEach(function (c) {
      if (!LANGUAGES[c]) throw ocrError('language', 'Unknown OCR language "' + c + '"; choose from eng, deu or eng+deu.');
    });
    return codes.join('+');
  }

  function languageNames(lang) {
    return lang.split('+').map(function (c) { return LANGUAGES[c]; }).join(' and ');
  }

  /** The Tesseract worker for `lang`, started (or reused); pair with engine.release(). */
  function tesseract(lang) {
    if (!(engine && engine.lang === lang && !engine.dead)) {
      if (engine) engine.stop();  // one worker at a time: it holds ~100 MB
      engine = startEngine(lang);
    }
    engine.users += 1;
    clearTimeout(engine.idleTimer);
    return engine;
  }

  function startEngine(lang) {
    var codes = lang.split('+');
    var names = languageNames(lang);
    var e = { lang: lang, dead: null, jobs: {}, next: 1, worker: null, idleTimer: null, users: 0 };

    e.stop = function (err) {
      if (e.dead) return;
      e.dead = err || ocrError('engine', 'The OCR engine was stopped.');
      clearTimeout(e.idleTimer);
      if (e.worker) e.worker.terminate();  // the only way to interrupt a page in progress
      Object.keys(e.jobs).forEach(function (id) { e.jobs[id].reject(e.dead); });
      e.jobs = {};
      if (engine === e) engine = null;
    };
    e.busy = function () { return Object.keys(e.jobs).length > 0; };
    e.release = function () {
      e.users -= 1;
      clearTimeout(e.idleTimer);
      if (e.users === 0) e.idleTimer = setTimeout(function () { e.stop(); }, LIMITS.idleMs);
    };

    function job(action, payload, ms, what) {
      if (e.dead) return Promise.reject(e.dead);
      var id = 'quire-' + e.next++;
      var done = new Promise(function (resolve, reject) { e.jobs[id] = { resolve: resolve, reject: reject, what: what }; });
      e.worker.postMessage({ workerId: 'quire-ocr', jobId: id, action: action, payload: payload });
      return withTimeout(done, ms, what, function (err) { e.stop(err); });
    }

    function onMessage(event) {
      var m = event.data || {};
      if (m.quireOcr === 'fatal') { e.stop(ocrError('engine', 'The OCR engine failed: ' + m.message)); return; }
      var j = e.jobs[m.jobId];
      if (!j || m.status === 'progress') return;
      delete e.jobs[m.jobId];
      if (m.status === 'resolve') j.resolve(m.data);
      else j.reject(ocrError('engine', 'OCR failed while ' + j.what + ': ' + m.data));
    }

    var assets = [scriptUrl(FILES.worker), assetBytes(FILES.wasm)].concat(codes.map(function (c) { return assetBytes(FILES[c]); }));
    e.ready = Promise.all(assets).then(function (got) {
      if (e.dead) throw e.dead;
      e.worker = new Worker(got[0], { name: 'quire-ocr' });
      e.worker.onmessage = onMessage;
      e.worker.onerror = function (event) {
        event.preventDefault();
        e.stop(ocrError('engine', 'The OCR worker stopped: ' + (event.message || 'its script failed to run') + '.'));
      };
      var files = { 'core.wasm': got[1] };
      codes.forEach(function (c, i) { files['lang/' + c + '.traineddata.gz'] = got[2 + i]; });
      e.worker.postMessage({ quireOcr: 'files', files: files });
      return job('load', { options: { lstmOnly: true, corePath: 'bundled.js', logging: false } },
        LIMITS.startMs, 'starting the OCR engine');
    }).then(function () {
      return job('loadLanguage', { langs: lang, options: { langPath: VIRTUAL_BASE + 'lang', cacheMethod: 'none', gzip: true, lstmOnly: true } },
        LIMITS.languageMs, 'loading the ' + names + ' language data');
    }).then(function () {
      return job('initialize', { langs: lang, oem: OEM_LSTM_ONLY }, LIMITS.initMs, 'preparing the ' + names + ' model');
    }).then(function () {
      return job('setParameters', { params: { tessedit_pageseg_mode: PSM_AUTO } }, LIMITS.initMs, 'setting the page layout mode');
    }).then(function () {
      e.recognize = function (image, page, dpi) {
        // rotateAuto straightens skewed scans (skew.pdf: CER 10% -> 1%); PNGs from pdf.js carry no dpi.
        var options = { rotateAuto: true };
        if (dpi) options.user_defined_dpi = String(dpi);
        return job('recognize', { image: image, options: options, output: { text: true } }, LIMITS.pageMs, 'reading page ' + page);
      };
      return e;
    });
    e.ready.catch(function (err) { e.stop(err); });
    return e;
  }

  /* ---------------- images to bytes Tesseract reads ---------------- */

  function isPngOrJpeg(b) {
    return (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) || (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff);
  }

  /** PNG or JPEG bytes from a rendered page, bytes, a Blob, or anything createImageBitmap takes. */
  function imageBytes(item) {
    var source = item && item.png ? item.png : item && item.image ? item.image : item;
    var bytes = source instanceof Uint8Array ? Promise.resolve(source)
      : source instanceof ArrayBuffer ? Promise.resolve(new Uint8Array(source))
      : source instanceof Blob ? source.arrayBuffer().then(function (b) { return new Uint8Array(b); })
      : Promise.resolve(null);
    return bytes.then(function (b) {
      if (b && isPngOrJpeg(b)) return b;
      // Other formats (WebP, GIF, BMP, bitmaps, canvases): let the browser decode, then PNG.
      return createImageBitmap(b ? new Blob([b]) : source).then(function (bitmap) {
        var canvas = document.createElement('canvas');
        canvas.width = bitmap.width;
        canvas.height = bitmap.height;
        canvas.getContext('2d', { alpha: false }).drawImage(bitmap, 0, 0);
        return canvasToPng(canvas);
      }, function () { throw ocrError('image', 'This image could not be decoded for OCR.'); });
    });
  }

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

  function dispose() {
    if (engine) engine.stop();
  }

  self.QuireOCR = {
    available: available,
    languages: Object.assign({}, LANGUAGES),
    renderPdfPages: renderPdfPages,
    recognize: recognize,
    ocrPdf: ocrPdf,
    dispose: dispose,
    files: Object.assign({}, FILES),
  };
})();
