/* Search view: ranked passages with highlights, an inspector that shows why each came up,
 * and a passage viewer with the whole page around the passage. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var input, scopeSelect, results, note, inspectorToggle, meaning;

  function init(root) {
    input = h('input', { type: 'search', testid: 'search-input', placeholder: t('Search your documents…'), 'aria-label': t('Search query') });
    scopeSelect = h('select', { testid: 'search-scope', 'aria-label': t('Search within') });
    inspectorToggle = h('input', { type: 'checkbox', testid: 'inspector-toggle' });
    results = h('ol', { class: 'results', testid: 'search-results' });
    note = h('p', { class: 'muted', testid: 'search-note' });
    meaning = h('div', { class: 'meaning', testid: 'embedding-status' });
    var form = h('form', { class: 'search-form', onsubmit: function (e) { e.preventDefault(); run(); } },
      input, QuireVoiceButton.attach(input, { testid: 'search-mic' }), scopeSelect, h('button', { type: 'submit', class: 'primary', testid: 'search-button' }, t('Search')));
    root.append(h('div', { class: 'view-head' }, h('h2', null, t('Search'))), meaning, form,
      h('label', { class: 'inline muted' }, inspectorToggle, ' ' + t('Show why each passage came up (inspector)')), note, results);
    inspectorToggle.addEventListener('change', function () { results.classList.toggle('inspect', inspectorToggle.checked); });
    document.addEventListener('quire:library-changed', function () { if (QuireUI.shown(root)) fillScopes(); });
    document.addEventListener('quire:ready', function () { if (QuireUI.shown(root)) fillScopes(); });
    // Hidden, the view asks nothing after a change (an embedding status after every rename or
    // removal held the next call, 0.2-0.3 s at 5,183 sources): show() asks when it is opened.
    var statusIfShown = function () { if (QuireUI.shown(root)) meaningStatus(); };
    document.addEventListener('quire:library-changed', statusIfShown);
    document.addEventListener('quire:llm-status', statusIfShown);
    document.addEventListener('quire:embedding', inTab);
    document.addEventListener('quire:embedder-load', loadingModel);
    document.addEventListener('quire:erased', function () {
      searches++;  // a search still running would refill what was just erased
      results.removeAttribute('aria-busy');
      input.value = '';
      note.textContent = '';
      QuireUI.clear(results);
      document.querySelectorAll('[data-testid="passage-dialog"]').forEach(function (d) { d.remove(); });
    });
  }

  /* Keyword search always works; meaning-based search needs an embedding model: a server's, or
   * this tab's own (multilingual-e5-small), which embeds in the background after Train (api.js). */
  var embedding = null;
  function meaningStatus() {
    if (embedding || q.embeddingProgress()) return;
    q.embeddingStatus().then(function (st) {
      if (!st.model) {
        QuireUI.fill(meaning, h('span', { class: 'muted' }, t('Keyword search only.'),  // a kiosk removes the hint (kiosk.js): it has no Settings
          h('span', { testid: 'embedding-settings-hint' }, ' ', h('a', { href: '#settings' }, t('Choose an embedding model')), ' ' + t('to also search by meaning.'))));
      } else if (!st.missing) {
        QuireUI.fill(meaning, h('span', { class: 'ok' }, st.where === 'tab' ? t('Searching by keywords and by meaning ({model}, in this browser).', { model: st.model })
          : t('Searching by keywords and by meaning ({model}).', { model: st.model })));
      } else {
        QuireUI.fill(meaning, h('span', null, t(st.missing === 1 ? '{missing} of {total} has no meaning vectors from {model}.' : '{missing} of {total} have no meaning vectors from {model}.', { missing: st.missing, total: QuireUI.plural(st.total, 'passage'), model: st.model }) + ' '),
          h('button', { type: 'button', testid: 'embed-button', onclick: st.where === 'tab' ? q.embedInBackground : embedNow }, st.index_model && st.index_model !== st.model ? t('Re-embed with {model}', { model: st.model }) : t('Add meaning-based search')));
      }
    }, function () {});
  }

  /* The background embedding in this tab: progress with time left, and Cancel. */
  var tabBar = null;
  function inTab(e) {
    var d = e.detail;
    if (d.state !== 'running') {
      tabBar = null;
      if (d.state === 'done' && d.embedded) QuireUI.toast(t('Meaning-based search is ready: {embedded} embedded, {cached} from the cache.', { embedded: QuireUI.plural(d.embedded, 'passage'), cached: d.cached }));
      if (d.state === 'failed') QuireUI.toast(d.error, 'error');
      meaningStatus();
      return;
    }
    if (!tabBar) {
      tabBar = { bar: h('div', { class: 'progress', role: 'progressbar', testid: 'embed-progress' }, h('div', { class: 'progress-fill' })),
        label: h('span', { class: 'muted', testid: 'embed-stage' }) };
      QuireUI.fill(meaning, tabBar.label, tabBar.bar, h('button', { type: 'button', testid: 'embed-cancel', onclick: q.stopEmbedding }, t('Cancel')));
    }
    var pct = d.total ? Math.round(100 * d.done / d.total) : 0;
    tabBar.bar.firstChild.style.width = pct + '%';
    tabBar.bar.setAttribute('aria-valuenow', String(pct));
    tabBar.label.textContent = t('Adding meaning vectors in this browser: {done} of {total}', { done: d.done, total: QuireUI.plural(d.total, 'passage') }) +
      (d.eta_s ? ', ' + t('about {s} s left', { s: d.eta_s }) : '') + '. ' + t('Meanwhile, passages without vectors are found by keywords only.');
  }
  function loadingModel(e) {
    // The search answered by keywords while the model loaded is asked again, by meaning too.
    if (e.detail.done && reloadFor && reloadFor === input.value.trim()) { reloadFor = null; run(); }
    if (!tabBar || e.detail.done) return;
    tabBar.label.textContent = t('Loading the embedding model ({pct} %)…', { pct: Math.round(100 * (e.detail.fraction || 0)) });
  }

  function embedNow() {
    if (q.embeddingProgress()) return;
    var controller = new AbortController();
    var bar = h('div', { class: 'progress', role: 'progressbar', testid: 'embed-progress' }, h('div', { class: 'progress-fill' }));
    var label = h('span', { class: 'muted' }, t('Embedding…'));
    QuireUI.fill(meaning, label, bar, h('button', { type: 'button', testid: 'embed-cancel', onclick: function () { controller.abort(); } }, t('Cancel')));
    embedding = q.embed({ signal: controller.signal, onProgress: function (e) {
      var pct = e.total ? Math.round(100 * e.done / e.total) : 100;
      bar.firstChild.style.width = pct + '%';
      bar.setAttribute('aria-valuenow', String(pct));
      label.textContent = t('Embedding with {model}: {done} of {total}', { model: e.model, done: e.done, total: QuireUI.plural(e.total, 'passage') });
    } }).then(function (r) { QuireUI.toast(t('Meaning-based search is ready: {embedded} embedded, {cached} from the cache.', { embedded: QuireUI.plural(r.embedded, 'passage'), cached: r.cached })); },
      function (err) { QuireUI.toast(err.message, err.kind === 'TrainCancelled' ? 'info' : 'error'); })
      .then(function () { embedding = null; meaningStatus(); });
  }

  /* Scope options: everything, each category, each trained source. */
  function fillScopes() {
    return Promise.all([q.sources(), q.categories()]).then(function (res) {
      var current = scopeSelect.value;
      QuireUI.clear(scopeSelect).appendChild(h('option', { value: '' }, t('All sources')));
      if (res[1].length) {
        var g = h('optgroup', { label: t('Category') });
        res[1].forEach(function (c) { g.appendChild(h('option', { value: 'cat:' + c }, c)); });
        scopeSelect.appendChild(g);
      }
      var trained = res[0].filter(function (s) { return s.status === 'trained'; });
      if (trained.length) {
        var gs = h('optgroup', { label: t('One source') });
        trained.forEach(function (s) { gs.appendChild(h('option', { value: 'src:' + s.id }, s.name)); });
        scopeSelect.appendChild(gs);
      }
      scopeSelect.value = current;
      if (scopeSelect.selectedIndex < 0) scopeSelect.value = '';
    });
  }

  function scopeValue() {
    var v = scopeSelect.value;
    if (v.indexOf('cat:') === 0) return { category: v.slice(4) };
    if (v.indexOf('src:') === 0) return { sources: [v.slice(4)] };
    return null;
  }

  var searches = 0;  // only the newest search's answer is shown (an older one can arrive later)
  var reloadFor = null;  // the query answered by keywords only while this tab's model loaded
  function run() {
    var query = input.value.trim();
    if (!query) return;
    var mine = ++searches;
    var t0 = performance.now();
    note.textContent = t('Searching…');
    results.setAttribute('aria-busy', 'true');  // screen readers wait; tests too
    q.search(query, { k: 10, scope: scopeValue() }).then(function (hits) {
      if (mine !== searches) return;
      results.removeAttribute('aria-busy');
      var ms = Math.round(performance.now() - t0);
      var weak = hits.length && !hits.some(function (x) { return x.relevance != null && x.relevance >= WEAK; });
      var loading = hits.some(function (x) { return x.dense_status === 'loading'; }) || (!hits.length && q.embedderLoading());
      var dense = !loading && hits.some(function (x) { return x.dense_status && x.dense_status !== 'off'; });
      reloadFor = loading ? query : null;  // asked again once the model is in (loadingModel)
      note.textContent = hits.length ? t('{passages} in {ms} ms · keyword search (BM25)', { passages: QuireUI.plural(hits.length, 'passage'), ms: ms }) +
          (loading ? '; ' + t('the embedding model is still loading in this browser: these results will be updated with meaning-based search in a moment')
            : dense ? ' + ' + t('meaning (embeddings)') : '; ' + t('add an embedding model in Settings for meaning-based search too'))
          + (weak ? '. ' + t('No passage matches these words well; the closest ones are below.') : '')
        : t(scopeSelect.value ? 'No passage matches “{query}” in this scope.' : 'No passage matches “{query}”.', { query: query }) +
          (loading ? ' ' + t('The embedding model is still loading in this browser: the search by meaning follows in a moment.') : '');
      render(hits, query);
    }, function (err) {
      if (mine !== searches) return;
      results.removeAttribute('aria-busy');
      note.textContent = QuireI18n.engine(err.message);
    });
  }

  function marked(text, spans) {
    var frag = document.createDocumentFragment();
    var at = 0;
    (spans || []).forEach(function (s) {
      if (s[0] < at) return;
      frag.appendChild(document.createTextNode(text.slice(at, s[0])));
      frag.appendChild(h('mark', null, text.slice(s[0], s[1])));
      at = s[1];
    });
    frag.appendChild(document.createTextNode(text.slice(at)));
    return frag;
  }

  function fmt(x, digits) { return x == null ? '—' : Number(x).toFixed(digits); }

  /* Mirrors quire.retrieval.relevance.WEAK: below this share of the query's words a match is weak. */
  var WEAK = 0.35;

  /* Relevance = how much of the query's weight (rare words count more) the passage contains;
   * the same scale for every query, unlike the fused score, which only orders. */
  function relevanceText(hit) {
    return hit.relevance == null ? t('relevance —') : t('matches {percent}% of the query', { percent: Math.round(hit.relevance * 100) });
  }

  /* Why the dense side did or did not rank this passage (quire.retrieval.index sets dense_status). */
  function denseText(hit) {
    switch (hit.dense_status) {
      case 'ranked': return '#' + hit.dense_rank + ' · ' + t('cosine') + ' ' + fmt(hit.dense_score, 3);
      case 'below-floor': return t('cosine {cosine}, below this query’s cut-off {floor}', { cosine: fmt(hit.dense_score, 3), floor: fmt(hit.dense_floor, 3) });
      case 'beyond-top': return t('cosine {cosine}, not in the dense top candidates', { cosine: fmt(hit.dense_score, 3) });
      case 'no-vector': return t('this passage has no embedding yet');
      default: return t('off: no embeddings for this library');
    }
  }

  function render(hits, query) {
    QuireUI.clear(results);
    hits.forEach(function (hit) {
      results.appendChild(h('li', { testid: 'search-hit', dataset: { chunk: hit.chunk_id } },
        h('div', { class: 'hit-head' },
          h('a', { href: '#search', testid: 'open-passage', onclick: function (e) { e.preventDefault(); openPassage(hit.chunk_id, query, hit); } },
            hit.source + (hit.location_label ? ' · ' + hit.location_label : '')),
          h('span', { class: 'muted small', testid: 'hit-relevance' }, relevanceText(hit))),
        h('p', { class: 'hit-text' }, marked(hit.text, hit.highlights)),
        h('dl', { class: 'inspector', testid: 'inspector' },
          h('dt', null, 'BM25'), h('dd', { testid: 'bm25' }, hit.bm25_rank ? '#' + hit.bm25_rank + ' · ' + fmt(hit.bm25_score, 3) : t('not in top candidates')),
          h('dt', null, t('Dense')), h('dd', { testid: 'dense' }, denseText(hit)),
          h('dt', null, t('Fused')), h('dd', { testid: 'fused' }, fmt(hit.score, 4) + ' (' + t('orders only') + ')'))));
    });
  }

  /* The passage in context: the whole page (slide, section) with the passage marked.  The dialog
   * opens at once, showing what the caller already has (a search hit's own text) and saying that
   * the whole page is loading (a status line; the text is aria-busy): the engine answers only once
   * it is free, and while it loads scikit-learn in the background that took seconds.
   * preview: {source, location_label, text, highlights} or nothing. */
  var passages = 0;
  function openPassage(chunkId, query, preview) {
    var mine = ++passages;
    document.querySelectorAll('[data-testid="passage-dialog"]').forEach(function (d) { d.close(); d.remove(); });
    var title = h('h3', { id: 'passage-title-' + mine, testid: 'passage-title' }, preview ? placeOf(preview) : t('Passage'));
    var status = h('div', { class: 'passage-status', role: 'status', testid: 'passage-status' },
      h('span', { class: 'muted small' }, t('Loading the whole page…')),
      h('div', { class: 'progress indeterminate', 'aria-hidden': 'true' }, h('div', { class: 'progress-fill' })));
    var body = h('div', { class: 'passage-context', testid: 'passage-context', tabindex: '0', role: 'region', 'aria-labelledby': title.id, 'aria-busy': 'true' },
      preview && preview.text ? h('mark', { class: 'passage', testid: 'passage-mark' }, preview.text.replace(/^\[[^\]]*\]\s*/, '')) : null);
    var dialog = h('dialog', { class: 'passage-dialog', testid: 'passage-dialog', 'aria-labelledby': title.id },
      h('div', { class: 'view-head' }, title,
        h('span', { class: 'spacer' }), h('button', { type: 'button', testid: 'passage-close', onclick: function () { dialog.close(); dialog.remove(); } }, t('Close'))),
      status, body);
    dialog.addEventListener('close', function () { dialog.remove(); });  // Esc closes it too
    document.body.appendChild(dialog);
    dialog.showModal();
    return q._call('passage', [chunkId, query || '']).then(function (p) {
      if (mine !== passages || !dialog.isConnected) return;  // closed, or another passage opened meanwhile
      var before = p.context.slice(0, p.span[0]);
      var inside = p.context.slice(p.span[0], p.span[1]);
      var after = p.context.slice(p.span[1]);
      title.textContent = placeOf({ source: p.source.name, location_label: p.location_label });
      QuireUI.fill(body, before, h('mark', { class: 'passage', testid: 'passage-mark' }, inside), after);
      status.remove();
      if (p.chunk.location && p.chunk.location.time) body.before(player(p, dialog));
      body.removeAttribute('aria-busy');
      var m = body.querySelector('mark');
      if (m && m.scrollIntoView) m.scrollIntoView({ block: 'center' });
    }, function (err) {
      if (mine !== passages || !dialog.isConnected) return;
      dialog.close();  // the error's toast (with its details to copy) must not sit behind a modal dialog
      QuireUI.toast(err.message, 'error');
    });
  }

  /* A transcript passage (issue 28): a button that plays the recording from the passage's
   * moment.  The recording is fetched from the engine only when asked (a lecture is tens of MB),
   * and its blob: URL goes with the dialog. */
  function player(p, dialog) {
    var at = p.chunk.location.time[0];
    var box = h('div', { class: 'passage-play', testid: 'passage-play' });
    var button = h('button', { type: 'button', testid: 'play-recording', onclick: function () {
      button.disabled = true;
      button.textContent = t('Loading the recording…');
      q.recording(p.source.id).then(function (file) {
        if (!dialog.isConnected) return;
        if (!file) {
          QuireUI.fill(box, h('p', { class: 'muted', testid: 'recording-not-kept' },
            t('This browser did not keep the recording, so it cannot be played here. Settings → “Keep original files in this browser” keeps the next ones.')));
          return;
        }
        var url = URL.createObjectURL(file);
        dialog.addEventListener('close', function () { URL.revokeObjectURL(url); });
        var media = h(/^video\//.test(file.type) ? 'video' : 'audio', { controls: true, preload: 'auto', testid: 'recording',
          'aria-label': t('{name} from {time}', { name: file.name, time: clockOf(p) }) });
        media.addEventListener('loadedmetadata', function () {
          media.currentTime = at;
          var playing = media.play();  // the click that asked is the gesture that lets it play
          if (playing && playing.catch) playing.catch(function () { /* the controls are there to press */ });
        }, { once: true });
        media.addEventListener('error', function () {
          QuireUI.fill(box, h('p', { class: 'muted', testid: 'recording-error' },
            t('This browser cannot play {name}; its transcript is below.', { name: file.name })));
        }, { once: true });
        media.src = url;
        QuireUI.fill(box, media);
      }, function (err) {
        button.disabled = false;
        button.textContent = t('Play the recording from {time}', { time: clockOf(p) });
        QuireUI.toast(err.message, 'error');
      });
    } }, t('Play the recording from {time}', { time: clockOf(p) }));
    box.appendChild(button);
    return box;
  }
  function clockOf(p) { return String(p.location_label || '').split('–')[0]; }

  function placeOf(p) { return p.source + (p.location_label ? ' · ' + p.location_label : ''); }

  /* A chunk id, '<source id>:<n>', read as the engine reads it (quire.model.parse_chunk_id): cut at
   * the LAST colon; n is null when the id does not end in ':<digits>'.  The page's one parser of
   * chunk ids.  parseId('3f9a0c:12') -> {source_id: '3f9a0c', n: 12}; parseId('notes') -> {source_id: 'notes', n: null} */
  function parseId(chunkId) {
    var id = String(chunkId), at = id.lastIndexOf(':');
    if (at < 0) return { source_id: id, n: null };
    var tail = id.slice(at + 1);
    return { source_id: id.slice(0, at), n: /^[0-9]+$/.test(tail) ? parseInt(tail, 10) : null };
  }

  self.QuirePassage = { open: openPassage, parseId: parseId };
  QuireUI.register('search', { init: init, show: function () { if (q.status().stage === 'ready') { fillScopes(); meaningStatus(); } input && input.focus(); } });
})();
