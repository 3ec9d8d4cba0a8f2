/* Settings: the model server (status with the exact fix, models, pulling), and library options.
 *
 * Privacy (see csp.js): a server on another computer is used only once the person confirmed
 * it in this tab.  Typing such an address shows who will receive their questions and
 * passages, and Save needs a tick naming the host; a stored one (from a vault, an older
 * session, or another local page) brings up a banner asking before anything is sent. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var q = self.quire;
  var P = self.QuirePrivacy;
  var f = {};
  var statusBox, pullBox, badge, remoteBox, remoteOk, banner;

  function field(label, control, hint) {
    return h('label', { class: 'field' }, h('span', null, label), control, hint ? h('small', { class: 'muted' }, hint) : null);
  }

  function init(root) {
    badge = document.querySelector('[data-testid="llm-badge"]');
    f.kind = h('select', { testid: 'llm-kind' }, h('option', { value: 'ollama' }, 'Ollama'), h('option', { value: 'openai' }, 'OpenAI-compatible (llama.cpp server, LM Studio)'));
    f.url = h('input', { type: 'url', testid: 'llm-url', placeholder: P.DEFAULT_URL, oninput: function () { warnRemote(); } });
    remoteOk = h('input', { type: 'checkbox', testid: 'llm-remote-confirm' });
    remoteBox = h('div', { class: 'fix', testid: 'llm-remote-warning', role: 'alert', hidden: true });
    f.chat = h('select', { testid: 'llm-chat-model' });
    f.embed = h('select', { testid: 'llm-embed-model' });
    f.temperature = h('input', { type: 'number', testid: 'llm-temperature', min: '0', max: '2', step: '0.1' });
    f.ctx = h('input', { type: 'number', testid: 'llm-num-ctx', min: '1024', max: '262144', step: '1024' });
    statusBox = h('div', { class: 'llm-status', testid: 'llm-status', 'aria-live': 'polite' });
    pullBox = h('div', { class: 'pull', testid: 'pull-box', hidden: true });
    var maxMb = h('input', { type: 'number', testid: 'max-file-mb', min: '1', max: '2000', value: localStorage.getItem('quire.maxFileMB') || '50',
      onchange: function () { localStorage.setItem('quire.maxFileMB', String(Math.max(1, Number(maxMb.value) || 50))); } });
    var allowUrl = h('input', { type: 'checkbox', testid: 'allow-url-fetch', checked: P.remembered().urlFetch,
      onchange: function () {
        q.allowUrlFetch(allowUrl.checked);
        QuireUI.toast('Takes effect after a reload of this tab: the privacy lock is set when the page opens.');
      } });

    var keep = h('input', { type: 'checkbox', testid: 'keep-originals', checked: true,
      onchange: function () {
        q.setKeepOriginals(keep.checked).then(function (r) {
          QuireUI.toast(r.keep_originals ? 'Originals will be kept.' : 'Originals are no longer kept; ' + r.removed + ' removed to free space.');
        }, function (e) { QuireUI.toast(e.message, 'error'); });
      } });
    var ocrLang = h('select', { testid: 'ocr-language', onchange: function () {
      q.setOcrLanguage(ocrLang.value).then(function () { QuireUI.toast('Scanned pages will be read as ' + ocrLang.selectedOptions[0].textContent + '.'); },
        function (e) { QuireUI.toast(e.message, 'error'); });
    } }, h('option', { value: 'auto' }, 'The source’s language (English and German when unknown)'), h('option', { value: 'eng' }, 'English'),
      h('option', { value: 'deu' }, 'German'), h('option', { value: 'eng+deu' }, 'English and German'));
    var ocrNote = h('small', { class: 'muted', testid: 'ocr-note' });
    document.addEventListener('quire:ready', function () {
      q.librarySettings().then(function (st) { keep.checked = st.keep_originals; ocrLang.value = st.ocr_language || 'auto'; });
      ocrNote.textContent = q.ocrAvailable() ? 'Scanned pages and images are read during Train, in this tab, with no download.'
        : 'OCR is not included in this copy of Quire (it was built with --no-ocr): scanned pages stay unsearchable.';
      ocrLang.disabled = !q.ocrAvailable();
    });
    root.append(
      h('div', { class: 'view-head' }, h('h2', null, 'Settings')),
      h('div', { class: 'card settings' },
        h('h3', null, 'Model server'),
        h('p', { class: 'muted' }, 'Optional. Without one, Quire still searches, answers with the best passages and builds study material. Nothing is sent anywhere but this server.'),
        statusBox, pullBox,
        h('form', { class: 'grid-form', onsubmit: function (e) { e.preventDefault(); save(); } },
          field('Server', f.kind), field('Address', f.url, 'Ollama listens on http://127.0.0.1:11434 by default.'), remoteBox,
          field('Chat model', f.chat), field('Embedding model', f.embed, 'Adds meaning-based search next to keyword search.'),
          field('Temperature', f.temperature), field('Context size (tokens)', f.ctx),
          h('div', { class: 'add-row' }, h('button', { type: 'submit', class: 'primary', testid: 'llm-save' }, 'Save'),
            h('button', { type: 'button', testid: 'llm-retry', onclick: refresh }, 'Check connection')))),
      h('div', { class: 'card settings' },
        h('h3', null, 'Library'),
        field('Largest file to add (MB)', maxMb),
        h('label', { class: 'inline' }, keep, ' Keep original files in this browser (lets citations show the whole page later)'),
        field('Language of scanned pages (OCR)', ocrLang), ocrNote,
        h('label', { class: 'inline' }, allowUrl, ' Allow adding web pages by address in this tab (the page may then contact the sites you add)')));
    document.addEventListener('quire:llm-status', function (e) { render(e.detail); });
    document.addEventListener('quire:ready', function () { refresh(); });
    showBanner(P.pending);
  }

  /* ---- a server on another computer ---- */

  function hostOf(url) { try { return new URL(url).host; } catch (e) { return url; } }

  /* Under the address: who receives the questions and passages, and the tick Save needs. */
  function warnRemote() {
    var url = f.url.value.trim();
    var origin = P.origin(url);
    var remote = !!origin && !P.isLoopback(url);
    remoteBox.hidden = !remote;
    if (!remote) return;
    if (remoteBox.dataset.origin !== origin) remoteOk.checked = P.remembered().server === origin;
    remoteBox.dataset.origin = origin;
    QuireUI.fill(remoteBox,
      h('p', null, h('strong', null, 'Questions and passages will be sent to ' + hostOf(url) + '.'),
        ' That is not this computer: whoever runs that server can read every question you ask and the passages from your documents that go with it.'),
      h('label', { class: 'inline' }, remoteOk, ' Send my questions and passages to ' + hostOf(url)));
  }

  /* At load (or when the engine reports it): a stored server on another computer, not yet confirmed here. */
  function showBanner(p) {
    if (!banner) {
      banner = h('div', { class: 'update-banner server-banner', testid: 'server-banner', role: 'alert', hidden: true });
      var top = document.querySelector('[data-testid="update-banner"]');
      top.parentNode.insertBefore(banner, top.nextSibling);
    }
    banner.hidden = !p;
    if (!p) return;
    banner.dataset.origin = p.origin;
    QuireUI.fill(banner,
      h('span', { testid: 'server-banner-text' }, 'Quire is set to send your questions and passages to ' + p.origin +
        ', which is not this computer. Nothing has been sent there yet.'),
      h('button', { type: 'button', testid: 'server-use', onclick: function () { q.useServer(p.url).catch(function () { /* the toast said why */ }); } }, 'Use this server'),
      h('button', { type: 'button', testid: 'server-local', onclick: function () {
        q.useLocalServer().then(function () { QuireUI.toast('Quire uses this computer’s server again.'); }, function (e) { QuireUI.toast(e.message, 'error'); });
      } }, 'Switch back to this computer’s server'));
  }

  /** useServer(url): the person confirmed a server on another computer; the page reloads to admit it. */
  q.useServer = function (url) {
    var origin = P.origin(url);
    return q.saveSettings({ url: url }, { confirm: origin }).then(function () {
      location.reload();
    }, function (e) { QuireUI.toast(e.message, 'error'); throw e; });
  };

  /** useLocalServer(): back to Ollama's default address on this computer (allowed without a reload). */
  q.useLocalServer = function () {
    return q.saveSettings({ url: P.DEFAULT_URL }).then(function (s) {
      P.remember({ server: null });  // a later write of the old address into storage must ask again
      showBanner(null);
      return s;
    });
  };

  /** allowUrlFetch(on): adding web pages by address, for this tab, from its next reload. */
  q.allowUrlFetch = function (on) {
    P.remember({ urlFetch: !!on });
    return { allowed: P.urlFetch, afterReload: !!on };
  };

  function options(select, models, want, capability, current) {
    QuireUI.clear(select).appendChild(h('option', { value: '' }, models.length ? '— none —' : '— no models found —'));
    models.filter(function (m) { return !m.capabilities.length || m.capabilities.indexOf(capability) >= 0 || (capability === 'completion' && m.capabilities.indexOf('embedding') < 0); })
      .forEach(function (m) { select.appendChild(h('option', { value: m.name }, m.name + (m.parameter_size ? ' (' + m.parameter_size + ')' : ''))); });
    if (current && !models.some(function (m) { return m.name === current; })) select.appendChild(h('option', { value: current }, current + ' (not installed)'));
    select.value = current || '';
  }

  var LABEL = { connected: 'connected', not_running: 'not running', cors_refused: 'refused by CORS', model_missing: 'model missing',
    unconfirmed: 'waiting for your confirmation' };

  function render(s) {
    var st = s.settings;
    f.kind.value = st.kind; f.url.value = st.url; f.temperature.value = st.temperature; f.ctx.value = st.num_ctx;
    warnRemote();
    if (s.status === 'unconfirmed') showBanner({ url: s.url, origin: s.origin });
    else if (P.isLoopback(st.url) && !P.pending) showBanner(null);
    options(f.chat, s.models || [], st.chat_model, 'completion', st.chat_model);
    options(f.embed, s.models || [], st.embed_model, 'embedding', st.embed_model);
    badge.hidden = false;
    badge.dataset.state = s.status;
    badge.textContent = 'Model: ' + (s.status === 'connected' ? (st.chat_model || 'none chosen') : LABEL[s.status]);
    QuireUI.fill(statusBox,
      h('p', null, h('strong', { class: 'state-' + s.status, testid: 'llm-state', dataset: { state: s.status } },
        s.status === 'connected' ? 'Connected' + (s.version ? ' (version ' + s.version + ')' : '') : LABEL[s.status]), ' — ', s.message),
      s.fix ? h('p', { class: 'fix', testid: 'llm-fix' }, s.fix) : null,
      s.status === 'model_missing' && st.kind === 'ollama' ? h('button', { type: 'button', testid: 'pull-model', onclick: function () { pull(st.chat_model); } }, 'Download ' + st.chat_model) : null,
      s.needsReload ? h('p', { class: 'fix', testid: 'llm-reload' }, 'Saved. Reload the page to connect to the new address: the privacy lock only lets the page reach the server chosen when it opened. ',
        h('button', { type: 'button', onclick: function () { location.reload(); } }, 'Reload now')) : null);
  }

  function refresh() {
    return q.llmStatus().catch(function (e) { QuireUI.toast(e.message, 'error'); });
  }

  function save() {
    var url = f.url.value.trim() || P.DEFAULT_URL;
    var origin = P.origin(url);
    var remote = !!origin && !P.isLoopback(url);
    if (remote && !remoteOk.checked) {
      warnRemote();
      QuireUI.toast('Not saved: tick “Send my questions and passages to ' + hostOf(url) + '” to use that server, ' +
        'or enter this computer’s address (' + P.DEFAULT_URL + ').', 'error');
      remoteOk.focus();
      return;
    }
    q.saveSettings({ kind: f.kind.value, url: url, chat_model: f.chat.value,
      embed_model: f.embed.value, temperature: Number(f.temperature.value), num_ctx: Number(f.ctx.value) }, { confirm: remote ? origin : null })
      .then(function () { QuireUI.toast('Settings saved.'); }, function (e) { QuireUI.toast(e.message, 'error'); });
  }

  function pull(model) {
    var bar = h('div', { class: 'progress', role: 'progressbar', testid: 'pull-progress' }, h('div', { class: 'progress-fill' }));
    var label = h('p', { class: 'muted' }, 'Starting download of ' + model + '…');
    QuireUI.fill(pullBox, label, bar);
    pullBox.hidden = false;
    q.pullModel(model, { onProgress: function (p) {
      var frac = p.total ? (p.completed || 0) / p.total : null;
      if (frac != null) { bar.firstChild.style.width = Math.round(frac * 100) + '%'; bar.setAttribute('aria-valuenow', String(Math.round(frac * 100))); }
      label.textContent = p.status + (frac != null ? ' — ' + Math.round(frac * 100) + '%' : '');
    } }).then(function () {
      label.textContent = model + ' is ready.';
      bar.firstChild.style.width = '100%';
      refresh();
    }, function (e) { label.textContent = 'Download failed: ' + e.message; });
  }

  QuireUI.register('settings', { init: init, show: refresh });
})();
