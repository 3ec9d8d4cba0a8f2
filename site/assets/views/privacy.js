/* Privacy: where data may go (the model server, adding by address, who shares this storage),
 * everything Quire keeps (what, how big, where), the live log of every network request this
 * page made, and the vault: export everything, import on another machine. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;
  var P = self.QuirePrivacy;
  var keyBox;  // API keys: whether one is saved and where (never the key)
  var inventory, largest, netBody, netSummary, vaultMsg, fileInput, importBtn, exportBtn, serverBox;
  var NET_COLS = [t('Time'), t('By'), t('To'), t('Address'), t('Size')];
  var INV_COLS = [t('What'), t('Holds'), t('Records'), t('Size'), t('Where')];
  var FROM = { page: t('the page'), engine: t('the engine') };
  var KIND = { bundle: t('Quire’s own files'), 'in-page': t('inside the page'), llm: t('your model server'), loopback: t('this machine'), other: t('elsewhere') };

  function init(root) {
    inventory = h('div', { testid: 'inventory' }, h('p', { class: 'muted' }, t('Loading…')));
    largest = h('div', { testid: 'largest-sources' });
    netSummary = h('p', { class: 'net-summary', testid: 'network-summary' });
    netBody = h('tbody', { testid: 'network-log' });
    vaultMsg = h('div', { class: 'vault-msg', testid: 'vault-message', 'aria-live': 'polite' });
    fileInput = h('input', { type: 'file', accept: '.quire,.zip,application/zip', testid: 'vault-file',
      onchange: function () { importBtn.disabled = !fileInput.files.length; } });
    importBtn = h('button', { type: 'button', testid: 'vault-import', disabled: true, onclick: doImport }, t('Import'));
    exportBtn = h('button', { type: 'button', class: 'primary', testid: 'vault-export', onclick: doExport }, t('Export vault…'));

    serverBox = h('div', { testid: 'privacy-server' });
    keyBox = h('p', { class: 'muted', testid: 'privacy-api-key' });
    root.append(
      h('div', { class: 'view-head' }, h('h2', null, t('Privacy')),
        h('span', { class: 'muted small' }, t('Everything below lives in this browser. Nothing is sent anywhere but the model server you chose.')),
        h('span', { class: 'spacer' }), h('button', { type: 'button', testid: 'privacy-refresh', onclick: render }, t('Refresh'))),
      h('div', { class: 'card pg-card' }, h('div', { class: 'pg-card-head' }, h('h3', null, t('Where your data can go'))), serverBox, keyBox, sharing()),
      h('div', { class: 'card pg-card' }, h('div', { class: 'pg-card-head' }, h('h3', null, t('What Quire keeps'))), inventory, largest, keeping()),
      h('div', { class: 'card pg-card' },
        h('div', { class: 'pg-card-head' }, h('h3', null, t('Network requests since this page opened')), h('span', { class: 'muted small' }, t('live · newest first'))),
        netSummary,
        h('div', { class: 'net-scroll', tabindex: '0', role: 'region', 'aria-label': t('Network requests since this page opened') }, h('table', { class: 'sources net' },
          h('thead', null, h('tr', null, NET_COLS.map(function (c) { return h('th', { scope: 'col' }, c); }))), netBody))),
      h('div', { class: 'card pg-card', testid: 'vault-card' },
        h('div', { class: 'pg-card-head' }, h('h3', null, t('Carry your vault'))),
        h('p', { class: 'muted' }, t('One file with everything: sources and originals, the search index and vectors, chats, study material with card schedules, progress and settings. It is versioned and checksummed; a damaged file is refused and changes nothing.')),
        h('div', { class: 'add-row' }, exportBtn),
        h('div', { class: 'vault-import' },
          h('label', { class: 'inline' }, t('Vault file') + ' ', fileInput),
          h('fieldset', { class: 'inline mode' }, h('legend', { class: 'visually-hidden' }, t('How to import')),
            h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'vault-mode', value: 'merge', checked: true, testid: 'vault-mode-merge' }), t('Merge (add to what is here)')),
            h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'vault-mode', value: 'replace', testid: 'vault-mode-replace' }), t('Replace (this browser becomes the vault)'))),
          importBtn),
        vaultMsg));
    q.networkLog().forEach(row);
    document.addEventListener('quire:network', function (e) { row(e.detail); summary(); });
    document.addEventListener('quire:llm-status', function (e) { if (e.detail && e.detail.settings) server(e.detail.settings); });
    summary();
  }

  function show() { render(); }

  function render() {
    q._call('llmSettings').then(server, function () {});
    return q.privacy().then(draw, function (err) { QuireUI.fill(inventory, h('p', { class: 'fix', role: 'alert' }, err.message)); });
  }

  /* ---- where data can go ---- */

  /* Who else can read this storage: on file:// every page opened from disk. */
  function sharing() {
    if (location.protocol === 'file:') {
      return h('p', { class: 'fix', testid: 'privacy-storage-note', dataset: { mode: 'file' } },
        h('strong', null, t('Opened from disk (file://):') + ' '),
        t('every HTML file you open from disk in this browser shares Quire’s storage, so such a page — a saved web page, say — can read your library and change Quire’s settings. Quire cannot stop that reading; it does refuse to send anything to a model server or website that you did not confirm in this tab. To give the library its own origin that no other page shares, run') + ' ',
        h('code', null, 'python serve.py'), ' ' + t('in the Quire folder and open the address it prints.'));
    }
    return h('p', { class: 'muted', testid: 'privacy-storage-note', dataset: { mode: 'http' } },
      t('Served from') + ' ', h('code', null, location.origin), ': ' + t('only pages from this origin share Quire’s storage.') + ' ',
      h('code', null, 'python serve.py'), ' ' + t('serves Quire alone on its own origin; on a shared web host, other pages of the same origin can read the library too.'));
  }

  /* How long the browser keeps the library: whether it granted persistent storage, and the
   * rules of each engine that can delete it (Safari's seven days above all), with what to do. */
  function keeping() {
    var box = h('div', { class: 'keeping', testid: 'privacy-keeping' });
    var s = navigator.storage;
    var asked = s && s.persisted ? Promise.resolve(s.persisted()).then(null, function () { return null; }) : Promise.resolve(null);
    asked.then(function (persisted) {
      box.dataset.persisted = String(persisted);
      QuireUI.fill(box,
        h('p', { testid: 'privacy-persisted' }, h('strong', null, t('Kept until you erase it?') + ' '),
          persisted === true ? t('Yes: this browser granted Quire persistent storage, so it does not clear the library to free space.')
            : persisted === false ? t('Not guaranteed: this browser has not granted persistent storage, so it may clear the library when the disk runs short of space.')
              : t('This browser does not say whether it keeps Quire’s storage persistently.')),
        h('p', { testid: 'privacy-safari' }, h('strong', null, t('Safari (Mac, iPhone, iPad):') + ' '),
          t('Safari deletes everything a site stored (Quire’s whole library) when you have used Safari for seven days without opening that site, unless the site was added to the Dock or the Home Screen. Safari also gives each site at most about 60% of the disk.')),
        h('p', { class: 'fix', testid: 'privacy-keeping-advice' }, h('strong', null, t('What to do:') + ' '),
          t('export a vault (below) after each session that matters, and in Safari add Quire to the Dock (File › Add to Dock) or the Home Screen (Share › Add to Home Screen), which keeps its storage. Opened from disk, Quire cannot be added; serve it with python3 serve.py for that.')));
    });
    return box;
  }

  function server(settings) {
    keyLine();
    var rows = [[t('Model server:'), settings.url]];
    if (settings.embed_url && settings.embed_url !== settings.url) rows.push([t('Embedding server:'), settings.embed_url]);
    var text = {
      loopback: t('on this computer (a loopback address): your questions and passages stay on this machine.'),
      confirmed: t('on another computer, confirmed by you in this tab: your questions and passages are sent there.'),
      unconfirmed: t('on another computer and not confirmed in this tab: Quire sends nothing there. Settings asks you to confirm it or switch back.'),
    };
    QuireUI.fill(serverBox, rows.map(function (r, i) {
      var origin = P.origin(r[1]) || r[1];
      var state = P.isLoopback(r[1]) ? 'loopback' : P.confirmed.indexOf(origin) >= 0 ? 'confirmed' : 'unconfirmed';
      return [h('p', { testid: i ? 'privacy-embed-server-state' : 'privacy-server-state', dataset: { state: state } },
        h('strong', null, r[0] + ' '), h('code', null, origin), ' — ', text[state]), provider(r[1], i)];
    }), h('p', { class: 'muted', testid: 'privacy-url-fetch', dataset: { state: P.urlFetch ? 'on' : 'off' } },
        h('strong', null, t('Adding web pages by address:') + ' '),
        P.urlFetch ? t('on in this tab: the page may contact the sites whose addresses you add.') : t('off: the page contacts no website.')));
  }

  /* A cloud provider (an address of py/quire/llm/settings.py PROVIDERS): who, and what each request carries. */
  var CLOUD = { 'api.openai.com': 'OpenAI', 'generativelanguage.googleapis.com': 'Google Gemini', 'api.anthropic.com': 'Anthropic' };
  function provider(url, embed) {
    var host;
    try { host = new URL(url).host; } catch (e) { return null; }
    if (!CLOUD[host]) return null;
    return h('p', { class: 'fix', testid: embed ? 'privacy-embed-provider' : 'privacy-provider', dataset: { provider: CLOUD[host] } },
      h('strong', null, t('Provider: {provider}.', { provider: CLOUD[host] }) + ' '), embed
        ? t('Each request to {host} carries the passages being embedded, or your question when you search; your documents themselves stay here.', { host: host })
        : t('Each request to {host} carries your question, the passages found for it (those shown as citations) and the conversation so far; your documents themselves stay here.', { host: host }));
  }

  function keyLine() {
    q._call('llmKeys').then(function (k) {
      var any = k.chat || k.embeddings;
      keyBox.dataset.state = any ? 'saved' : 'none';
      QuireUI.fill(keyBox, h('strong', null, t('API keys:') + ' '), any
        ? t('saved in this browser only (IndexedDB quire.main), sent only to the server each was saved for, never put in a vault, the network log or an error report. Settings removes them; Erase all asks.')
        : t('none saved.'));
    }, function () {});
  }

  function draw(p) {
    QuireUI.fill(inventory, h('table', { class: 'sources inventory' },
      h('thead', null, h('tr', null, INV_COLS.map(function (c) { return h('th', { scope: 'col' }, c); }))),
      h('tbody', null, p.rows.map(function (r) {
        return h('tr', { testid: 'inventory-row', dataset: { bucket: r.bucket, bytes: String(r.bytes), count: String(r.count) } },
          h('td', null, h('strong', null, QuireI18n.engine(r.what))), h('td', { class: 'muted', 'data-label': INV_COLS[1] }, QuireI18n.engine(r.holds)),
          h('td', { class: 'num', 'data-label': INV_COLS[2] }, QuireI18n.number(r.count)),
          h('td', { class: 'num', testid: 'inventory-size', 'data-label': INV_COLS[3] }, r.size), h('td', { 'data-label': INV_COLS[4] }, h('code', null, r.where)));
      })),
      h('tfoot', null, h('tr', null, h('th', null, t('Total')), h('td', { class: 'muted' }, t('kept in this browser')), h('td', { class: 'num' }, QuireI18n.number(p.total.count)),
        h('td', { class: 'num', testid: 'inventory-total' }, QuireUI.bytes(p.total.bytes)),
        h('td', { class: 'muted' }, p.estimate.usage != null ? t('the browser counts {used} for this page, {free} free', { used: QuireUI.bytes(p.estimate.usage), free: QuireUI.bytes(p.estimate.quota - p.estimate.usage) }) : '')))));
    QuireUI.fill(largest, p.largest_sources.length ? h('p', { class: 'muted small' }, t('Largest sources (remove these in Library first if storage runs out):') + ' ',
      p.largest_sources.map(function (x, i) { return [i ? ' · ' : '', x.name + ' (' + x.size + ')']; })) : null);
  }

  /* ---- the network log ---- */
  function row(e) {
    var time = new Date(e.at).toLocaleTimeString(QuireI18n.lang, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    var shown = e.url.length > 90 ? e.url.slice(0, 60) + '…' + e.url.slice(-25) : e.url;
    netBody.insertBefore(h('tr', { testid: 'network-row', class: 'net-' + e.kind, dataset: { kind: e.kind } },
      h('td', { class: 'muted', 'data-label': NET_COLS[0] }, time), h('td', { 'data-label': NET_COLS[1] }, FROM[e.from] || e.from),
      h('td', { 'data-label': NET_COLS[2] }, h('span', { class: 'net-kind ' + e.kind }, KIND[e.kind] || e.kind)),
      h('td', { 'data-label': NET_COLS[3] }, h('code', { title: e.url }, (e.method !== 'GET' ? e.method + ' ' : '') + shown)),
      h('td', { class: 'num muted', 'data-label': NET_COLS[4] }, e.bytes ? QuireUI.bytes(e.bytes) : '—')), netBody.firstChild);  // newest first
  }

  function summary() {
    var log = q.networkLog();
    var counts = {};
    log.forEach(function (e) { counts[e.kind] = (counts[e.kind] || 0) + 1; });
    var strange = (counts.other || 0);
    netSummary.dataset.state = strange ? 'warn' : 'ok';
    QuireUI.fill(netSummary, h('strong', null, QuireUI.plural(log.length, 'request') + ': '),
      Object.keys(counts).sort().map(function (k, i) { return [i ? ', ' : '', t('{n} to {where}', { n: counts[k], where: KIND[k] || k })]; }), '. ',
      strange ? h('span', { class: 'state-not_running' }, t('{n} went elsewhere — check the addresses below.', { n: strange }))
        : h('span', { class: 'state-connected' }, t('Nothing went anywhere but Quire’s own files and this machine.')),
      h('span', { class: 'muted small' }, ' ' + t('The model server is reached by the engine; its calls show as “your model server”.')));
  }

  /* ---- the vault ---- */
  function message(kind, text) {
    QuireUI.fill(vaultMsg, h('p', { class: kind === 'error' ? 'fix error' : 'ok-msg', role: kind === 'error' ? 'alert' : 'status', testid: 'vault-' + kind }, text));
  }

  function doExport() {
    exportBtn.disabled = true;
    message('info', t('Packing your vault…'));
    q.exportVault().then(function (file) {
      var a = h('a', { href: URL.createObjectURL(file), download: file.name });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
      message('done', t('Saved {file} ({size}). Open Privacy on the other machine and import it there.', { file: file.name, size: QuireUI.bytes(file.size) }));
    }, function (err) { message('error', QuireI18n.engine(err.message)); }).then(function () { exportBtn.disabled = false; render(); });
  }

  function doImport() {
    var file = fileInput.files[0];
    if (!file) return;
    var mode = document.querySelector('input[name="vault-mode"]:checked').value;
    if (mode === 'replace' && !confirm(t('Replace everything in this browser with the vault? What is here now and not in the vault will be deleted.'))) return;
    importBtn.disabled = true;
    message('info', t('Checking the whole file, then importing…'));
    q.importVault(file, { mode: mode, onProgress: function (e) { message('info', QuireUI.importStep(e.stage)); } }).then(function (r) {
      message('done', t('Imported ({mode}): {items} written, {deleted} removed, {unchanged} already here. The library now has {sources}.', {
        mode: t(r.mode), items: QuireUI.plural(r.summary.puts, 'item'), deleted: r.summary.deletes, unchanged: r.summary.unchanged, sources: QuireUI.plural(r.sources, 'source') }));
      (r.ignored || []).forEach(function (text) { vaultMsg.appendChild(h('p', { class: 'fix', role: 'status', testid: 'vault-ignored' }, QuireI18n.engine(text))); });
      QuireUI.toast(t('Vault imported.'));
    }, function (err) { message('error', t('Not imported: {reason}', { reason: QuireI18n.engine(err.message) })); })
      .then(function () { importBtn.disabled = false; render(); });
  }

  QuireUI.register('privacy', { init: init, show: show });
})();
