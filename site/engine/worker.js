/* The engine worker: boots Pyodide from the bundle and answers the page's calls.
 *
 * It is one blob: script (Pyodide's loader, QuireAssets, QuireStore and this file),
 * so it starts the same way over http and from file://.  Stages are reported by
 * name; the page turns them into the progress bar.
 */
(function () {
  'use strict';
  var pyodide = null;
  var config = null;
  var booted = null;
  var background = null;
  var libraries = null;  // the wheels installed after ready; engine calls wait for them

  function post(msg) { self.postMessage(msg); }

  /* The engine asks the page for things only a page can do (OCR draws on canvases). */
  var pageCalls = {};
  var nextPageCall = 1;
  self.quirePageCall = function (method, args) {
    var id = nextPageCall++;
    return new Promise(function (resolve, reject) {
      pageCalls[id] = { resolve: resolve, reject: reject };
      post({ type: 'page-call', id: id, method: method, args: args });
    });
  };
  function stage(name, extra) { post(Object.assign({ type: 'stage', stage: name, t: performance.now() }, extra || {})); }

  function describe(err, where) {
    var assetError = QuireAssets.firstError();
    if (assetError && err && err.name !== 'AssetError') err = assetError;
    var msg = { type: 'fatal', stage: where, message: String(err && err.message || err) };
    if (err && err.name === 'AssetError') { msg.kind = err.kind; msg.asset = err.asset; }
    if (err && err.stack) msg.detail = String(err.stack).slice(0, 4000);
    return msg;
  }

  async function boot(cfg) {
    config = cfg;
    QuireAssets.init(cfg, post);
    var where = 'pyodide';
    try {
      stage('pyodide');
      pyodide = await loadPyodide({
        indexURL: cfg.base,
        fullStdLib: false,
        stdout: function (line) { post({ type: 'log', level: 'info', text: line }); },
        stderr: function (line) { post({ type: 'log', level: 'warn', text: line }); },
      });
      where = 'numpy';
      stage('numpy');
      await pyodide.loadPackage(cfg.bootPackages, { messageCallback: function () {}, errorCallback: logError, checkIntegrity: true });
      where = 'wheels';
      stage('wheels');
      var micropip = pyodide.pyimport('micropip');
      post({ type: 'mark', name: 'micropip-imported', t: performance.now() });
      await micropip.install.callKwargs(cfg.wheels.map(function (w) { return cfg.base + w; }), { deps: false });
      micropip.destroy();
      where = 'quire';
      stage('quire');
      await pyodide.runPythonAsync('import quire.browser');
      post({ type: 'mark', name: 'quire-imported', t: performance.now() });
      var started = await pyodide.runPythonAsync('import quire.browser\nawait quire.browser.start()');
      var library = toPlain(started);
      post({ type: 'mark', name: 'library-open', t: performance.now() });
      var versions = pyodide.runPython(
        'import json, sys, numpy, quire\n' +
        'json.dumps({"python": sys.version.split()[0], "numpy": numpy.__version__, "quire": quire.__version__})');
      libraries = installLazyWheels();
      libraries.catch(function (err) { post(describe(err, 'libraries')); });
      stage('ready', { versions: JSON.parse(versions), pyodide: pyodide.version, library: library });
      background = libraries.then(loadLazy);
    } catch (err) {
      post(describe(err, where));
      throw err;
    }
  }

  function logError(text) { post({ type: 'log', level: 'error', text: String(text) }); }

  /* pypdf, fsrs and the rest: installed right after ready, before any engine call runs. */
  async function installLazyWheels() {
    if (!config.lazyWheels || !config.lazyWheels.length) return;
    var micropip = pyodide.pyimport('micropip');
    try {
      await micropip.install.callKwargs(config.lazyWheels.map(function (w) { return config.base + w; }), { deps: false });
      stage('libraries');
    } finally {
      micropip.destroy();
    }
  }

  /* scipy + scikit-learn cost ~4 s: never on the critical path. */
  async function loadLazy() {
    try {
      await pyodide.runPythonAsync('import quire.browser\nquire.browser.load_services()');
      post({ type: 'mark', name: 'services-loaded', t: performance.now() });
    } catch (err) {
      logError('services did not load: ' + err.message);
    }
    try {
      stage('sklearn-loading');
      await pyodide.loadPackage(config.lazyPackages, { messageCallback: function () {}, errorCallback: logError, checkIntegrity: true });
      var v = pyodide.runPython('import sklearn, scipy\nsklearn.__version__ + " / scipy " + scipy.__version__');
      stage('sklearn', { version: v });
    } catch (err) {
      var msg = describe(err, 'sklearn');
      msg.type = 'background-failed';
      post(msg);
    }
  }

  function toPlain(value) {
    if (value && typeof value.toJs === 'function') {
      try {
        return value.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
      } finally {
        value.destroy();
      }
    }
    return value;
  }

  var methods = {
    run: async function (source) {
      await pyodide.loadPackagesFromImports(source, { messageCallback: function () {}, errorCallback: logError });
      return toPlain(await pyodide.runPythonAsync(source));
    },
    waitForLazy: function () { return background; },
    py: async function (name, argsJson, payload, id) {
      await libraries;
      var bridge = pyodide.pyimport('quire.browser');
      try {
        var reply = JSON.parse(await bridge.dispatch(name, argsJson, id, payload));
      } finally {
        bridge.destroy();
      }
      if (!reply.ok) {
        var err = new Error(reply.error);
        err.kind = reply.kind;
        if (reply.detail) post({ type: 'log', level: 'error', text: reply.detail });
        throw err;
      }
      return reply.value;
    },
  };

  async function call(msg) {
    try {
      await booted;
      var fn = methods[msg.method];
      if (!fn) throw new Error('unknown engine method ' + msg.method + '; known: ' + Object.keys(methods).join(', '));
      var args = msg.method === 'py' ? [msg.name, msg.argsJson, msg.payload, msg.id] : (msg.args || []);
      var value = await fn.apply(null, args);
      post({ type: 'result', id: msg.id, ok: true, value: value });
    } catch (err) {
      post({ type: 'result', id: msg.id, ok: false, error: String(err && err.message || err), kind: err && err.kind });
    }
  }

  self.onmessage = function (event) {
    var msg = event.data;
    switch (msg.type) {
      case 'init': booted = boot(msg.config); booted.catch(function () {}); break;
      case 'asset': QuireAssets.receive(msg.name, msg.gz, msg.b64); break;
      case 'asset-failed': QuireAssets.fail(msg.name, msg.kind, msg.message); break;
      case 'call': call(msg); break;
      case 'page-result': {
        var pending = pageCalls[msg.id];
        delete pageCalls[msg.id];
        if (pending) {
          if (msg.ok) pending.resolve(msg.value);
          else { var e = new Error(msg.error); e.kind = msg.kind; pending.reject(e); }
        }
        break;
      }
      case 'cancel':
        if (pyodide) pyodide.runPython('import quire.browser as b; b.cancel(' + Number(msg.id) + ')');
        break;
      default: logError('unknown message ' + msg.type);
    }
  };
  post({ type: 'alive' });
})();
