/* Privacy: where data may go (the model server, adding by address, who shares this storage),
 * everything Quire keeps (what, how big, where), the live log of every network request this
 * page made, and the vault: export everything, import on another machine. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var q = self.quire;
  var P = self.QuirePrivacy;
  var inventory, largest, netBody, netSummary, vaultMsg, fileInput, importBtn, exportBtn, serverBox;
  var KIND = { bundle: 'Quire’s own files', 'in-page': 'inside the page', llm: 'your model server', loopback: 'this machine', other: 'elsewhere' };

  function init(root) {
    inventory = h('div', { testid: 'inventory' }, h('p', { class: 'muted' }, 'Loading…'));
    largest = h('div', { testid: 'largest-sources' });
    netSummary = h('p', { class: 'net-summary', testid: 'network-summary' });
    netBody = h('tbody', { testid: 'network-log' });
    vaultMsg = h('div', { class: 'vault-msg', testid: 'vault-message', 'aria-live': 'polite' });
    fileInput = h('input', { type: 'file', accept: '.quire,.zip,application/zip', testid: 'vault-file',
      onchange: function () { importBtn.disabled = !fileInput.files.length; } });
    importBtn = h('button', { type: 'button', testid: 'vault-import', disabled: true, onclick: doImport }, 'Import');
    exportBtn = h('button', { type: 'button', class: 'primary', testid: 'vault-export', onclick: doExport }, 'Export vault…');

    serverBox = h('div', { testid: 'privacy-server' });
    root.append(
      h('div', { class: 'view-head' }, h('h2', null, 'Privacy'),
        h('span', { class: 'muted small' }, 'Everything below lives in this browser. Nothing is sent anywhere but the model server you chose.'),
        h('span', { class: 'spacer' }), h('button', { type: 'button', testid: 'privacy-refresh', onclick: render }, 'Refresh')),
      h('div', { class: 'card pg-card' }, h('div', { class: 'pg-card-head' }, h('h3', null, 'Where your data can go')), serverBox, sharing()),
      h('div', { class: 'card pg-card' }, h('div', { class: 'pg-card-head' }, h('h3', null, 'What Quire keeps')), inventory, largest),
      h('div', { class: 'card pg-card' },
        h('div', { class: 'pg-card-head' }, h('h3', null, 'Network requests since this page opened'), h('span', { class: 'muted small' }, 'live · newest first')),
        netSummary,
        h('div', { class: 'net-scroll' }, h('table', { class: 'sources net' },
          h('thead', null, h('tr', null, ['Time', 'By', 'To', 'Address', 'Size'].map(function (t) { return h('th', null, t); }))), netBody))),
      h('div', { class: 'card pg-card', testid: 'vault-card' },
        h('div', { class: 'pg-card-head' }, h('h3', null, 'Carry your vault')),
        h('p', { class: 'muted' }, 'One file with everything: sources and originals, the search index and vectors, chats, study material with card schedules, progress and settings. It is versioned and checksummed; a damaged file is refused and changes nothing.'),
        h('div', { class: 'add-row' }, exportBtn),
        h('div', { class: 'vault-import' },
          h('label', { class: 'inline' }, 'Vault file ', fileInput),
          h('fieldset', { class: 'inline mode' }, h('legend', { class: 'visually-hidden' }, 'How to import'),
            h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'vault-mode', value: 'merge', checked: true, testid: 'vault-mode-merge' }), 'Merge (add to what is here)'),
            h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'vault-mode', value: 'replace', testid: 'vault-mode-replace' }), 'Replace (this browser becomes the vault)')),
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
        h('strong', null, 'Opened from disk (file://): '),
        'every HTML file you open from disk in this browser shares Quire’s storage, so such a page — a saved web page, say — ' +
        'can read your library and change Quire’s settings. Quire cannot stop that reading; it does refuse to send anything to a model ' +
        'server or website that you did not confirm in this tab. To give the library its own origin that no other page shares, run ',
        h('code', null, 'python serve.py'), ' in the Quire folder and open the address it prints.');
    }
    return h('p', { class: 'muted', testid: 'privacy-storage-note', dataset: { mode: 'http' } },
      'Served from ', h('code', null, location.origin), ': only pages from this origin share Quire’s storage. ',
      h('code', null, 'python serve.py'), ' serves Quire alone on its own origin; on a shared web host, other pages of the same origin can read the library too.');
  }

  function server(settings) {
    var url = settings.url;
    var origin = P.origin(url) || url;
    var state = P.isLoopback(url) ? 'loopback' : P.confirmed === origin ? 'confirmed' : 'unconfirmed';
    var text = {
      loopback: 'on this computer (a loopback address): your questions and passages stay on this machine.',
      confirmed: 'on another computer, confirmed by you in this tab: your questions and passages are sent there.',
      unconfirmed: 'on another computer and not confirmed in this tab: Quire sends nothing there. Settings asks you to confirm it or switch back.',
    }[state];
    QuireUI.fill(serverBox,
      h('p', { testid: 'privacy-server-state', dataset: { state: state } }, h('strong', null, 'Model server: '), h('code', null, origin), ' — ', text),
      h('p', { class: 'muted', testid: 'privacy-url-fetch', dataset: { state: P.urlFetch ? 'on' : 'off' } },
        h('strong', null, 'Adding web pages by address: '),
        P.urlFetch ? 'on in this tab: the page may contact the sites whose addresses you add.' : 'off: the page contacts no website.'));
  }

  function draw(p) {
    QuireUI.fill(inventory, h('table', { class: 'sources inventory' },
      h('thead', null, h('tr', null, ['What', 'Holds', 'Records', 'Size', 'Where'].map(function (t) { return h('th', null, t); }))),
      h('tbody', null, p.rows.map(function (r) {
        return h('tr', { testid: 'inventory-row', dataset: { bucket: r.bucket, bytes: String(r.bytes) } },
          h('td', null, h('strong', null, r.what)), h('td', { class: 'muted' }, r.holds), h('td', { class: 'num' }, String(r.count)),
          h('td', { class: 'num', testid: 'inventory-size' }, r.size), h('td', null, h('code', null, r.where)));
      })),
      h('tfoot', null, h('tr', null, h('th', null, 'Total'), h('td', { class: 'muted' }, 'kept in this browser'), h('td', { class: 'num' }, String(p.total.count)),
        h('td', { class: 'num', testid: 'inventory-total' }, QuireUI.bytes(p.total.bytes)),
        h('td', { class: 'muted' }, p.estimate.usage != null ? 'the browser counts ' + QuireUI.bytes(p.estimate.usage) + ' for this page, ' + QuireUI.bytes(p.estimate.quota - p.estimate.usage) + ' free' : '')))));
    QuireUI.fill(largest, p.largest_sources.length ? h('p', { class: 'muted small' }, 'Largest sources (remove these in Library first if storage runs out): ',
      p.largest_sources.map(function (x, i) { return [i ? ' · ' : '', x.name + ' (' + x.size + ')']; })) : null);
  }

  /* ---- the network log ---- */
  function row(e) {
    var time = new Date(e.at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    var shown = e.url.length > 90 ? e.url.slice(0, 60) + '…' + e.url.slice(-25) : e.url;
    netBody.insertBefore(h('tr', { testid: 'network-row', class: 'net-' + e.kind, dataset: { kind: e.kind } },
      h('td', { class: 'muted' }, time), h('td', null, e.from), h('td', null, h('span', { class: 'net-kind ' + e.kind }, KIND[e.kind] || e.kind)),
      h('td', { title: e.url }, h('code', null, (e.method !== 'GET' ? e.method + ' ' : '') + shown)),
      h('td', { class: 'num muted' }, e.bytes ? QuireUI.bytes(e.bytes) : '—')), netBody.firstChild);  // newest first
  }

  function summary() {
    var log = q.networkLog();
    var counts = {};
    log.forEach(function (e) { counts[e.kind] = (counts[e.kind] || 0) + 1; });
    var strange = (counts.other || 0);
    netSummary.dataset.state = strange ? 'warn' : 'ok';
    QuireUI.fill(netSummary, h('strong', null, log.length + ' requests: '),
      Object.keys(counts).sort().map(function (k, i) { return [i ? ', ' : '', counts[k] + ' to ' + (KIND[k] || k)]; }), '. ',
      strange ? h('span', { class: 'state-not_running' }, strange + ' went elsewhere — check the addresses below.')
        : h('span', { class: 'state-connected' }, 'Nothing went anywhere but Quire’s own files and this machine.'),
      h('span', { class: 'muted small' }, ' The model server is reached by the engine; its calls show as “your model server”.'));
  }

  /* ---- the vault ---- */
  function message(kind, text) {
    QuireUI.fill(vaultMsg, h('p', { class: kind === 'error' ? 'fix error' : 'ok-msg', role: kind === 'error' ? 'alert' : 'status', testid: 'vault-' + kind }, text));
  }

  function doExport() {
    exportBtn.disabled = true;
    message('info', 'Packing your vault…');
    q.exportVault().then(function (file) {
      var a = h('a', { href: URL.createObjectURL(file), download: file.name });
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
      message('done', 'Saved ' + file.name + ' (' + QuireUI.bytes(file.size) + '). Open Privacy on the other machine and import it there.');
    }, function (err) { message('error', err.message); }).then(function () { exportBtn.disabled = false; render(); });
  }

  function doImport() {
    var file = fileInput.files[0];
    if (!file) return;
    var mode = document.querySelector('input[name="vault-mode"]:checked').value;
    if (mode === 'replace' && !confirm('Replace everything in this browser with the vault? What is here now and not in the vault will be deleted.')) return;
    importBtn.disabled = true;
    message('info', 'Checking the whole file, then importing…');
    q.importVault(file, { mode: mode }).then(function (r) {
      message('done', 'Imported (' + r.mode + '): ' + QuireUI.plural(r.summary.puts, 'item') + ' written, ' + r.summary.deletes + ' removed, ' +
        r.summary.unchanged + ' already here. The library now has ' + QuireUI.plural(r.sources, 'source') + '.');
      (r.ignored || []).forEach(function (text) { vaultMsg.appendChild(h('p', { class: 'fix', role: 'status', testid: 'vault-ignored' }, text)); });
      QuireUI.toast('Vault imported.');
    }, function (err) { message('error', 'Not imported: ' + err.message); })
      .then(function () { importBtn.disabled = false; render(); });
  }

  QuireUI.register('privacy', { init: init, show: show });
})();
