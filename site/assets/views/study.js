/* Study view: make quizzes, flashcards, workshops and mind maps from chosen sources, then
 * play them (quiz player, FSRS reviewer, lessons, interactive map), export them, and edit
 * the prompt templates.  Everything goes through window.quire (assets/api-study.js). */
(function () {
  'use strict';
  var h = QuireUI.h;
  var q = self.quire;
  var TOOLS = [
    { kind: 'quiz', label: 'Quiz', hint: 'Multiple-choice and true/false questions with explanations' },
    { kind: 'flashcards', label: 'Flashcards', hint: 'Front/back and cloze cards, reviewed with spaced repetition' },
    { kind: 'workshop', label: 'Workshop', hint: 'A course outline; each lesson is written when you open it' },
    { kind: 'mindmap', label: 'Mind map', hint: 'A topic tree you can expand, pan, zoom and export' },
  ];
  var ICON = { quiz: '?', flashcards: '▤', workshop: '☰', mindmap: '✳' };
  var KIND_LABEL = { quiz: 'Quiz', flashcards: 'Flashcards', workshop: 'Workshop', mindmap: 'Mind map' };
  var EXPORTS = {
    quiz: [['markdown', 'Markdown'], ['csv', 'Quizlet CSV']],
    flashcards: [['apkg', 'Anki (.apkg)'], ['csv', 'Quizlet CSV'], ['markdown', 'Markdown']],
    workshop: [['markdown', 'Markdown']],
    mindmap: [['svg', 'SVG'], ['png', 'PNG'], ['markdown', 'Markdown outline'], ['opml', 'OPML']],
  };
  var RATINGS = [['again', 'Again'], ['hard', 'Hard'], ['good', 'Good'], ['easy', 'Easy']];

  var ui = {}, tool = 'quiz', sourceNames = {}, current = null, running = null;

  /* ------------------------------------------------------------ layout */
  function init(root) {
    ui.root = root;
    ui.scope = h('select', { testid: 'study-scope', 'aria-label': 'Study from', onchange: pickVisibility });
    ui.pick = h('div', { class: 'study-pick', testid: 'study-source-pick', hidden: true });
    ui.tools = h('div', { class: 'study-tools', role: 'radiogroup', 'aria-label': 'Tool' }, TOOLS.map(function (t) {
      return h('button', { type: 'button', class: 'study-tool', role: 'radio', testid: 'tool-' + t.kind, dataset: { kind: t.kind },
        onclick: function () { chooseTool(t.kind); } },
      h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, ICON[t.kind]), h('strong', null, t.label), h('small', null, t.hint));
    }));
    ui.count = h('input', { type: 'number', min: '1', max: '50', value: '10', testid: 'study-count', 'aria-label': 'How many' });
    ui.difficulty = h('select', { testid: 'study-difficulty', 'aria-label': 'Difficulty' },
      h('option', { value: 'easy' }, 'Easy'), h('option', { value: 'medium', selected: true }, 'Medium'), h('option', { value: 'hard' }, 'Hard'));
    ui.topic = h('input', { type: 'text', testid: 'study-topic', placeholder: 'Optional: focus on a topic' });
    ui.aiNote = h('p', { class: 'muted small', testid: 'study-ai-note' });
    ui.generate = h('button', { type: 'submit', class: 'primary', testid: 'study-generate' }, 'Generate');
    ui.stop = h('button', { type: 'button', testid: 'study-stop', hidden: true, onclick: stop }, 'Stop');
    ui.progress = h('div', { class: 'study-progress', testid: 'study-progress', hidden: true, 'aria-live': 'polite' },
      h('div', { class: 'progress indeterminate' }, h('div', { class: 'progress-fill' })),
      ui.progressText = h('span', { class: 'muted small', testid: 'study-progress-text' }));
    ui.countLabel = h('span', null, 'Questions');
    var make = h('form', { class: 'card study-make', testid: 'study-make', onsubmit: function (e) { e.preventDefault(); generate(); } },
      h('h3', null, 'Make study material'),
      h('div', { class: 'study-row' }, h('label', { class: 'field grow' }, h('span', null, 'From'), ui.scope)),
      ui.pick, ui.tools,
      h('div', { class: 'study-row' },
        h('label', { class: 'field narrow' }, ui.countLabel, ui.count),
        h('label', { class: 'field narrow' }, h('span', null, 'Difficulty'), ui.difficulty),
        h('label', { class: 'field grow' }, h('span', null, 'Topic'), ui.topic)),
      h('div', { class: 'study-row end' }, ui.aiNote, h('span', { class: 'spacer' }), ui.stop, ui.generate),
      ui.progress);

    ui.sets = h('ul', { class: 'study-sets', testid: 'study-sets' });
    ui.importInput = h('input', { type: 'file', accept: '.apkg,.csv,.txt,.tsv', testid: 'deck-import', class: 'visually-hidden',
      onchange: function () { if (ui.importInput.files[0]) importDeck(ui.importInput.files[0]); } });
    var shelf = h('div', { class: 'card' },
      h('div', { class: 'view-head' }, h('h3', null, 'Your study sets'), h('span', { class: 'spacer' }),
        h('label', { class: 'button-like', testid: 'deck-import-label' }, ui.importInput, 'Import a deck (.apkg, .csv)')),
      ui.sets);
    ui.player = h('div', { class: 'card study-player', testid: 'study-player', hidden: true });
    ui.templates = templateEditor();
    ui.home = h('div', { class: 'study-home' }, make, shelf, ui.templates);
    root.append(h('div', { class: 'view-head' }, h('h2', null, 'Study'),
      h('span', { class: 'muted small' }, 'Every item links back to the passage it came from.')), ui.home, ui.player);
    chooseTool('quiz');
    document.addEventListener('quire:ready', refresh);
    document.addEventListener('quire:library-changed', function () { if (q.status().stage === 'ready') fillScopes(); });
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
      ? 'Written by ' + model + ' from your passages' + (status.status === 'connected' ? '.' : ' (not reachable now: Quire will make it without an AI model).')
      : 'No chat model connected: material will be made without an AI model, from your documents’ own sentences.';
    ui.aiNote.dataset.model = model || '';
  }

  function chooseTool(kind) {
    tool = kind;
    ui.tools.querySelectorAll('.study-tool').forEach(function (b) { b.setAttribute('aria-checked', String(b.dataset.kind === kind)); });
    var counted = kind === 'quiz' || kind === 'flashcards';
    ui.count.disabled = !counted;
    ui.countLabel.textContent = kind === 'flashcards' ? 'Cards' : 'Questions';
    ui.difficulty.disabled = kind === 'mindmap';
  }

  function fillScopes() {
    return Promise.all([q.sources(), q.categories()]).then(function (res) {
      var keep = ui.scope.value;
      var trained = res[0].filter(function (s) { return s.status === 'trained'; });
      sourceNames = {};
      res[0].forEach(function (s) { sourceNames[s.id] = s.name; });
      QuireUI.clear(ui.scope).appendChild(h('option', { value: '' }, 'All sources (' + trained.length + ')'));
      if (res[1].length) ui.scope.appendChild(h('optgroup', { label: 'A category' }, res[1].map(function (c) { return h('option', { value: 'cat:' + c }, c); })));
      ui.scope.appendChild(h('option', { value: 'pick' }, 'Choose sources…'));
      ui.scope.value = keep;
      if (ui.scope.selectedIndex < 0) ui.scope.value = '';
      var checked = {};
      ui.pick.querySelectorAll('input:checked').forEach(function (i) { checked[i.value] = true; });
      QuireUI.fill(ui.pick, trained.length ? trained.map(function (s) {
        return h('label', { class: 'inline pick-item' }, h('input', { type: 'checkbox', value: s.id, checked: !!checked[s.id], testid: 'pick-source' }), s.name);
      }) : h('p', { class: 'muted' }, 'No trained sources yet: add documents in the Library and press Train.'));
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
    busy(q.status().sklearn === 'ready' ? 'Starting…' : 'Preparing the study tools…');
    q.generate(tool, { scope: scopeValue(), count: Number(ui.count.value) || 10, difficulty: ui.difficulty.value,
      topic: ui.topic.value.trim(), signal: ctrl.signal,
      onProgress: function (e) { ui.progressText.textContent = e.message + (e.chars ? ' (' + e.chars + ' characters)' : ''); } })
      .then(function (set) {
        var r = set.report || {};
        var dropped = (r.dropped || []).length;
        QuireUI.toast(KIND_LABEL[set.kind] + ' ready' + (set.made_without_ai ? ', made without an AI model' : '') +
          (dropped ? '. ' + QuireUI.plural(dropped, 'item') + ' the model got wrong ' + (dropped === 1 ? 'was' : 'were') + ' dropped' : '') + '.');
        if (r.note) QuireUI.toast(r.note);
        loadSets();
        openSet(set.id);
      }, function (err) { QuireUI.toast(err.message, 'error'); })
      .then(function () { running = null; busy(null); });
  }

  function stop() { if (running) running.abort(); }

  /* ------------------------------------------------------------ the shelf */
  function loadSets() {
    return q.studySets().then(function (sets) {
      QuireUI.fill(ui.sets, sets.length ? sets.map(setRow) :
        h('li', { class: 'empty', testid: 'study-empty' }, 'Nothing yet. Choose a tool above and press Generate.'));
    }, function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function statLine(s) {
    var st = s.stats || {};
    if (s.kind === 'quiz') {
      return st.status === 'finished' ? 'Scored ' + st.score.correct + ' of ' + st.total + ' (' + st.score.percent + '%)'
        : st.position ? 'In progress: ' + st.position + ' of ' + st.total + ' answered' : QuireUI.plural(st.total, 'question');
    }
    if (s.kind === 'flashcards') return QuireUI.plural(st.total, 'card') + ' · ' + (st.due ? st.due + ' due now' : 'next due ' + when(st.next_due));
    if (s.kind === 'workshop') return st.done + ' of ' + QuireUI.plural(st.lessons, 'lesson') + ' done';
    return QuireUI.plural(st.nodes, 'topic');
  }

  function setRow(s) {
    return h('li', { class: 'study-set', testid: 'study-set', dataset: { id: s.id, kind: s.kind } },
      h('span', { class: 'set-icon kind-' + s.kind, 'aria-hidden': 'true' }, ICON[s.kind]),
      h('div', { class: 'set-main' },
        h('a', { href: '#study', class: 'set-title', testid: 'set-open', onclick: function (e) { e.preventDefault(); openSet(s.id); } }, s.title),
        h('div', { class: 'muted small' }, KIND_LABEL[s.kind] + ' · ' + statLine(s) + ' · ' + QuireUI.date(s.created),
          s.made_without_ai ? h('span', { class: 'badge no-ai', testid: 'no-ai-badge' }, s.imported ? 'imported' : 'made without an AI model') : null)),
      h('button', { type: 'button', class: 'icon', testid: 'set-delete', 'aria-label': 'Delete ' + s.title, title: 'Delete',
        onclick: function () {
          if (!confirm('Delete “' + s.title + '”? Its progress goes too.')) return;
          q.deleteSet(s.id).then(loadSets, function (err) { QuireUI.toast(err.message, 'error'); });
        } }, '×'));
  }

  function importDeck(file) {
    q.importDeck(file).then(function (set) {
      QuireUI.toast('Imported ' + QuireUI.plural(set.items.length, 'card') + ' from ' + file.name + '.');
      ui.importInput.value = '';
      loadSets();
      openSet(set.id);
    }, function (err) { ui.importInput.value = ''; QuireUI.toast(err.message, 'error'); });
  }

  /* ------------------------------------------------------------ the player */
  function openSet(id) {
    return q.openSet(id).then(function (set) {
      current = set;
      ui.home.hidden = true;
      ui.player.hidden = false;
      var body = h('div', { class: 'player-body' });
      QuireUI.fill(ui.player,
        h('div', { class: 'view-head' },
          h('button', { type: 'button', testid: 'player-back', onclick: closePlayer }, '← All study sets'),
          h('h3', { testid: 'player-title' }, set.title),
          set.made_without_ai ? h('span', { class: 'badge no-ai' }, set.imported ? 'imported' : 'made without an AI model') : null,
          h('span', { class: 'spacer' }),
          exportButtons(set)),
        body);
      ({ quiz: quizPlayer, flashcards: reviewer, workshop: workshopPlayer, mindmap: mindmapPlayer })[set.kind](body, set);
      document.getElementById('main').scrollTo(0, 0);
    }, function (err) { QuireUI.toast(err.message, 'error'); });
  }

  function closePlayer() {
    current = null;
    ui.player.hidden = true;
    ui.home.hidden = false;
    loadSets();
  }

  function exportButtons(set) {
    return h('div', { class: 'export-row' }, h('span', { class: 'muted small' }, 'Export:'), EXPORTS[set.kind].map(function (f) {
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
    if (ms <= 0) return 'now';
    var min = ms / 60000;
    var rel = min < 60 ? Math.round(min) + ' min' : min < 1440 ? Math.round(min / 60) + ' h' : Math.round(min / 1440) + ' days';
    return 'in ' + rel;
  }

  function sourceLink(chunkIds, label) {
    if (!chunkIds || !chunkIds.length) return null;
    return h('button', { type: 'button', class: 'link', testid: 'source-link', onclick: function () { QuirePassage.open(chunkIds[0], ''); } },
      label || ('Source: ' + (sourceNames[chunkIds[0].split(':')[0]] || 'passage')));
  }

  /* ---- quiz ---- */
  function quizPlayer(body, set) {
    var box = h('div', { class: 'quiz', testid: 'quiz-player' });
    body.appendChild(box);
    renderQuiz(box, set, { session: set.session, score: set.stats.score, position: set.stats.position, total: set.stats.total });
  }

  function renderQuiz(box, set, st) {
    var s = st.session;
    if (s.status === 'finished') return renderScore(box, set, st);
    var item = s.items[s.order[s.position]];
    var options = h('div', { class: 'quiz-options' });
    var feedback = h('div', { class: 'quiz-feedback', testid: 'quiz-feedback', hidden: true });
    var nextBtn = h('button', { type: 'button', class: 'primary', testid: 'quiz-next', hidden: true }, s.position + 1 === s.order.length ? 'See your score' : 'Next question');
    item.options.forEach(function (opt, i) {
      options.appendChild(h('button', { type: 'button', class: 'quiz-option', testid: 'quiz-option', dataset: { index: i },
        onclick: function () { choose(i); } }, h('span', { class: 'opt-letter' }, String.fromCharCode(65 + i)), h('span', null, opt)));
    });
    function choose(i) {
      options.querySelectorAll('button').forEach(function (b) { b.disabled = true; });
      q.quizAnswer(set.id, i).then(function (res) {
        options.children[res.answer].classList.add('right');
        if (!res.correct) options.children[i].classList.add('wrong');
        feedback.dataset.correct = String(res.correct);
        QuireUI.fill(feedback, h('strong', null, res.correct ? 'Correct.' : 'Not quite: the answer is ' + String.fromCharCode(65 + res.answer) + '.'),
          res.explanation ? h('p', null, res.explanation) : null, sourceLink(res.chunk_ids));
        feedback.hidden = false;
        nextBtn.hidden = false;
        nextBtn.focus();
        nextBtn.onclick = function () { renderQuiz(box, set, res); };
      }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
    var pct = Math.round(100 * s.position / s.order.length);
    var bar = h('div', { class: 'progress' }, h('div', { class: 'progress-fill' }));
    bar.firstChild.style.width = pct + '%';
    QuireUI.fill(box,
      h('div', { class: 'quiz-head' }, h('span', { testid: 'quiz-progress' }, 'Question ' + (s.position + 1) + ' of ' + s.order.length),
        h('span', { class: 'muted small' }, item.type === 'true_false' ? 'True or false' : 'Multiple choice'),
        h('span', { class: 'spacer' }),
        h('button', { type: 'button', class: 'small-button', testid: 'quiz-finish', onclick: function () {
          q.quizSubmit(set.id).then(function (res) { renderQuiz(box, set, res); });
        } }, 'Finish now')),
      bar,
      h('p', { class: 'quiz-question', testid: 'quiz-question' }, item.question),
      options, feedback, h('div', { class: 'quiz-actions' }, nextBtn));
  }

  function renderScore(box, set, st) {
    var sc = st.score;
    var byId = {};
    st.session.items.forEach(function (it) { byId[it.id] = it; });
    var grade = sc.percent >= 80 ? 'great' : sc.percent >= 50 ? 'ok' : 'low';
    var attempts = st.session.history.concat([{ finished: st.session.finished, score: sc }]);
    QuireUI.fill(box,
      h('div', { class: 'quiz-score grade-' + grade, testid: 'quiz-score', dataset: { correct: sc.correct, total: sc.total } },
        h('div', { class: 'score-ring' }, h('strong', null, sc.percent + '%')),
        h('div', null, h('h3', null, sc.correct + ' of ' + sc.total + ' correct'),
          h('p', { class: 'muted' }, sc.skipped ? sc.skipped + ' skipped. ' : '', sc.percent >= 80 ? 'Well done.' : 'Review the ones you missed below, then try again.'),
          h('div', { class: 'add-row' },
            h('button', { type: 'button', class: 'primary', testid: 'quiz-retry', onclick: function () { restart(false); } }, 'Take it again'),
            sc.wrong.length ? h('button', { type: 'button', testid: 'quiz-retry-wrong', onclick: function () { restart(true); } }, 'Retry the ' + sc.wrong.length + ' missed') : null))),
      h('ol', { class: 'quiz-review' }, st.session.answers.map(function (a) {
        var it = byId[a.item] || {};
        return h('li', { class: a.correct ? 'right' : 'wrong' }, h('p', null, it.question),
          h('p', { class: 'small' }, a.correct ? '✓ ' + it.options[it.answer] : '✗ ' + (a.choice == null ? 'skipped' : it.options[a.choice]) + ' — answer: ' + it.options[it.answer]),
          it.explanation ? h('p', { class: 'muted small' }, it.explanation) : null, sourceLink(it.chunk_ids));
      })),
      h('details', { class: 'quiz-history', testid: 'quiz-history', open: attempts.length > 1 },
        h('summary', null, 'Attempts (' + attempts.length + ')'),
        h('table', { class: 'mini' }, h('tr', null, h('th', null, 'Finished'), h('th', null, 'Score')),
          attempts.map(function (a) {
            return h('tr', { testid: 'quiz-attempt' }, h('td', null, a.finished ? new Date(a.finished).toLocaleString() : '—'),
              h('td', null, a.score.correct + ' / ' + a.score.total + ' (' + a.score.percent + '%)'));
          }))));
    function restart(onlyWrong) {
      q.quizRestart(set.id, onlyWrong).then(function (res) { renderQuiz(box, set, res); }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
  }

  /* ---- flashcards ---- */
  function clozeParts(text, reveal) {
    var out = [], re = /\{\{c(\d+)::((?:(?!\}\}|::).)*)(?:::((?:(?!\}\}).)*))?\}\}/g, at = 0, m;
    while ((m = re.exec(text))) {
      out.push(text.slice(at, m.index));
      out.push(h('span', { class: reveal ? 'cloze shown' : 'cloze' }, reveal ? m[2] : '[' + (m[3] || '…') + ']'));
      at = re.lastIndex;
    }
    out.push(text.slice(at));
    return out;
  }

  function reviewer(body, set) {
    var box = h('div', { class: 'reviewer', testid: 'flash-reviewer' });
    var table = h('div', { class: 'deck-table' });
    body.append(box, table);
    function load() { return q.review(set.id).then(function (queue) { show(queue); }, function (err) { QuireUI.toast(err.message, 'error'); }); }
    function show(queue) {
      renderTable(queue);
      var counts = h('div', { class: 'flash-counts', testid: 'flash-counts' },
        h('span', { class: 'pill' }, queue.due + ' due'), h('span', { class: 'pill' }, QuireUI.plural(queue.total, 'card')),
        queue.flagged ? h('span', { class: 'pill warn' }, queue.flagged + ' to check') : null,
        h('span', { class: 'muted small' }, 'Next due: ' + (queue.due ? 'now' : when(queue.next_due))));
      var card = queue.cards[0];
      if (!card) {
        return QuireUI.fill(box, counts, h('div', { class: 'flash-done', testid: 'flash-done' },
          h('strong', null, 'All caught up.'), h('p', { class: 'muted' }, queue.next_due ? 'The next card comes back ' + when(queue.next_due) + ' (' + new Date(queue.next_due).toLocaleString() + ').' : '')));
      }
      var answer = h('div', { class: 'flash-back', testid: 'flash-back', hidden: true },
        card.type === 'cloze' ? h('p', { class: 'flash-text' }, clozeParts(card.text, true)) : h('p', { class: 'flash-text' }, card.back),
        card.type === 'cloze' && card.extra ? h('p', { class: 'muted small' }, card.extra) : null,
        sourceLink(card.chunk_ids));
      var rateRow = h('div', { class: 'rate-row', hidden: true }, RATINGS.map(function (r) {
        return h('button', { type: 'button', class: 'rate rate-' + r[0], testid: 'rate-' + r[0], dataset: { interval: card.intervals[r[0]] },
          onclick: function () { rate(card, r[0]); } }, h('strong', null, r[1]), h('small', null, card.intervals[r[0]]));
      }));
      var showBtn = h('button', { type: 'button', class: 'primary wide', testid: 'flash-show', onclick: function () {
        answer.hidden = false; rateRow.hidden = false; showBtn.hidden = true; rateRow.querySelector('.rate-good').focus();
      } }, 'Show answer');
      QuireUI.fill(box, counts,
        card.flagged.length ? h('div', { class: 'flash-flag', testid: 'flash-flag' },
          h('strong', null, card.flagged.some(function (f) { return f.indexOf('removed') === 0; }) ? 'The source of this card was removed.' : 'The source of this card changed since it was made.'),
          ' Check it still holds. ',
          h('button', { type: 'button', class: 'small-button', testid: 'flag-keep', onclick: function () { q.resolveCard(set.id, card.id, 'keep').then(load); } }, 'It still holds'),
          h('button', { type: 'button', class: 'small-button danger', testid: 'flag-delete', onclick: function () { q.resolveCard(set.id, card.id, 'delete').then(load); } }, 'Delete card')) : null,
        h('div', { class: 'flashcard', testid: 'flashcard', dataset: { id: card.id } },
          h('span', { class: 'muted small card-kind' }, card.type === 'cloze' ? 'Fill the blank' : 'Question'),
          h('p', { class: 'flash-text', testid: 'flash-front' }, card.type === 'cloze' ? clozeParts(card.text, false) : card.front),
          answer),
        showBtn, rateRow);
    }
    function rate(card, rating) {
      box.querySelectorAll('.rate').forEach(function (b) { b.disabled = true; });
      q.rate(set.id, card.id, rating).then(function (res) {
        show(res.next);
        var note = h('p', { class: 'rated muted small', testid: 'flash-rated' }, 'Rated ' + rating + ': back ' + (res.interval === '<1m' ? 'in under a minute' : 'in ' + res.interval) + '.');
        if (res.lapse && res.chunk_ids.length) {
          note.append(' ', h('button', { type: 'button', class: 'link', testid: 'show-passage', onclick: function () { QuirePassage.open(res.chunk_ids[0], ''); } }, 'Show me the passage'));
        }
        box.appendChild(note);
      }, function (err) { QuireUI.toast(err.message, 'error'); });
    }
    function renderTable(queue) {
      var items = {};
      current.items.forEach(function (i) { items[i.id] = i; });
      var ids = Object.keys(queue.schedule).sort(function (a, b) { return queue.schedule[a] < queue.schedule[b] ? -1 : 1; });
      QuireUI.fill(table, h('details', { testid: 'deck-details' }, h('summary', null, 'All cards and when they are due'),
        h('table', { class: 'mini' }, h('tr', null, h('th', null, 'Card'), h('th', null, 'Due')), ids.map(function (id) {
          var it = items[id] || {};
          var text = it.type === 'cloze' ? it.text.replace(/\{\{c\d+::((?:(?!\}\}|::).)*)(?:::[^}]*)?\}\}/g, '[$1]') : it.front;
          return h('tr', { testid: 'card-due', dataset: { id: id, due: queue.schedule[id] } }, h('td', null, text),
            h('td', { class: 'nowrap' }, when(queue.schedule[id])));
        }))));
    }
    load();
  }

  /* ---- workshop ---- */
  function workshopPlayer(body, set) {
    var outline = h('nav', { class: 'ws-outline', testid: 'workshop-outline', 'aria-label': 'Lessons' });
    var panel = h('article', { class: 'ws-lesson', testid: 'lesson-panel' },
      h('p', { class: 'muted' }, 'Choose a lesson. Each one is written from your passages the first time you open it, then kept.'));
    var progress = h('div', { class: 'ws-progress' });
    body.append(progress, h('div', { class: 'workshop', testid: 'workshop-player' }, outline, panel));
    function paint(s) {
      set = s;
      var total = s.stats.lessons, done = s.done.length;
      var bar = h('div', { class: 'progress' }, h('div', { class: 'progress-fill' }));
      bar.firstChild.style.width = Math.round(100 * done / Math.max(total, 1)) + '%';
      QuireUI.fill(progress, h('span', { testid: 'workshop-progress' }, done + ' of ' + QuireUI.plural(total, 'lesson') + ' done'), bar);
      QuireUI.fill(outline, s.outline.modules.map(function (m, mi) {
        return h('section', null, h('h4', null, (mi + 1) + '. ' + m.title), m.summary ? h('p', { class: 'muted small' }, m.summary) : null,
          h('ol', null, m.lessons.map(function (l, li) {
            var key = mi + '.' + li;
            return h('li', null, h('button', { type: 'button', class: 'lesson-link' + (s.done.indexOf(key) >= 0 ? ' done' : '') + (s.lessons[key] ? ' written' : ''),
              testid: 'lesson-link', dataset: { key: key }, onclick: function () { open(mi, li); } },
            h('span', { class: 'check', 'aria-hidden': 'true' }, s.done.indexOf(key) >= 0 ? '✓' : (mi + 1) + '.' + (li + 1)), l.title));
          })));
      }));
    }
    function open(mi, li) {
      QuireUI.fill(panel, h('div', { class: 'study-progress', testid: 'lesson-loading' }, h('div', { class: 'progress indeterminate' }, h('div', { class: 'progress-fill' })),
        h('span', { class: 'muted small' }, set.lessons[mi + '.' + li] ? 'Opening…' : 'Writing this lesson from your passages…')));
      q.openLesson(set.id, mi, li, { onProgress: function () {} }).then(function (res) {
        var L = res.lesson;
        var doneBtn = h('button', { type: 'button', class: res.done ? '' : 'primary', testid: 'lesson-done', onclick: function () {
          q.lessonDone(set.id, mi, li, !res.done).then(function (s) { res.done = !res.done; paint(s); doneBtn.textContent = res.done ? 'Mark as not done' : 'Mark lesson done'; doneBtn.className = res.done ? '' : 'primary'; });
        } }, res.done ? 'Mark as not done' : 'Mark lesson done');
        QuireUI.fill(panel,
          h('p', { class: 'muted small' }, res.module),
          h('h3', { testid: 'lesson-title' }, L.title),
          L.made_without_ai ? h('span', { class: 'badge no-ai' }, 'made without an AI model: the passages themselves') : null,
          L.introduction ? h('p', { class: 'lede' }, L.introduction) : null,
          L.sections.map(function (sec) {
            return h('section', { class: 'ws-section' }, h('h4', null, sec.heading),
              h('div', { class: 'md' }, QuireMarkdown.render(sec.body, {})), sourceLink(sec.chunk_ids));
          }),
          L.key_points.length ? h('div', { class: 'key-points' }, h('h4', null, 'Key points'), h('ul', null, L.key_points.map(function (p) { return h('li', null, p); }))) : null,
          L.exercises.length ? h('div', { class: 'exercises' }, h('h4', null, 'Check yourself'), L.exercises.map(function (ex) {
            return h('details', null, h('summary', null, ex.prompt), h('p', null, ex.answer || 'Answer from the passages above.'));
          })) : null,
          h('div', { class: 'add-row' }, doneBtn));
        return q.openSet(set.id).then(paint);
      }, function (err) { QuireUI.fill(panel, h('p', { class: 'error', role: 'alert' }, err.message)); });
    }
    paint(set);
  }

  /* ---- mind map ---- */
  function mindmapPlayer(body, set) {
    var side = h('aside', { class: 'mm-side', testid: 'mm-sources' }, h('p', { class: 'muted small' }, 'Click a topic to see the passages it comes from. Click a number to open a branch; drag to pan; scroll to zoom.'));
    var canvas = h('div', { class: 'mm-canvas' });
    var bar = h('div', { class: 'mm-toolbar' },
      h('button', { type: 'button', class: 'small-button', testid: 'mm-zoom-in', 'aria-label': 'Zoom in', onclick: function () { ui.mindmap.zoomIn(); } }, '+'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-zoom-out', 'aria-label': 'Zoom out', onclick: function () { ui.mindmap.zoomOut(); } }, '−'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-fit', onclick: function () { ui.mindmap.fit(); } }, 'Fit'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-expand-all', onclick: function () { ui.mindmap.expandAll(); } }, 'Expand all'),
      h('button', { type: 'button', class: 'small-button', testid: 'mm-collapse-all', onclick: function () { ui.mindmap.collapseAll(); } }, 'Collapse all'));
    body.append(bar, h('div', { class: 'mm-wrap' }, canvas, side));
    ui.mindmap = QuireMindmap.create(canvas, set.map, { onSelect: function (node) { showSources(side, node); } });
  }

  function showSources(side, node) {
    var list = h('ul', { class: 'mm-passages' });
    QuireUI.fill(side, h('h4', { testid: 'mm-selected' }, node.label),
      node.chunk_ids.length ? h('p', { class: 'muted small' }, QuireUI.plural(node.chunk_ids.length, 'passage')) :
        h('p', { class: 'muted small' }, 'No passage is linked to this topic.'), list);
    node.chunk_ids.slice(0, 6).forEach(function (cid) {
      var li = h('li', { testid: 'mm-passage' }, h('span', { class: 'muted small' }, 'Loading…'));
      list.appendChild(li);
      q._call('passage', [cid, node.label]).then(function (p) {
        var text = p.chunk.text.replace(/^\[[^\]]*\]\s*/, '');
        QuireUI.fill(li, h('button', { type: 'button', class: 'link', testid: 'mm-open-passage', onclick: function () { QuirePassage.open(cid, node.label); } },
          p.source.name + (p.location_label ? ' · ' + p.location_label : '')),
        h('p', { class: 'small' }, text.slice(0, 180) + (text.length > 180 ? '…' : '')));
      }, function (err) { QuireUI.fill(li, h('span', { class: 'muted small' }, err.message)); });
    });
  }

  /* ------------------------------------------------------------ prompt templates */
  function templateEditor() {
    var select = h('select', { testid: 'prompt-select', 'aria-label': 'Template', onchange: function () { load(select.value); } });
    var text = h('textarea', { testid: 'prompt-text', rows: '16', spellcheck: 'false', class: 'prompt-text' });
    var vars = h('p', { class: 'small muted', testid: 'prompt-vars' });
    var state = h('span', { class: 'badge', testid: 'prompt-status' });
    var error = h('p', { class: 'error', role: 'alert', testid: 'prompt-error', hidden: true });
    var box = h('details', { class: 'card prompt-editor', testid: 'prompt-editor', ontoggle: function () { if (box.open && !select.options.length) list(); } },
      h('summary', null, h('strong', null, 'Prompt templates'), h('span', { class: 'muted small' }, ' — how Quire asks the model for each tool')),
      h('div', { class: 'study-row' }, select, state),
      vars, text, error,
      h('div', { class: 'add-row' },
        h('button', { type: 'button', class: 'primary', testid: 'prompt-save', onclick: save }, 'Save my version'),
        h('button', { type: 'button', testid: 'prompt-reset', onclick: reset }, 'Reset to default'),
        h('span', { class: 'muted small' }, 'Saved versions stay in this browser and apply from the next generation.')));
    function list() {
      return q.promptTemplates().then(function (ts) {
        QuireUI.fill(select, ts.map(function (t) { return h('option', { value: t.name }, t.name.replace('_', ' ') + (t.overridden ? ' (yours)' : '')); }));
        return load(select.value);
      });
    }
    function paint(t) {
      text.value = t.text;
      state.textContent = t.overridden ? 'Your version' : 'Default';
      state.className = 'badge' + (t.overridden ? ' custom' : '');
      QuireUI.fill(vars, 'Variables: ', t.variables.map(function (v) { return h('code', null, '$' + v); }), ' — each must appear, and no others.');
      error.hidden = true;
    }
    function load(name) { return q.promptTemplate(name).then(paint); }
    function save() {
      q.savePromptOverride(select.value, text.value).then(function (t) { paint(t); QuireUI.toast('Template saved: the next ' + t.name.replace('_', ' ') + ' uses it.'); list(); },
        function (err) { error.textContent = err.message; error.hidden = false; });
    }
    function reset() {
      q.resetPromptOverride(select.value).then(function (t) { paint(t); QuireUI.toast('Back to the default template.'); list(); },
        function (err) { error.textContent = err.message; error.hidden = false; });
    }
    return box;
  }

  QuireUI.register('study', { init: init, show: refresh });
})();
