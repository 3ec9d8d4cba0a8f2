/* The file images (py/quire_build/images.py) in the engine: numpy and the boot wheels written
 * straight into Pyodide's site-packages, and their shared libraries compiled and linked ahead
 * of the imports that load them.
 *
 * worker-boot.js installs the images and links numpy's libraries before ready;
 * worker-lazy.js links the other libraries before scipy and scikit-learn are imported.
 * Assets come from QuireAssets; news goes to the page through QuireReport.
 *
 *   QuireImages.install(pyodide, images)          write the images into site-packages
 *   QuireImages.compileDynlibs(images)            -> [{path, module}], before Pyodide has started
 *   QuireImages.linkDynlibs(pyodide, compiled)    leave them where dlopen looks first
 *   QuireImages.linkOtherDynlibs(pyodide)         the images' other libraries, the same way
 *   QuireImages.reportLateDynlibs(pyodide)        warn about any an import loaded itself
 */
var QuireImages = (function () {
  'use strict';
  var mark = QuireReport.mark, logWarning = QuireReport.warn;
  var sitePackages = null;  // where the images are written (Pyodide's site-packages)
  var imageDynlibs = [];  // the boot images' shared libraries, relative to site-packages

  /* numpy and the boot wheels (quire, snowballstemmer) arrive as file images (build.py
   * wheel_image): written straight into site-packages, about ten times faster than
   * unzipping wheels with Python in a just-started engine, then marked loaded so later
   * loadPackage calls skip them. */
  async function installImages(pyodide, images) {
    sitePackages = sitePackages || pyodide.runPython('import pyodide._package_loader as l; str(l.SITE_PACKAGES)');
    var FS = pyodide.FS;
    for (var i = 0; i < images.length; i++) {
      var image = readImage(await QuireAssets.get(images[i].asset), images[i].asset);
      image.names.forEach(function (name) {
        var path = sitePackages + '/' + name;
        FS.mkdirTree(path.slice(0, path.lastIndexOf('/')));
        FS.writeFile(path, image.files[name]);
        if (/\.so$/.test(name)) imageDynlibs.push(name);
      });
      pyodide.loadedPackages[images[i].package] = 'default channel';
    }
    // Only site-packages' cached listing: importlib.invalidate_caches() would import
    // importlib.metadata, and the stdlib zip's finder would re-read the zip (~0.3 s each).
    pyodide.runPython('import sys\nf = sys.path_importer_cache.get(' + JSON.stringify(sitePackages) + ')\nf and f.invalidate_caches()');
  }

  /* A file image (py/quire_build/images.py): {names, files: name -> bytes}, views into `bytes`. */
  function readImage(bytes, asset) {
    var magic = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
    if (magic !== 'QFS1') throw QuireAssets.AssetError('damaged', asset, 'The file ' + asset + ' is not a file image.');
    var headerLength = new DataView(bytes.buffer, bytes.byteOffset + 4, 4).getUint32(0, true);
    var entries = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
    var at = 8 + headerLength, out = { names: [], files: {} };
    entries.forEach(function (entry) {
      out.names.push(entry[0]);
      out.files[entry[0]] = bytes.subarray(at, at + entry[1]);
      at += entry[1];
    });
    return out;
  }

  /* The shared libraries `import numpy` loads (bootImages[].dynlibs), compiled as soon as
   * their image arrives, while the snapshot is restored.  Left to Python's dlopen they were
   * compiled synchronously in the middle of the import, and a synchronous compile in
   * WebKit waits until its compiler threads are free of the tier-up work of Pyodide's
   * own module: up to 6 s on a busy 2-core machine (a few ms in Chromium and Firefox).
   * Resolves to [{path, module}]; a library that fails here is left to dlopen. */
  function compileDynlibs(images) {
    return Promise.all(images.map(function (image) {
      var wanted = image.dynlibs || [];
      if (!wanted.length) return [];
      return QuireAssets.get(image.asset).then(function (bytes) {
        var files = readImage(bytes, image.asset).files;
        return compileAll(wanted, function (path) { return files[path]; });
      }).catch(function (err) {
        logWarning('Compiling the libraries of ' + image.package + ' ahead failed (' + err.message + '); the import loads them.');
        return [];
      });
    })).then(function (lists) {
      mark('dynlibs-compiled');
      return [].concat.apply([], lists);
    });
  }

  function compileAll(paths, bytesOf) {
    return Promise.all(paths.map(function (path) {
      return WebAssembly.compile(bytesOf(path)).then(function (module) { return { path: path, module: module }; });
    }));
  }

  /* Instantiate compiled libraries (paths relative to site-packages) the way Pyodide's package
   * loader does (local symbols, never unloaded) and leave them where Emscripten's dlopen looks
   * first, so an import finds them loaded.  Uses Pyodide 0.27's Emscripten module (pinned). */
  async function linkDynlibs(pyodide, compiled) {
    var Module = pyodide._module;
    for (var i = 0; i < compiled.length; i++) {
      var path = sitePackages + '/' + compiled[i].path;
      try {
        Module.preloadedWasm[path] = await Module.loadWebAssemblyModule(compiled[i].module,
          { loadAsync: true, nodelete: true, allowUndefined: true, global: false }, path, {});
      } catch (err) {
        logWarning('Loading ' + compiled[i].path + ' ahead failed (' + err.message + '); the import loads it.');
      }
    }
  }

  /* The boot images' other libraries (numpy.random, numpy.fft…), which importing scipy and
   * scikit-learn loads: compiled together and linked before they are imported, for the same
   * reason as at boot (in WebKit, ten synchronous compiles in the middle of that import). */
  async function linkOtherDynlibs(pyodide) {
    var Module = pyodide._module;
    var rest = imageDynlibs.filter(function (path) {
      var full = sitePackages + '/' + path;
      return !Module.LDSO.loadedLibsByName[full] && !Module.preloadedWasm[full];
    });
    try {
      await linkDynlibs(pyodide, await compileAll(rest, function (path) { return pyodide.FS.readFile(sitePackages + '/' + path); }));
    } catch (err) {
      logWarning('Compiling the other libraries ahead failed (' + err.message + '); their imports load them.');
    }
    mark('other-dynlibs-linked');
  }

  /* A library the import loaded itself was missed by the list: say which, for the build's list. */
  function reportLateDynlibs(pyodide) {
    var Module = pyodide._module;
    var late = Object.keys(Module.LDSO.loadedLibsByName).filter(function (name) {
      return name !== '__main__' && !Module.preloadedWasm[name];
    });
    if (late.length) logWarning('Loaded while importing, not compiled ahead (BOOT_DYNLIBS in py/quire_build/common.py): ' + late.join(', '));
  }

  return { install: installImages, compileDynlibs: compileDynlibs, linkDynlibs: linkDynlibs,
           linkOtherDynlibs: linkOtherDynlibs, reportLateDynlibs: reportLateDynlibs };
})();
