/* The sample library on the automation surface: window.quire.loadSample() / removeSample() / sampleIds().
 * Its text lives in assets/sample-library.js, loaded only when asked for (a classic script, so
 * file:// works); the ids of its sources are kept under 'quire.sample' so one click removes them. */
(function () {
  'use strict';
  var q = self.quire;
  var KEY = 'quire.sample';
  var loading = null;

  function content() {
    if (self.QuireSample) return Promise.resolve(self.QuireSample);
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement('script');
        s.src = 'assets/sample-library.js';
        s.onload = function () { resolve(self.QuireSample); };
        s.onerror = function () {
          loading = null;
          reject(new Error('assets/sample-library.js did not load, so this copy of Quire is incomplete. ' +
            'Copy the whole dist/ folder again (or run “python3 build.py”), then reload.'));
        };
        document.head.appendChild(s);
      });
    }
    return loading;
  }

  /* The suggestions in the page's language (English when there are none for it). */
  function language(sample) { return self.QuireI18n && sample.questions[QuireI18n.lang] ? QuireI18n.lang : 'en'; }

  /* `filed`: the category the sample was added under (it keeps that name if the language changes later). */
  function describe(sample, filed, extra) {
    var lang = language(sample);
    var asks = sample.questions[lang];
    return Object.assign({ category: filed || sample.category[lang], lang: lang,
      questions: asks.map(function (a) { return a.text || a; }),
      languages: asks.map(function (a) { return a.lang || lang; }), search: sample.search[lang], meaning: sample.meaning || null,
      files: sample.files.map(function (f) { return f.name; }) }, extra || {});
  }

  /** sampleInfo() -> {category, lang, questions, languages, search, meaning, files}: the suggestions
   * in the page's language; languages[i] is the language question i is in (one may ask the other
   * document); meaning {text, lang, about} is found by meaning-based search only. */
  q.sampleInfo = function () {
    return Promise.all([content(), q.kv.get(KEY)]).then(function (r) { return describe(r[0], r[1] && r[1].category); });
  };

  /** sampleIds() -> ids of the sample's sources still in the library ([] when none). */
  q.sampleIds = function () {
    return Promise.all([q.kv.get(KEY), q.sources()]).then(function (res) {
      var ids = (res[0] && res[0].ids) || [];
      var present = {};
      res[1].forEach(function (s) { present[s.id] = true; });
      return ids.filter(function (id) { return present[id]; });
    });
  };

  /** loadSample({onProgress, signal}) -> {category, questions, search, files, counts, ids}:
   * stages the sample's documents under their own category and trains them. */
  q.loadSample = function (opts) {
    opts = opts || {};
    return content().then(function (sample) {
      var items = sample.files.map(function (f) { return { name: f.name, text: f.text }; });
      var category = sample.category[language(sample)];
      return q.stage(items, { category: category }).then(function (records) {
        var ids = records.filter(function (r) { return r.status !== 'failed'; }).map(function (r) { return r.id; });
        return q.kv.set(KEY, { ids: ids, version: sample.version, category: category }).then(function () {
          return q.train({ onProgress: opts.onProgress, signal: opts.signal });
        }).then(function (counts) {
          document.dispatchEvent(new CustomEvent('quire:sample-changed'));
          return describe(sample, category, { counts: counts, ids: ids });
        });
      });
    });
  };

  /** sampleVault() -> {vault: File, sample: {ids, version, category}}: the sample library as one
   * vault file, trained by the engine in a library of its own (the library here is not touched).
   * A kiosk goes back to it with one replacing import, then calls sampleRestored(sample). */
  q.sampleVault = function () {
    return content().then(function (sample) {
      var category = sample.category[language(sample)];
      return q.vaultOfFiles(sample.files, { category: category }).then(function (vault) {
        return { vault: vault, sample: { ids: vault.ids, version: sample.version, category: category } };
      });
    });
  };

  /** sampleRestored(sample | null): the library now holds that sample (as sampleVault() gave it),
   * or none; its card and tags follow. */
  q.sampleRestored = function (sample) {
    return q.kv.set(KEY, sample || { ids: [] }).then(function () {
      document.dispatchEvent(new CustomEvent('quire:sample-changed'));
    });
  };

  /** removeSample() -> {removed}: removes the sample's sources and everything learned from them. */
  q.removeSample = function () {
    return q.sampleIds().then(function (ids) {
      return ids.reduce(function (chain, id) {
        return chain.then(function () { return q.remove(id); });
      }, Promise.resolve()).then(function () {
        return q.kv.set(KEY, { ids: [] });
      }).then(function () {
        document.dispatchEvent(new CustomEvent('quire:library-changed'));
        document.dispatchEvent(new CustomEvent('quire:sample-changed'));
        return { removed: ids.length };
      });
    });
  };
})();
