/* Library view helpers that stand alone: walking a dropped folder, and the erase-everything dialog. */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;

  /* Folders dropped in arrive as directory entries: walk them. */
  function filesFromDrop(dt) {
    var items = Array.prototype.slice.call(dt.items || []);
    var entries = items.map(function (i) { return i.webkitGetAsEntry && i.webkitGetAsEntry(); }).filter(Boolean);
    if (!entries.length) return Promise.resolve(Array.prototype.slice.call(dt.files));
    var out = [];
    function walk(entry, prefix) {
      if (entry.isFile) return new Promise(function (res) { entry.file(function (f) { out.push(prefix ? new File([f], prefix + f.name, { type: f.type }) : f); res(); }, res); });
      var reader = entry.createReader();
      return new Promise(function (res) {
        var all = [];
        (function more() {
          reader.readEntries(function (batch) {
            if (!batch.length) { Promise.all(all.map(function (e) { return walk(e, prefix + entry.name + '/'); })).then(res); return; }
            all = all.concat(Array.prototype.slice.call(batch));
            more();
          }, res);
        })();
      });
    }
    return Promise.all(entries.map(function (e) { return walk(e, ''); })).then(function () { return out; });
  }

  function confirmErase() {
    var input = h('input', { type: 'text', testid: 'erase-confirm-input', autocomplete: 'off', 'aria-label': t('Type ERASE to confirm') });
    var go = h('button', { type: 'button', class: 'danger', testid: 'erase-confirm', disabled: true }, t('Erase everything'));
    var keys = h('input', { type: 'checkbox', testid: 'erase-keys', checked: true });  // the cloud providers' keys: asked, removed by default
    var dialog = h('dialog', { class: 'erase-dialog', testid: 'erase-dialog' },
      h('h3', null, t('Erase all knowledge?')),
      h('p', null, t('This deletes every source, passage, index, chat, study item, progress record and setting Quire keeps in this browser. It cannot be undone. Type ERASE to confirm.')),
      h('label', { class: 'inline' }, keys, ' ' + t('Also remove the API keys saved in this browser')),
      input, h('div', { class: 'add-row' }, h('button', { type: 'button', onclick: function () { dialog.close(); dialog.remove(); } }, t('Keep everything')), go));
    input.addEventListener('input', function () { go.disabled = input.value.trim() !== 'ERASE'; });
    go.addEventListener('click', function () {
      go.disabled = true;
      q.eraseAll({ keepKeys: !keys.checked }).then(function (r) { dialog.close(); dialog.remove(); QuireUI.toast(t('Everything Quire stored here has been erased.') + (r.message ? ' ' + QuireI18n.engine(r.message) : '')); },
        function (e) { QuireUI.toast(e.message, 'error'); go.disabled = false; });
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    input.focus();
  }

  self.QuireLibraryIO = { filesFromDrop: filesFromDrop, confirmErase: confirmErase };
})();
