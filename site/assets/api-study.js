/* The study hub's automation surface (the package py/quire/services/study/ does the work):
 *   quire.studyToolsReady() -> resolves once the study tools are loaded (asks for them)
 *   quire.generate(kind, {scope, count, difficulty, topic, title, offline, onProgress, signal}) -> set
 *   quire.studySets() / openSet(id) / deleteSet(id)
 *   quire.quizAnswer(id, choice) / quizSubmit(id) / quizRestart(id, onlyWrong)
 *   quire.review(deckId) -> {cards: [{..., intervals}], due, next_due}; quire.rate(deckId, cardId, 'again'|'hard'|'good'|'easy')
 *   quire.resolveCard(deckId, cardId, 'keep'|'delete')
 *   quire.openLesson(id, module, lesson, {offline, onProgress}) / lessonDone(id, module, lesson, done)
 *   quire.exportSet(id, format) -> {filename, mime, text|base64}; quire.downloadSet(id, format); quire.download(file)
 *   quire.importDeck(File | {name, data})
 *   quire.promptTemplates() / promptTemplate(name) / savePromptOverride(name, text) / resetPromptOverride(name)
 * The study tools (scipy, scikit-learn, and sqlite3 for .apkg) are not loaded at ready: they load once
 * asked (studyToolsReady, which the Study view calls when shown), and generate, openLesson, importDeck
 * and exportSet(id, 'apkg') ask for them and wait. */
(function () {
  'use strict';
  var q = self.quire;

  function changed(detail) { document.dispatchEvent(new CustomEvent('quire:study-changed', { detail: detail })); }

  /** Resolves once the study tools (scikit-learn, sqlite3) are loaded. */
  q.studyToolsReady = function () { return q.ready.then(function () { return q.sklearnReady; }); };

  q.generate = function (kind, opts) {
    opts = opts || {};
    var args = { scope: opts.scope || null, count: opts.count, difficulty: opts.difficulty, topic: opts.topic || '',
      offline: !!opts.offline, title: opts.title || '' };
    return q.studyToolsReady().then(function () {
      var p = q._call('studyGenerate', [kind, args], { onEvent: opts.onProgress });
      if (opts.signal) opts.signal.addEventListener('abort', function () { q._cancel(p.id); });
      return p;
    }).then(function (set) { changed(set); return set; });
  };

  q.studySets = function () { return q._call('studySets'); };
  q.openSet = function (id) { return q._call('studyOpen', [id]); };
  q.deleteSet = function (id) { return q._call('studyDelete', [id]).then(function (r) { changed(null); return r; }); };

  q.quizAnswer = function (id, choice) { return q._call('quizAnswer', [id, choice]); };
  q.quizSubmit = function (id) { return q._call('quizSubmit', [id]); };
  q.quizRestart = function (id, onlyWrong) { return q._call('quizRestart', [id, !!onlyWrong]); };

  q.review = function (deckId) { return q._call('review', [deckId]); };
  q.rate = function (deckId, cardId, rating) { return q._call('rate', [deckId, cardId, String(rating).toLowerCase()]); };
  q.resolveCard = function (deckId, cardId, action) { return q._call('resolveCard', [deckId, cardId, action || 'keep']); };

  q.openLesson = function (id, module, lesson, opts) {
    opts = opts || {};
    return q.studyToolsReady().then(function () {
      return q._call('openLesson', [id, module, lesson, { offline: !!opts.offline }], { onEvent: opts.onProgress });
    });
  };
  q.lessonDone = function (id, module, lesson, done) { return q._call('lessonDone', [id, module, lesson, done !== false]); };

  q.exportSet = function (id, format) {
    var wait = format === 'apkg' ? q.studyToolsReady() : Promise.resolve();
    return wait.then(function () { return q._call('studyExport', [id, format]); });
  };

  /** Save {filename, mime, text | base64 | blob} through a Blob and an <a download> click. */
  q.download = function (file) {
    var blob = file.blob;
    if (!blob && file.base64 != null) blob = new Blob([q._fromBase64(file.base64)], { type: file.mime });
    if (!blob) blob = new Blob([file.text], { type: (file.mime || 'text/plain') + ';charset=utf-8' });
    var url = URL.createObjectURL(blob);
    var a = document.createElement('a');
    a.href = url;
    a.download = file.filename;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(url); a.remove(); }, 1000);
    return file.filename;
  };

  q.downloadSet = function (id, format) { return q.exportSet(id, format).then(q.download); };

  q.importDeck = function (file) {
    var name = file.name;
    var read = typeof file.arrayBuffer === 'function' ? file.arrayBuffer() : Promise.resolve(file.data);
    return q.studyToolsReady().then(function () { return read; }).then(function (buf) {
      var bytes = buf instanceof Uint8Array ? buf.slice() : new Uint8Array(buf);
      return q._call('studyImport', [name], { payload: bytes });
    }).then(function (set) { changed(set); return set; });
  };

  q.promptTemplates = function () { return q._call('promptTemplates'); };
  q.promptTemplate = function (name) { return q._call('promptTemplate', [name]); };
  q.savePromptOverride = function (name, text) { return q._call('savePromptOverride', [name, text]); };
  q.resetPromptOverride = function (name) { return q._call('resetPromptOverride', [name]); };
})();
