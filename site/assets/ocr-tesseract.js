/* OCR, part 3 of 4: the Tesseract worker, and images turned into bytes it reads.
 *
 * One worker at a time (it holds ~100 MB), kept while in use and stopped when idle; a
 * page in progress can only be interrupted by stopping it.
 */
(function () {
  'use strict';
  var P = self.QuireOCRParts;  // ocr.js and ocr-pdf.js load first
  var FILES = P.FILES, LANGUAGES = P.LANGUAGES, LIMITS = P.LIMITS, VIRTUAL_BASE = P.VIRTUAL_BASE;
  var PSM_AUTO = P.PSM_AUTO, OEM_LSTM_ONLY = P.OEM_LSTM_ONLY;
  var ocrError = P.ocrError, withTimeout = P.withTimeout, scriptUrl = P.scriptUrl, assetBytes = P.assetBytes;
  var canvasToPng = P.canvasToPng;

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

  function dispose() {
    if (engine) engine.stop();
  }

  Object.assign(P, { checkLang: checkLang, tesseract: tesseract, imageBytes: imageBytes, dispose: dispose });
})();
