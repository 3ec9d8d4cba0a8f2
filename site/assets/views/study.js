/* Study view: make quizzes, flashcards, workshops and mind maps from chosen sources, then
 * play them (quiz player, FSRS reviewer, lessons, interactive map), export them, and edit
 * the prompt templates.  Everything goes through window.quire (assets/api-study.js).
 *
 * This file is the hub (making sets, the shelf, opening one); each player is its own file
 * (views/study-quiz.js, study-cards.js, study-workshop.js, study-mindmap.js) and the
 * template editor is views/study-prompts.js.  They load after this one and share
 * self.QuireStudy. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var TOOLS = [
    { kind: 'quiz', label: t('Quiz'), hint: t('Multiple-choice and true/false questions with explanations') },
    { kind: 'flashcards', label: t('Flashcards'), hint: t('Front/back and cloze cards, reviewed with spaced repetition') },
    { kind: 'workshop', label: t('Workshop'), hint: t('A course outline; each lesson is written when you open it') },
    { kind: 'mindmap', label: t('Mind map'), hint: t('A topic tree you can expand, pan, zoom and export') },
  ];
  var KIND_LABEL = { quiz: t('Quiz'), flashcards: t('Flashcards'), workshop: t('Workshop'), mindmap: t('Mind map') };
  var EXPORTS = {
    quiz: [['markdown', 'Markdown'], ['csv', 'Quizlet CSV']],
    flashcards: [['apkg', 'Anki (.apkg)'], ['csv', 'Quizlet CSV'], ['markdown', 'Markdown']],
    workshop: [['markdown', 'Markdown']],
    mindmap: [['svg', 'SVG'], ['png', 'PNG'], ['markdown', t('Markdown outline')], ['opml', 'OPML']],
  };

  var ui = {}, tool = 'quiz', sourceNames = {}, running = null;
  var nav = 0;  // the user's moves between the shelf and sets: an answer for an earlier move is dropped

  /* ------------------------------------------------------------ layout */
  function init(root) {
    ui.root = root;
    ui.scope = h('select', { testid: 'study-scope', 'aria-label': t('Study from'), onchange: pickVisibility });
    ui.pick = h('div', { class: 'study-pick', testid: 'study-source-pick', hidden: true });
    ui.tools = h('div', { class: 'study-tools', role: 'radiogroup', 'aria-label': t('Tool') }, TOOLS.map(function (tool) {
      return h('button', { type: 'button', class: 'study-tool', role: 'radio', testid: 'tool-' + tool.kind, dataset: { kind: tool.kind },
        onclick: function () { chooseTool(tool.kind); } },
      h('span', { class: 'tool-icon' }, QuireIcons.svg(tool.kind)), h('strong', null, tool.label), h('small', null, tool.hint));
    }));
    ui.count = h('input', { type: 'number', min: '1', max: '50', value: '10', testid: 'study-count', 'aria-label': t('How many') });
    ui.difficulty = h('select', { testid: 'study-difficulty', 'aria-label': t('Difficulty') },
      h('option', { value: 'easy' }, t('Easy')), h('option', { value: 'medium', selected: true }, t('Medium')), h('option', { value: 'hard' }, t('Hard')));
    ui.topic = h('input', { type: 'text', testid: 'study-topic', placeholder: t('Optional: focus on a topic') });
    ui.aiNote = h('p', { class: 'muted small', testid: 'study-ai-note' });
    ui.generate = h('button', { type: 'submit', class: 'primary', testid: 'study-generate' }, t('Generate'));
    ui.stop = h('button', { type: 'button', testid: 'study-stop', hidden: true, onclick: stop }, t('Stop'));
    ui.progress = h('div', { class: 'study-progress', testid: 'study-progress', hidden: true, 'aria-live': 'polite' },
      h('div', { class: 'progress indeterminate' }, h('div', { class: 'progress-fill' })),
      ui.progressText = h('span', { class: 'muted small', testid: 'study-progress-text' }));
    ui.countLabel = h('span', null, t('Questions'));
    var make = h('form', { class: 'card study-make', testid: 'study-make', onsubmit: function (e) { e.preventDefault(); generate(); } },
      h('h3', null, t('Make study material')),
      h('div', { class: 'study-row' }, h('label', { class: 'field grow' }, h('span', null, t('From')), ui.scope)),
      ui.pick, ui.tools,
      h('div', { class: 'study-row' },
        h('label', { class: 'field narrow' }, ui.countLabel, ui.count),
        h('label', { class: 'field narrow' }, h('span', null, t('Difficulty')), ui.difficulty),
        h('label', { class: 'field grow' }, h('span', null, t('Topic')), ui.topic)),
      h('div', { class: 'study-row end' }, ui.aiNote, h('span', { class: 'spacer' }), ui.stop, ui.generate),
      ui.progress);

    ui.sets = h('ul', { class: 'study-sets', testid: 'study-sets' });
    ui.importInput = h('input', { type: 'file', accept: '.apkg,.csv,.txt,.tsv', testid: 'deck-import', class: 'visually-hidden',
      onchange: function () { if (ui.importInput.files[0]) importDeck(ui.importInput.files[0]); } });
    var shelf = h('div', { class: 'card' },
      h('div', { class: 'view-head' }, h('h3', null, t('Your study sets')), h('span', { class: 'spacer' }),
        h('label', { class: 'button-like', testid: 'deck-import-label' }, ui.importInput, t('Import a deck (.apkg, .csv)'))),
      ui.sets);
    ui.player = h('div', { class: 'card study-player', testid: 'study-player', hidden: true });
    ui.templates = self.QuireStudy.templateEditor();
    ui.home = h('div', { class: 'study-home' }, make, shelf, ui.templates);
    root.append(h('div', { class: 'view-head' }, h('h2', null, t('Study')),
      h('span', { class: 'muted small' }, t('Every item links back to the passage it came from.'))), ui.home, ui.player);
    chooseTool('quiz');
    // Hidden at ready, Study asks nothing: its set list needs the study service, which would load
    // every remaining service ahead of the person's first call.  show() fills it when opened.
    document.addEventListener('quire:ready', function () { if (QuireUI.shown(root)) refresh(); });
    document.addEventListener('quire:library-changed', function () { if (q.status().stage === 'ready' && QuireUI.shown(root)) fillScopes(); });
    document.addEventListener('quire:llm-status', function (e) { aiNote(e.detail); });
    // The welcome card's "take a quiz" opens the set it just made.
    document.addEventListener('quire:open-set', function (e) { openSet(e.detail.id); });
    document.addEventListener('quire:erased', function () {
      stop();
      ui.topic.value = '';
      QuireUI.clear(ui.player);
      QuireUI.clear(ui.sets);
      closePlayer();
    });
  }

  function refresh() {
    if (q.status().stage !== 'ready') return;
    fillScopes();
    loadSets();
    q.llmStatus().catch(function () {});
  }

  function aiNote(status) {
    var model = status && status.settings && status.settings.chat_model;
    ui.aiNote.textContent = model
      ? t(status.status === 'connected' ? 'Written by {model} from your passages.' : 'Written by {model} from your passages (not reachable now: Quire will make it without an AI model).', { model: model })
      : t('No chat model connected: material will be made without an AI model, from your documents’ own sentences.');
    ui.aiNote.dataset.model = model || '';
  }

  function chooseTool(kind) {
    tool = kind;
    ui.tools.querySelectorAll('.study-tool').forEach(function (b) { b.setAttribute('aria-checked', String(b.dataset.kind === kind)); });
    var counted = kind === 'quiz' || kind === 'flashcards';
    ui.count.disabled = !counted;
    ui.countLabel.textContent = kind === 'flashcards' ? t('Cards') : t('Questions');
    ui.difficulty.disabled = kind === 'mindmap';
  }

  function fillScopes() {
    return Promise.all([q.sources(), q.categories()]).then(function (res) {
      var keep = ui.scope.value;
      var trained = res[0].filter(function (s) { return s.status === 'trained'; });
      sourceNames = {};
      res[0].forEach(function (s) { sourceNames[s.id] = s.name; });
      QuireUI.clear(ui.scope).appendChild(h('option', { value: '' }, t('All sources ({n})', { n: trained.length })));
      if (res[1].length) ui.scope.appendChild(h('optgroup', { label: t('A category') }, res[1].map(function (c) { return h('option', { value: 'cat:' + c }, c); })));
      ui.scope.appendChild(h('option', { value: 'pick' }, t('Choose sources…')));
      ui.scope.value = keep;
      if (ui.scope.selectedIndex < 0) ui.scope.value = '';
      var checked = {};
      ui.pick.querySelectorAll('input:checked').forEach(function (i) { checked[i.value] = true; });
      QuireUI.fill(ui.pick, trained.length ? trained.map(function (s) {
        return h('label', { class: 'inline pick-item' }, h('input', { type: 'checkbox', value: s.id, checked: !!checked[s.id], testid: 'pick-source' }), s.name);
      }) : h('p', { class: 'muted' }, t('No trained sources yet: add documents in the Library and press Train.')));
      pickVisibility();
    });
  }

  function pickVisibility() { ui.pick.hidden = ui.scope.value !== 'pick'; }

  function scopeValue() {
    var v = ui.scope.value;
    if (v.indexOf('cat:') === 0) return { category: v.slice(4) };
    if (v === 'pick') {
      var ids = Array.prototype.map.call(ui.pick.querySelectorAll('input:checked'), function (i) { return i.value; });
      return { sources: ids.length ? ids : ['(none)'] };
    }
    return null;
  }

  /* ------------------------------------------------------------ generating */
  function busy(text) {
    ui.progress.hidden = !text;
    ui.progressText.textContent = text || '';
    ui.generate.disabled = !!text;
    ui.stop.hidden = !text;
  }

  function generate() {
    if (running) return;
    var ctrl = new AbortController();
    running = ctrl;
    var from = nav;
    busy(q.status().sklearn === 'ready' ? t('Starting…') : t('Preparing the study tools…'));
    q.generate(tool, { scope: scopeValue(), count: Number(ui.count.value) || 10, difficulty: ui.difficulty.value,
      topic: ui.topic.value.trim(), signal: ctrl.signal,
      onProgress: function (e) { ui.progressText.textContent = QuireI18n.engine(e.message) + (e.chars ? ' (' + QuireUI.plural(e.chars, 'character') + ')' : ''); } })
      .then(function (set) {
        var r = set.report || {};
        var dropped = (r.dropped || []).length;
        QuireUI.toast(t('{kind} ready', { kind: KIND_LABEL[set.kind] }) + (set.made_without_ai ? ', ' + t('made without an AI model') : '') +
          (dropped ? '. ' + t(dropped === 1 ? '{items} the model got wrong was dropped' : '{items} the model got wrong were dropped', { items: QuireUI.plural(dropped, 'item') }) : '') + '.');
        if (r.note) QuireUI.toast(QuireI18n.engine(r.note));
        loadSets();
        // a set opened (or left) while this one was being made stays where the user is
        if (from === nav && ui.player.hidden) openSet(set.id);
        else QuireUI.toast(t('It is on the shelf under “{title}”.', { title: QuireI18n.engine(set.title) }));
      }, function (err) { QuireUI.toast(err.message, 'error'); })
      .then(function () { running = null; busy(null); });
  }

  function stop() { if (running) running.abort(); }

  /* ------------------------------------------------------------ the shelf */
  function loadSets() {
    return q.studySets().then(function (sets) {
      QuireUI.fill(ui.sets, sets.length ? sets.map(setRow) :
        h('li', { class: 'empty', testid: 'study-empty' }, t('Nothing yet. Choose a tool above and press Generate.')));
    }, function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function statLine(s) {
    var st = s.stats || {};
    if (s.kind === 'quiz') {
      return st.status === 'finished' ? t('Scored {correct} of {total} ({percent}%)', { correct: st.score.correct, total: st.total, percent: st.score.percent })
        : st.position ? t('In progress: {n} of {total} answered', { n: st.position, total: st.total }) : QuireUI.plural(st.total, 'question');
    }
    if (s.kind === 'flashcards') return QuireUI.plural(st.total, 'card') + ' · ' + (st.due ? t('{n} due now', { n: st.due }) : t('next due {when}', { when: when(st.next_due) }));
    if (s.kind === 'workshop') return t('{done} of {lessons} done', { done: st.done, lessons: QuireUI.plural(st.lessons, 'lesson') });
    return QuireUI.plural(st.nodes, 'topic');
  }

  function setRow(s) {
    return h('li', { class: 'study-set', testid: 'study-set', dataset: { id: s.id, kind: s.kind } },
      h('span', { class: 'set-icon kind-' + s.kind }, QuireIcons.svg(s.kind)),
      h('div', { class: 'set-main' },
        h('a', { href: '#study', class: 'set-title', testid: 'set-open', onclick: function (e) { e.preventDefault(); openSet(s.id); } }, QuireI18n.engine(s.title)),
        h('div', { class: 'muted small' }, KIND_LABEL[s.kind] + ' · ' + statLine(s) + ' · ' + QuireUI.date(s.created),
          s.made_without_ai ? h('span', { class: 'badge no-ai', testid: 'no-ai-badge' }, s.imported ? t('imported') : t('made without an AI model')) : null,
          s.course ? h('span', { class: 'badge', testid: 'from-teacher-badge', title: s.course.title }, t('from your teacher')) : null)),
      h('button', { type: 'button', class: 'icon', testid: 'set-delete', 'aria-label': t('Delete {name}', { name: QuireI18n.engine(s.title) }), title: t('Delete'),
        onclick: function () {
          if (!confirm(t('Delete “{name}”? Its progress goes too.', { name: QuireI18n.engine(s.title) }))) return;
          q.deleteSet(s.id).then(loadSets, function (err) { QuireUI.toast(err.message, 'error'); });
        } }, '×'));
  }

  function importDeck(file) {
    var from = nav;
    q.importDeck(file).then(function (set) {
      QuireUI.toast(t('Imported {cards} from {file}.', { cards: QuireUI.plural(set.items.length, 'card'), file: file.name }));
      ui.importInput.value = '';
      loadSets();
      if (from === nav && ui.player.hidden) openSet(set.id);
    }, function (err) { ui.importInput.value = ''; QuireUI.toast(err.message, 'error'); });
  }

  /* ------------------------------------------------------------ the player */
  function openSet(id) {
    var mine = ++nav;
    return q.openSet(id).then(function (set) {
      if (mine !== nav) return;  // another set was chosen, or the shelf, meanwhile
      ui.home.hidden = true;
      ui.player.hidden = false;
      var body = h('div', { class: 'player-body' });
      QuireUI.fill(ui.player,
        h('div', { class: 'view-head' },
          h('button', { type: 'button', testid: 'player-back', onclick: closePlayer }, t('← All study sets')),
          h('h3', { testid: 'player-title' }, QuireI18n.engine(set.title)),
          set.made_without_ai ? h('span', { class: 'badge no-ai' }, set.imported ? t('imported') : t('made without an AI model')) : null,
          set.course ? h('span', { class: 'badge' }, t('from your teacher')) : null,
          h('span', { class: 'spacer' }),
          exportButtons(set)),
        body);
      var shown = self.QuireStudy.players[set.kind](body, set);  // views/study-<player>.js
      if (set.kind === 'mindmap') ui.mindmap = shown;
      document.getElementById('main').scrollTo(0, 0);
    }, function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function closePlayer() {
    nav++;
    ui.player.hidden = true;
    ui.home.hidden = false;
    loadSets();
  }

  function exportButtons(set) {
    return h('div', { class: 'export-row' }, h('span', { class: 'muted small' }, t('Export:')), EXPORTS[set.kind].map(function (f) {
      return h('button', { type: 'button', class: 'small-button', testid: 'export-' + f[0], onclick: function () { exportAs(set, f[0]); } }, f[1]);
    }));
  }

  function exportAs(set, format) {
    if (set.kind === 'mindmap' && (format === 'svg' || format === 'png')) {
      var map = ui.mindmap;
      if (format === 'svg') { q.download({ filename: slug(set.title) + '.svg', mime: 'image/svg+xml', text: map.svgText() }); return; }
      map.pngBlob().then(function (blob) { q.download({ filename: slug(set.title) + '.png', blob: blob }); },
        function (err) { QuireUI.toast(err.message, 'error'); });
      return;
    }
    q.downloadSet(set.id, format).catch(function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function slug(title) { return (title.replace(/[^\w\- ]+/g, ' ').trim().split(/\s+/).join('-') || 'quire').slice(0, 60); }

  function when(iso) {
    if (!iso) return '—';
    var ms = new Date(iso) - Date.now();
    if (ms <= 0) return t('now');
    var min = ms / 60000;
    var rel = min < 60 ? Math.round(min) + ' min' : min < 1440 ? Math.round(min / 60) + ' h' : QuireUI.plural(Math.round(min / 1440), 'day');
    return t('in {time}', { time: rel });
  }

  function sourceLink(chunkIds, label) {
    if (!chunkIds || !chunkIds.length) return null;
    return h('button', { type: 'button', class: 'link', testid: 'source-link', onclick: function () { QuirePassage.open(chunkIds[0], ''); } },
      label || t('Source: {name}', { name: sourceNames[QuirePassage.parseId(chunkIds[0]).source_id] || t('unknown source') }));
  }

  self.QuireStudy = { players: {}, when: when, sourceLink: sourceLink, templateEditor: null };

  /* scipy and scikit-learn load only once asked (engine/worker-lazy.js): from the moment Study is
   * shown, while the user picks a tool, not in every tab that is only searched. */
  function show() {
    q.studyToolsReady().catch(function () {});
    refresh();
  }

  QuireUI.register('study', { init: init, show: show });
})();
