/* Library view: add sources (drop, pick, paste, URL), review what is staged, Train, remove. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var root, list, trainBtn, trainBox, summary, categoryInput, datalist, welcomeBox, stageNote, tools;
  var training = null;

  /** Whether this copy transcribes German recordings too (the multilingual voice model is in the build). */
  function german() { return !!(self.QuireVoice && QuireVoice.multilingual && QuireVoice.multilingual()); }

  function init(el) {
    root = el;
    categoryInput = h('input', { type: 'text', testid: 'category-input', list: 'quire-categories', placeholder: t('e.g. Biology, Exam 2'), 'aria-label': t('Category for new sources') });
    datalist = h('datalist', { id: 'quire-categories' });
    var fileInput = h('input', { type: 'file', multiple: true, testid: 'file-input', class: 'visually-hidden', 'aria-label': t('Choose files…'), tabindex: '-1', onchange: function () { add(fileInput.files); fileInput.value = ''; } });
    var folderInput = h('input', { type: 'file', multiple: true, webkitdirectory: true, testid: 'folder-input', class: 'visually-hidden', 'aria-label': t('Choose a folder…'), tabindex: '-1', onchange: function () { add(folderInput.files); folderInput.value = ''; } });
    var drop = h('div', { class: 'dropzone', testid: 'dropzone', tabindex: '0', role: 'button',
      onclick: function () { fileInput.click(); }, onkeydown: function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); fileInput.click(); } } },
      h('strong', null, t('Drop documents or folders here')),
      h('span', null, t('PDF, Word, PowerPoint, Excel, CSV, Markdown, HTML, EPUB, text')),
      h('span', { class: 'muted small', testid: 'dropzone-recordings' }, german()
        ? t('Recorded lectures (MP3, M4A, Ogg/Opus, WAV, WebM, MP4): English or German speech')
        : t('Recorded lectures (MP3, M4A, Ogg/Opus, WAV, WebM, MP4): English speech only')));
    ['dragenter', 'dragover'].forEach(function (t) { drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add('over'); }); });
    ['dragleave', 'drop'].forEach(function (t) { drop.addEventListener(t, function () { drop.classList.remove('over'); }); });
    drop.addEventListener('drop', function (e) { e.preventDefault(); QuireLibraryIO.filesFromDrop(e.dataTransfer).then(add); });

    var pasteName = h('input', { type: 'text', testid: 'paste-name', placeholder: t('Title'), 'aria-label': t('Title of the pasted text') });
    var pasteText = h('textarea', { testid: 'paste-text', rows: '5', placeholder: t('Paste notes here…'), 'aria-label': t('Text to add') });
    var urlInput = h('input', { type: 'url', testid: 'url-input', placeholder: 'https://…', 'aria-label': t('Web address to add') });

    trainBtn = h('button', { type: 'button', class: 'primary', testid: 'train-button', hidden: true, onclick: train });
    summary = h('span', { class: 'muted', testid: 'library-summary' });
    trainBox = h('div', { class: 'train-box', testid: 'train-progress', hidden: true });
    list = h('div', { testid: 'source-list', class: 'source-list' });
    welcomeBox = h('div', { class: 'welcome-box' });
    stageNote = h('p', { class: 'muted stage-progress', role: 'status', testid: 'stage-progress', hidden: true });
    embedNote = h('p', { class: 'muted embed-progress', role: 'status', testid: 'library-embedding', hidden: true });
    tableTools();

    root.append(
      h('div', { class: 'view-head' }, h('h2', null, t('Library')), summary, h('span', { class: 'spacer' }), trainBtn),
      welcomeBox,
      h('div', { class: 'card add-card' },
        drop,
        h('div', { class: 'add-row' },
          h('button', { type: 'button', onclick: function () { fileInput.click(); } }, t('Choose files…')),
          h('button', { type: 'button', onclick: function () { folderInput.click(); } }, t('Choose a folder…')),
          h('label', { class: 'inline' }, t('Category') + ' ', categoryInput), datalist, fileInput, folderInput),
        h('details', { class: 'more-ways' }, h('summary', null, t('Paste text or add a web address')),
          h('div', { class: 'paste' }, pasteName, pasteText,
            h('button', { type: 'button', testid: 'paste-add', onclick: function () {
              if (!pasteText.value.trim()) { QuireUI.toast(t('Paste some text first.'), 'error'); return; }
              add([{ name: pasteName.value.trim() || t('Pasted text'), text: pasteText.value }]);
              pasteText.value = ''; pasteName.value = '';
            } }, t('Add text'))),
          h('div', { class: 'url' }, urlInput, h('button', { type: 'button', testid: 'url-add', onclick: function () {
            if (urlInput.value.trim()) add([urlInput.value.trim()]);
          } }, t('Add page')))),
        stageNote),
      trainBox,
      embedNote,
      tools,
      list,
      h('div', { class: 'danger-zone' }, h('button', { type: 'button', class: 'danger', testid: 'erase-all', onclick: QuireLibraryIO.confirmErase }, t('Erase all knowledge…'))));
    // Hidden, the view does not rebuild after every change: show() does it when it is opened.
    var ifShown = function () { if (QuireUI.shown(root)) refresh(); };
    document.addEventListener('quire:library-changed', ifShown);
    document.addEventListener('quire:sample-changed', ifShown);
    document.addEventListener('quire:ready', ifShown);
    document.addEventListener('quire:erased', function () { if (!training) { QuireUI.clear(trainBox); trainBox.hidden = true; } });
    document.addEventListener('quire:embedding', embedding);
  }

  /* After Train the tab embeds the new passages for meaning-based search (api.js): where Train was
   * pressed, one line says how far it is, with Cancel; a failure says why. */
  var embedNote;
  function embedding(e) {
    var d = e.detail;
    if (d.state === 'running') {
      var text = t('Adding meaning vectors in this browser: {done} of {total}', { done: d.done, total: QuireUI.plural(d.total, 'passage') }) +
        (d.eta_s ? ', ' + t('about {s} s left', { s: d.eta_s }) : '') + '. ';
      if (!embedNote.firstChild || embedNote.hidden) {
        QuireUI.fill(embedNote, h('span', { testid: 'library-embedding-text' }), ' ',
          h('button', { type: 'button', class: 'link', testid: 'library-embedding-cancel', onclick: q.stopEmbedding }, t('Cancel')));
      }
      embedNote.firstChild.textContent = text;
      embedNote.hidden = false;
    } else if (d.state === 'failed') {
      QuireUI.fill(embedNote, h('span', { testid: 'library-embedding-text' }, QuireI18n.engine(d.error)));
      embedNote.hidden = false;
    } else {
      embedNote.hidden = true;
    }
  }

  function add(items) {
    items = Array.prototype.slice.call(items || []);
    if (!items.length) return Promise.resolve([]);
    var note = QuireUI.toast(t('Adding {items}…', { items: QuireUI.plural(items.length, 'item') }));
    // A folder of thousands of notes takes a while: the card says how far it is.
    function progress(p) {
      stageNote.hidden = p.done >= p.total;
      stageNote.textContent = t('Adding {done} of {total}…', { done: QuireI18n.number(p.done), total: QuireI18n.number(p.total) });
    }
    var done = function () { note.remove(); stageNote.hidden = true; };
    return q.stage(items, { category: categoryInput.value.trim() || null, onProgress: progress }).then(function (records) {
      done();
      var failed = records.filter(function (r) { return r.status === 'failed'; });
      var again = records.filter(function (r) { return r.note; });
      var msg = t('{n} staged. Press Train to add them to what Quire knows.', { n: records.length - failed.length });
      if (again.length) msg += ' ' + t('{n} already staged.', { n: again.length });
      QuireUI.toast(msg);
      failed.forEach(function (r) { QuireUI.toast(r.name + ': ' + QuireI18n.engine(r.error), 'error'); });
      return records;
    }, function (err) { done(); QuireUI.toast(err.message, 'error'); });
  }

  function refresh() {
    return Promise.all([q.sources(), q.categories()]).then(function (res) { render(res[0], res[1]); });
  }

  var LANG = { en: t('English'), de: t('German'), other: t('Other') };
  var KIND = { pdf: 'PDF', docx: 'Word', pptx: 'PowerPoint', xlsx: 'Excel', csv: 'CSV', markdown: 'Markdown', html: 'HTML', epub: 'EPUB', text: t('Text'), image: t('Image'), audio: t('Recording') };

  var ROW_BATCH = 150, renderToken = 0;

  function sourceRow(s, COLS) {
    var savedCat = s.category || '';
    function saveCat() {  // on change, and on blur (a value put back after a refresh fires no change)
      if (cat.value === savedCat || cat.dataset.replaced) return;  // a row being rebuilt hands its text on
      savedCat = cat.value;
      q.setCategory(s.id, cat.value).then(refresh, function (e) { QuireUI.toast(e.message, 'error'); });
    }
    var cat = h('input', { type: 'text', value: s.category || '', list: 'quire-categories', 'aria-label': t('Category of {name}', { name: s.name }), class: 'cat', disabled: s.status === 'failed',
      onchange: saveCat, onblur: saveCat });
    var lang = h('select', { class: 'lang', testid: 'source-language', 'aria-label': t('Language of {name}', { name: s.name }), disabled: s.status !== 'trained',
      onchange: function () { q.setLanguage(s.id, lang.value).then(function () { QuireUI.toast(t('{name} is now read as {language}.', { name: s.name, language: LANG[lang.value] })); refresh(); }, function (e) { QuireUI.toast(e.message, 'error'); }); } },
      Object.keys(LANG).map(function (k) { return h('option', { value: k }, LANG[k]); }));
    lang.value = s.language || 'other';
    var error = QuireI18n.engine(s.error);
    var status = s.status === 'failed' ? h('span', { class: 'status failed', title: error }, t('failed: {error}', { error: error }))
      : h('span', { class: 'status ' + s.status }, (STATUS[s.status] || s.status) + ocrNote(s));
    return h('tr', { testid: 'source-row', dataset: { id: s.id, status: s.status, name: s.name } },
      h('td', { class: 'name', 'data-label': COLS[0] },
        // Focusable so a keyboard shows the whole name; to assistive technology a read-only field
        // with the name (a focusable element needs a role: axe's focus-order-semantics).
        h('span', { class: 'name-text', title: s.name, tabindex: '0', role: 'textbox', 'aria-readonly': 'true', 'aria-label': COLS[0], testid: 'source-name' }, s.name),
        s.warnings && s.warnings.length ? h('div', { class: 'muted small' }, s.warnings.map(QuireI18n.engine).join(' · ')) : null),
      h('td', { class: 'kind', 'data-label': COLS[1] }, (KIND[s.kind] || s.kind || '—') + ' · ', h('span', { class: 'nowrap', testid: 'source-size' }, QuireUI.bytes(s.size))),
      h('td', { testid: 'source-parts', 'data-label': COLS[2] }, s.status === 'trained' ? units(s) : '—'),
      h('td', { class: 'num', testid: 'source-chunks', 'data-label': COLS[3] }, s.status === 'trained' ? QuireI18n.number(s.chunks) : '—'),
      h('td', { 'data-label': COLS[4] }, cat),
      h('td', { 'data-label': COLS[5] }, lang),
      h('td', { testid: 'source-status', 'data-label': COLS[6] }, status),
      h('td', { class: 'muted date', 'data-label': COLS[7], title: QuireUI.date(s.added), testid: 'source-added' }, QuireUI.shortDate(s.added)),
      h('td', { class: 'row-actions' },
        s.kind === 'pdf' && s.status === 'trained' && q.ocrAvailable() ? h('button', { type: 'button', class: 'icon', testid: 'force-ocr', title: t('Read every page with OCR (for a bad text layer)'),
          'aria-label': t('Read every page of {name} with OCR', { name: s.name }), onclick: function () {
            q.setForceOcr(s.id, true).then(function () { QuireUI.toast(t('{name} will be read with OCR on the next Train.', { name: s.name })); }, function (e) { QuireUI.toast(e.message, 'error'); });
          } }, t('OCR')) : null,
        h('button', { type: 'button', class: 'icon', testid: 'remove-source', 'aria-label': t('Remove {name}', { name: s.name }), title: t('Remove'),
        onclick: function () { remove(s); } }, QuireIcons.svg('close'))));
  }

  /* The table of sources. A library of thousands of notes can be filtered and sorted, and past
   * WINDOW_FROM rows only the rows in sight (and OVERSCAN either side) are in the page: 20,000
   * rows built at once froze it for seconds, and every change rebuilt them all. */
  var WINDOW_FROM = 300, OVERSCAN = 15, TOOLS_FROM = 10;
  var table = { all: [], sorted: null, shown: [], sort: 'added', filter: '', rowHeight: 48, measuredAt: null, painted: null, view: null };
  var filterInput, sortSelect, countNote;
  var SORTS = {
    added: function (a, b) { return a.added - b.added || cmp(a._key, b._key); },
    newest: function (a, b) { return b.added - a.added || cmp(a._key, b._key); },
    name: function (a, b) { return cmp(a._key, b._key) || a.added - b.added; },
    category: function (a, b) { return cmp(a._cat, b._cat) || cmp(a._key, b._key); },
    status: function (a, b) { return cmp(a.status, b.status) || cmp(a._key, b._key); }
  };
  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function tableTools() {
    filterInput = h('input', { type: 'search', testid: 'source-filter', placeholder: t('Filter by name, category or status'), 'aria-label': t('Filter sources'),
      oninput: function () { table.filter = filterInput.value; draw(); } });
    sortSelect = h('select', { testid: 'source-sort', 'aria-label': t('Sort sources by'), onchange: function () { table.sort = sortSelect.value; table.sorted = null; draw(); } },
      h('option', { value: 'added' }, t('Added (oldest first)')), h('option', { value: 'newest' }, t('Added (newest first)')),
      h('option', { value: 'name' }, t('Name')), h('option', { value: 'category' }, t('Category')), h('option', { value: 'status' }, t('Status')));
    countNote = h('span', { class: 'muted', testid: 'source-count', role: 'status' });
    tools = h('div', { class: 'add-row table-tools', hidden: true }, filterInput, h('label', { class: 'inline' }, t('Sort') + ' ', sortSelect), countNote);
  }

  function render(sources, categories) {
    QuireUI.clear(datalist);
    categories.forEach(function (c) { datalist.appendChild(h('option', { value: c })); });
    var pending = 0, trained = 0, passages = 0;
    sources.forEach(function (s) {
      if (s.status === 'staged') pending++;
      if (s.status === 'trained') { trained++; passages += s.chunks; }
    });
    trainBtn.hidden = !pending || !!training;
    trainBtn.textContent = t('Train {sources}', { sources: QuireUI.plural(pending, 'staged source') });
    summary.textContent = t('{n} trained', { n: trained }) + ' · ' + QuireUI.plural(passages, 'passage') +
      (pending ? ' · ' + t('{n} waiting for Train', { n: pending }) : '');
    // Sort keys once per list (records are shared and frozen: the keys live beside them).
    table.all = sources.map(function (s) { return { s: s, added: s.added, status: s.status, _key: String(s.name).toLowerCase(), _cat: s.category ? String(s.category).toLowerCase() : '\uffff' }; });  // no category: last
    table.sorted = null;
    tools.hidden = sources.length <= TOOLS_FROM && !table.filter;
    draw();
  }

  function matches(row, words) {
    for (var i = 0; i < words.length; i++) {
      var w = words[i];
      if (row._key.indexOf(w) < 0 && row._cat.indexOf(w) < 0 && row.status.indexOf(w) < 0 && (STATUS[row.status] || '').toLowerCase().indexOf(w) < 0) return false;
    }
    return true;
  }

  function draw() {
    var token = ++renderToken;  // a newer draw stops this one's remaining batches
    // A category being typed survives the rebuild (a Train ending, another row's change).
    var active = document.activeElement, editing = null;
    if (active && active.classList && active.classList.contains('cat') && list.contains(active)) {
      var row = active.closest('[data-testid="source-row"]');
      editing = row && { id: row.dataset.id, value: active.value, start: active.selectionStart, end: active.selectionEnd };
      active.dataset.replaced = '1';  // its removal blurs it: that is not the user's change
    }
    // The engine's order is already by date added (then name): no sort for the usual view.
    if (!table.sorted) table.sorted = table.sort === 'added' ? table.all : table.all.slice().sort(SORTS[table.sort] || SORTS.added);
    var words = table.filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
    table.shown = words.length ? table.sorted.filter(function (r) { return matches(r, words); }) : table.sorted;
    countNote.textContent = words.length ? t('{shown} of {total} shown', { shown: QuireI18n.number(table.shown.length), total: QuireI18n.number(table.all.length) }) : '';
    // A rebuild of the same view (a Train ending, a change in another tab) keeps the place the
    // reader scrolled to; a new sort or filter starts at the top.
    var view = table.sort + '\n' + table.filter, old = list.querySelector('[data-testid="source-scroll"]');
    var scrolled = old && table.view === view ? old.scrollTop : 0;
    table.view = view;
    QuireUI.clear(list);
    table.painted = null;
    if (!table.all.length) {
      QuireUI.fill(welcomeBox, QuireWelcome.welcome());
      list.appendChild(h('p', { class: 'empty', testid: 'library-empty' }, t('Nothing here yet. Add documents above; Quire keeps them in this browser only.')));
      return;
    }
    if (!table.shown.length) {
      list.appendChild(h('p', { class: 'empty', testid: 'filter-empty' }, t('No source matches “{filter}”.', { filter: table.filter.trim() })));
      return;
    }
    // On a phone each row becomes a stacked card; data-label names each cell there (quire.css).
    var COLS = [t('Name'), t('File'), t('Parts'), t('Passages'), t('Category'), t('Language'), t('Status'), t('Added'), t('Actions')];
    var el = h('table', { class: 'sources library-table', testid: 'source-table' },
      h('thead', null, h('tr', null, COLS.map(function (c, i) { return h('th', { scope: 'col', class: i === COLS.length - 1 ? 'visually-hidden-th' : null }, c); }))));
    var body = h('tbody');
    el.appendChild(body);
    var restore = function () {
      var back = editing && body.querySelector('[data-testid="source-row"][data-id="' + CSS.escape(editing.id) + '"] input.cat');
      if (!back) return;
      back.value = editing.value;
      back.focus();
      try { back.setSelectionRange(editing.start, editing.end); } catch (e) { /* not a text field after all */ }
      editing = null;
    };
    if (table.shown.length > WINDOW_FROM) {
      windowed(el, body, COLS, restore, token, scrolled);
      return;
    }
    list.appendChild(el);
    // A thousand rows at once froze the page for seconds: the first ones now, the rest in
    // batches between the page's other work (the list is aria-busy until all are in).
    var rows = table.shown;
    (function more(from) {
      if (token !== renderToken) return;
      var frag = document.createDocumentFragment();
      rows.slice(from, from + ROW_BATCH).forEach(function (r) { frag.appendChild(sourceRow(r.s, COLS)); });
      body.appendChild(frag);
      restore();
      if (from + ROW_BATCH < rows.length) {
        list.setAttribute('aria-busy', 'true');
        setTimeout(function () { more(from + ROW_BATCH); }, 0);
      } else {
        list.removeAttribute('aria-busy');
        showSample(table.all.map(function (r) { return r.s; }), token);
      }
    })(0);
  }

  /* Only the rows in sight: spacer rows above and below keep the scroll bar true to the whole list. */
  function windowed(el, body, COLS, restore, token, scrolled) {
    var scroller = h('div', { class: 'source-scroll', testid: 'source-scroll', tabindex: '0', role: 'region', 'aria-label': t('Sources ({n})', { n: QuireI18n.number(table.shown.length) }) }, el);
    el.setAttribute('aria-rowcount', String(table.shown.length + 1));
    var top = h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: String(COLS.length) }));
    var bottom = h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: String(COLS.length) }));
    list.appendChild(scroller);
    var pending = false, measured = false, built = {};  // row index -> its row, for the rows in the page
    function paint() {
      pending = false;
      if (token !== renderToken) return;
      var rows = table.shown, height = table.rowHeight;
      var first = Math.max(0, Math.floor(scroller.scrollTop / height) - OVERSCAN);
      var last = Math.min(rows.length, first + Math.ceil((scroller.clientHeight || 600) / height) + 2 * OVERSCAN);
      if (table.painted && table.painted[0] === first && table.painted[1] === last) return;
      table.painted = [first, last];
      // Rows still in sight stay where they are (a screen's scroll builds a screen of rows, and
      // a category being typed is not taken out of the page); the others go.
      var keep = {}, i, tr, keptFrom = -1;
      Object.keys(built).forEach(function (k) {
        var n = Number(k);
        if (n >= first && n < last) { keep[n] = built[n]; if (keptFrom < 0 || n < keptFrom) keptFrom = n; } else built[n].remove();
      });
      built = keep;
      if (!top.parentNode) body.append(top, bottom);
      var before = document.createDocumentFragment(), after = document.createDocumentFragment();
      for (i = first; i < last; i++) {
        if (built[i]) continue;
        tr = built[i] = sourceRow(rows[i].s, COLS);
        tr.setAttribute('aria-rowindex', String(i + 2));
        (keptFrom >= 0 && i < keptFrom ? before : after).appendChild(tr);
      }
      body.insertBefore(before, top.nextSibling);
      body.insertBefore(after, bottom);
      top.firstChild.style.height = (first * height) + 'px';
      bottom.firstChild.style.height = ((rows.length - last) * height) + 'px';
      restore();
      // Rows are as tall as they render (a warning line, a phone's cards): measured once for a
      // width of the window (a measure forces a layout of the whole table inside this task: a
      // sort or filter of 20,000 rows went over 50 ms with it), and painted again if the guess was off.
      if (measured) return;
      measured = true;
      if (table.measuredAt === innerWidth) return;
      var drawn = last - first, real = drawn ? (body.offsetHeight - top.offsetHeight - bottom.offsetHeight) / drawn : height;
      if (!drawn || real <= 4) return;  // nothing drawn, or not laid out (the view hidden): a later draw measures
      table.measuredAt = innerWidth;
      if (Math.abs(real - height) > 2) { table.rowHeight = real; table.painted = null; schedule(); }
    }
    function schedule() { if (!pending) { pending = true; requestAnimationFrame(paint); } }
    scroller.addEventListener('scroll', schedule, { passive: true });
    if (scrolled) {  // the spacers give the list its full height first, so the old place exists
      top.firstChild.style.height = '0px';
      bottom.firstChild.style.height = (table.shown.length * table.rowHeight) + 'px';
      if (!top.parentNode) body.append(top, bottom);
      scroller.scrollTop = scrolled;
    }
    paint();
    showSample(table.all.map(function (r) { return r.s; }), token);
  }

  /* While the sample library is in, its card suggests what to try, and its rows say "Sample". */
  function showSample(sources, token) {
    QuireWelcome.sampleCard(sources).then(function (sample) {
      if (token !== renderToken) return;  // a newer render (the sample removed, say) owns the card now
      if (!sample) { QuireUI.clear(welcomeBox); return; }
      QuireUI.fill(welcomeBox, sample.card);
      list.querySelectorAll('[data-testid="source-row"]').forEach(function (row) {
        if (sample.ids.indexOf(row.dataset.id) >= 0 && !row.querySelector('.sample-tag')) {
          row.querySelector('.name').prepend(h('span', { class: 'badge sample-tag', testid: 'sample-tag' }, t('Sample')), ' ');
        }
      });
    }, function () { if (token === renderToken) QuireUI.clear(welcomeBox); });
  }

  function remove(s) {
    var msg = s.status === 'trained' ? t('Remove “{name}” and everything Quire learned from it?', { name: s.name }) : null;
    if (msg && !window.confirm(msg)) return;
    q.remove(s.id).then(function () { QuireUI.toast(t('Removed {name}.', { name: s.name })); }, function (e) { QuireUI.toast(e.message, 'error'); });
  }

  var STATUS = { staged: t('staged'), trained: t('trained'), failed: t('failed') };
  var UNIT = { pages: 'page', slides: 'slide', sheets: 'sheet', chapters: 'chapter', sections: 'section', pieces: 'piece' };
  function units(s) { return s.unit_label ? QuireUI.plural(s.units, UNIT[s.unit_label] || s.unit_label, s.unit_label) : QuireI18n.number(s.units); }

  function ocrNote(s) {
    var read = Object.keys(s.ocr_pages || {});
    var note = '';
    if (read.length) {
      var conf = read.reduce(function (sum, p) { return sum + s.ocr_pages[p]; }, 0) / read.length;
      note += ' · ' + t('{pages} read by OCR ({confidence}% confidence)', { pages: QuireUI.plural(read.length, 'page'), confidence: Math.round(conf) });
    }
    if (s.needs_ocr_pages && s.needs_ocr_pages.length) {
      note += ' · ' + t('{pages} not searchable', { pages: QuireUI.plural(s.needs_ocr_pages.length, 'scanned page') }) + (q.ocrAvailable() ? '' : ': ' + t('OCR is not included in this copy of Quire'));
    }
    if (s.force_ocr && s.status === 'staged') note += ' · ' + t('every page will be read by OCR');
    if (s.kind === 'audio' && s.status === 'staged') note += ' · ' + (german() ? t('English or German speech') : t('English speech only'));
    return note;
  }

  var STAGE_TEXT = { ocr: t('reading scanned pages'), embed: t('adding meaning vectors'), extract: t('reading'), chunk: t('cutting into passages'), chunked: t('done'), failed: t('failed'), skip: t('already known, skipped'), index: t('indexing'), save: t('saving'), done: t('finished'),
    waiting: t('waiting for the change running in this tab'), 'waiting-other-tab': t('training in another tab; this Train starts when it is done') };

  var TRAIN_ROWS = 50;

  function train() {
    if (training) return;
    var controller = new AbortController();
    var rows = {};
    var bar = h('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100' }, h('div', { class: 'progress-fill' }));
    var label = h('p', { class: 'muted', testid: 'train-stage' }, t('Starting…'));
    var files = h('ul', { class: 'train-files' });
    var cancel = h('button', { type: 'button', testid: 'train-cancel', onclick: function () { controller.abort(); } }, t('Cancel'));
    var heading = h('strong', null, t('Training'));
    QuireUI.fill(trainBox, h('div', { class: 'view-head' }, heading, h('span', { class: 'spacer' }), cancel), bar, label, files);
    // Once Train has ended, its panel is a report the student can put away.
    var ended = function (title) {
      heading.textContent = title;
      cancel.replaceWith(h('button', { type: 'button', testid: 'train-close', onclick: function () { QuireUI.clear(trainBox); trainBox.hidden = true; } }, t('Close')));
    };
    // A Train of thousands of notes lists the latest files and every failure, not a row per file.
    function trimFiles() {
      while (files.children.length > TRAIN_ROWS) {
        var old = files.querySelector('li:not(.failed)');
        if (!old) return;
        delete rows[old.dataset.file];
        old.remove();
      }
    }
    trainBox.hidden = false;
    trainBtn.hidden = true;
    training = q.train({ signal: controller.signal, onProgress: function (e) {
      var pct = e.files ? Math.round(100 * ((e.file_index || e.files) - (e.stage === 'chunked' || e.stage === 'skip' || e.stage === 'failed' ? 0 : 0.5)) / e.files) : 0;
      if (e.stage === 'index') pct = 95;
      if (e.stage === 'save') pct = 98;
      if (e.stage === 'done') pct = 100;
      bar.firstChild.style.width = Math.min(pct, 100) + '%';
      bar.setAttribute('aria-valuenow', String(Math.min(pct, 100)));
      if (e.stage === 'ocr') {
        rows[e.file] = rows[e.file] || files.appendChild(h('li'));
        var left = e.eta_s ? ', ' + t('about {s} s left', { s: e.eta_s }) : '';
        rows[e.file].textContent = e.file + ' — ' + t('OCR: page {page} of {pages}', { page: e.done + (e.done < e.pages ? 1 : 0), pages: e.pages }) + left;
        label.textContent = t('File {i} of {n}', { i: e.file_index, n: e.files }) + ': ' + t('reading scanned pages ({done} of {pages} done', { done: e.done, pages: e.pages }) + left + ')';
        label.dataset.testid = 'train-stage';
        return;
      }
      if (e.stage === 'transcribe') {
        rows[e.file] = rows[e.file] || files.appendChild(h('li', { dataset: { file: e.file } }));
        var rest = e.eta_s ? ', ' + t('about {s} s left', { s: e.eta_s }) : '';
        var heard = e.pieces ? t('transcribing: piece {piece} of {pieces}', { piece: e.done + (e.done < e.pieces ? 1 : 0), pieces: e.pieces }) : t('transcribing');
        rows[e.file].textContent = e.file + ' — ' + heard + rest;
        label.textContent = t('File {i} of {n}', { i: e.file_index, n: e.files }) + ': ' + heard + rest;
        return;
      }
      if (e.stage === 'embed') {
        label.textContent = t('Adding meaning vectors with {model}: {done} of {total}', { model: e.model, done: e.done, total: e.total });
        return;
      }
      if (e.file) {
        if (!rows[e.file]) { rows[e.file] = h('li', { dataset: { file: e.file } }); files.appendChild(rows[e.file]); trimFiles(); }
        rows[e.file].textContent = e.file + ' — ' + (STAGE_TEXT[e.stage] || e.stage) +
          (e.units ? ' (' + QuireUI.plural(e.units, 'part') + ')' : '') + (e.chunks ? ' · ' + QuireUI.plural(e.chunks, 'passage') : '') + (e.error ? ': ' + QuireI18n.engine(e.error) : '');
        rows[e.file].className = e.stage === 'failed' ? 'failed' : '';
      }
      label.textContent = e.file ? t('File {i} of {n}', { i: e.file_index, n: e.files }) + ': ' + (STAGE_TEXT[e.stage] || e.stage)
        : (STAGE_TEXT[e.stage] || e.stage) + (e.chunks ? ' ' + QuireUI.plural(e.chunks, 'passage') : '') + '…';
    } }).then(function (c) {
      // The result appears once the list shows what Train did (no staged row left behind).
      training = null;
      var show = function () {
        label.textContent = t('Trained: {added} added, {changed} changed, {skipped} already known', { added: c.added, changed: c.changed, skipped: c.skipped }) +
          (c.failed ? ', ' + t('{n} failed', { n: c.failed }) : '') + '.';
        label.dataset.testid = 'train-result';
        QuireUI.toast(label.textContent);
        // A file that failed for a reason nobody expected carries its traceback: offer it for a report.
        (c.files || []).forEach(function (f) { if (f.detail) QuireUI.toast(f.name + ': ' + QuireI18n.engine(f.error), 'error', f.detail); });
        ended(t('Train finished'));
      };
      return refresh().then(show, show);
    }, function (err) {
      training = null;
      label.textContent = QuireI18n.engine(err.message);
      QuireUI.toast(err.message, err.kind === 'TrainCancelled' ? 'info' : 'error');
      ended(t('Train stopped'));
      return refresh().catch(function (e) { QuireUI.toast(e.message, 'error'); });
    });
  }

  QuireUI.register('library', { init: init, show: function () { if (self.quire.status().stage === 'ready') refresh(); } });
})();
