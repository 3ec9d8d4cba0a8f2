/* The first run: a welcome card on an empty library (what Quire does, in three steps, and
 * "Try it with a sample library"), and, while the sample is in the library, a card that
 * suggests what to try and removes the sample in one click. */
var QuireWelcome = (function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;

  /* Open a view and run something in it the way a person would: fill its input and submit. */
  function runIn(view, testid, text) {
    location.hash = '#' + view;
    QuireUI.show(view);
    var input = document.querySelector('[data-view="' + view + '"] [data-testid="' + testid + '"]');
    if (!input) return;
    input.value = text;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    if (input.form) input.form.requestSubmit();
    input.focus();
  }

  function makeQuiz(info, button) {
    button.disabled = true;
    button.textContent = t('Making a quiz…');
    var from = location.hash;
    q.generate('quiz', { scope: { category: info.category }, count: 5, difficulty: 'easy' }).then(function (set) {
      if (location.hash !== from) {  // the user went elsewhere meanwhile: say where it is, do not pull them away
        QuireUI.toast(t('Your quiz is ready under Study.'));
        return;
      }
      location.hash = '#study';
      QuireUI.show('study');
      document.dispatchEvent(new CustomEvent('quire:open-set', { detail: { id: set.id } }));
    }, function (err) { QuireUI.toast(err.message, 'error'); }).then(function () {
      button.disabled = false;
      button.textContent = t('Take a 5-question quiz');
    });
  }

  /* Suggestions that work with and without a model server. */
  function suggestions(info) {
    var quiz = h('button', { type: 'button', testid: 'sample-quiz', onclick: function () { makeQuiz(info, quiz); } }, t('Take a 5-question quiz'));
    return h('div', { class: 'card sample-card', testid: 'sample-card' },
      h('div', { class: 'view-head' },
        h('h3', null, t('The sample library is ready')),
        h('span', { class: 'badge', testid: 'sample-badge' }, t('Sample')),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', testid: 'sample-remove', onclick: removeSample }, t('Remove the sample library'))),
      h('p', { class: 'muted' }, t('Two short documents, one English and one German, labelled “{category}”. Try one of these; each works with or without a model server.', { category: info.category })),
      h('ul', { class: 'sample-tries' },
        info.questions.map(function (text, i) {
          var other = info.languages[i] !== info.lang;  // a question about the document in the other language
          var label = t('Ask: “{question}”', { question: '\u0000' }).split('\u0000');  // the question keeps its own lang
          return h('li', null, h('button', { type: 'button', class: 'link', testid: 'sample-question',
            onclick: function () { runIn('ask', 'chat-input', text); } }, label[0], h('span', { lang: info.languages[i] }, text), label[1]),
            other ? h('span', { class: 'small muted' }, ' ', (info.languages[i] === 'de' ? t('(German document)') : t('(English document)'))) : null);
        }).concat(info.meaning ? [meaningTry(info.meaning)] : []).concat([
          h('li', null, h('button', { type: 'button', class: 'link', testid: 'sample-search',
            onclick: function () { runIn('search', 'search-input', info.search); } }, t('Search for “{words}”', { words: info.search }))),
          h('li', null, quiz),
        ])));
  }

  /* The question only meaning-based search answers, with what it takes: the note follows the
   * tab's embedding (quire:embedding) and the embedding choice. */
  function meaningTry(m) {
    var label = t('Ask: “{question}”', { question: '\u0000' }).split('\u0000');
    var note = h('span', { class: 'small muted', testid: 'sample-meaning-note' });
    var doc = m.about === 'de' ? t('German document') : t('English document');
    function say() {
      q.embeddingStatus().then(function (st) {
        var running = q.embeddingProgress && q.embeddingProgress();
        note.dataset.state = !st.model ? 'off' : st.missing ? 'waiting' : 'ready';
        note.textContent = ' ' + (!st.model ? t('({document}; needs meaning-based search, which is off: see Settings)', { document: doc })
          : st.missing ? t('({document}; found by meaning once the passages are embedded{progress})', { document: doc,
            progress: running && running.total ? ': ' + t('{done} of {total}', { done: running.done, total: running.total }) : '' })
            : t('({document}, found by meaning: the question shares no word with it)', { document: doc }));
      }, function () {});
    }
    var shown = false;  // once in the page and then gone, the card was rebuilt: the new one follows instead
    document.addEventListener('quire:embedding', function follow() {
      if (note.isConnected) { shown = true; say(); } else if (shown) document.removeEventListener('quire:embedding', follow);
    });
    say();
    return h('li', null, h('button', { type: 'button', class: 'link', testid: 'sample-meaning',
      onclick: function () { runIn('ask', 'chat-input', m.text); } }, label[0], h('span', { lang: m.lang }, m.text), label[1]), note);
  }

  function removeSample() {
    q.removeSample().then(function (r) {
      QuireUI.toast(r.removed === 1 ? t('Removed the sample document.') : t('Removed the {n} sample documents.', { n: r.removed }));
    }, function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function loadSample(button, status) {
    button.disabled = true;
    status.textContent = t('Adding the sample documents…');
    q.loadSample({ onProgress: function (e) {
      if (e.stage === 'done') status.textContent = t('Almost done…');
      else if (e.file) status.textContent = t('Training: {file}', { file: e.file });
    } }).then(function () {
      status.textContent = '';
    }, function (err) {
      button.disabled = false;
      status.textContent = QuireI18n.engine(err.message);
      QuireUI.toast(err.message, 'error');
    });
  }

  /** The card shown on an empty library. */
  function welcome() {
    var status = h('p', { class: 'muted', testid: 'sample-status', role: 'status' });
    var button = h('button', { type: 'button', class: 'primary', testid: 'sample-load' }, t('Try it with a sample library'));
    button.addEventListener('click', function () { loadSample(button, status); });
    return h('div', { class: 'card welcome', testid: 'welcome' },
      h('h3', null, t('Welcome to Quire')),
      h('p', null, t('Your documents stay in this browser. Quire works in three steps:')),
      h('ol', { class: 'welcome-steps' },
        h('li', null, h('strong', null, t('Add')), t(' your documents: drop files or folders above (PDF, Word, PowerPoint, Excel, Markdown, HTML, EPUB, text, recorded lectures in English).')),
        h('li', null, h('strong', null, t('Train')), t(': Quire reads them and builds its search index, here in the tab.')),
        h('li', null, h('strong', null, t('Search, ask and study')), t(': answers with page citations, quizzes, flashcards, workshops and mind maps.'))),
      h('p', null, t('Not sure yet? Try it on two short sample documents first; one click removes them again.')),
      button, status);
  }

  /** The sample's card, or null when the sample is not in the library. */
  function sampleCard(sources) {
    return q.sampleIds().then(function (ids) {
      if (!ids.length || !sources.some(function (s) { return ids.indexOf(s.id) >= 0 && s.status === 'trained'; })) return null;
      return q.sampleInfo().then(function (info) { return { card: suggestions(info), ids: ids }; });
    });
  }

  return { welcome: welcome, sampleCard: sampleCard };
})();
