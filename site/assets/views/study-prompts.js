/* Study, the prompt templates: read, edit, save and reset how Quire asks the model for each
 * tool.  Shown at the foot of the study hub (views/study.js). */
(function () {
  'use strict';
  var h = QuireUI.h;
  var t = QuireUI.t;
  var q = self.quire;

  function templateEditor() {
    var select = h('select', { testid: 'prompt-select', 'aria-label': t('Template'), onchange: function () { load(select.value); } });
    var text = h('textarea', { testid: 'prompt-text', rows: '16', spellcheck: 'false', class: 'prompt-text' });
    var vars = h('p', { class: 'small muted', testid: 'prompt-vars' });
    var state = h('span', { class: 'badge', testid: 'prompt-status' });
    var error = h('p', { class: 'error', role: 'alert', testid: 'prompt-error', hidden: true });
    var box = h('details', { class: 'card prompt-editor', testid: 'prompt-editor', ontoggle: function () { if (box.open && !select.options.length) list(); } },
      h('summary', null, h('strong', null, t('Prompt templates')), h('span', { class: 'muted small' }, t(' — how Quire asks the model for each tool'))),
      h('div', { class: 'study-row' }, select, state),
      vars, text, error,
      h('div', { class: 'add-row' },
        h('button', { type: 'button', class: 'primary', testid: 'prompt-save', onclick: save }, t('Save my version')),
        h('button', { type: 'button', testid: 'prompt-reset', onclick: reset }, t('Reset to default')),
        h('span', { class: 'muted small' }, t('Saved versions stay in this browser and apply from the next generation.'))));
    function list() {
      var keep = select.value;  // after Save or Reset, stay on the template just saved
      return q.promptTemplates().then(function (ts) {
        QuireUI.fill(select, ts.map(function (tpl) { return h('option', { value: tpl.name }, tpl.name.replace('_', ' ') + (tpl.overridden ? ' (' + t('yours') + ')' : '')); }));
        if (keep && ts.some(function (tpl) { return tpl.name === keep; })) select.value = keep;
        return load(select.value);
      });
    }
    function paint(tpl) {
      text.value = tpl.text;
      state.textContent = tpl.overridden ? t('Your version') : t('Default');
      state.className = 'badge' + (tpl.overridden ? ' custom' : '');
      QuireUI.fill(vars, t('Variables:') + ' ', tpl.variables.map(function (v) { return h('code', null, '$' + v); }), ' — ' + t('each must appear, and no others.'));
      error.hidden = true;
    }
    function load(name) {
      // only the template still chosen is shown: otherwise Save would store one template's text as another's
      return q.promptTemplate(name).then(function (tpl) { if (select.value === name) paint(tpl); });
    }
    function save() {
      q.savePromptOverride(select.value, text.value).then(function (tpl) { paint(tpl); QuireUI.toast(t('Template saved: the next {name} uses it.', { name: tpl.name.replace('_', ' ') })); list(); },
        function (err) { error.textContent = err.message; error.hidden = false; });
    }
    function reset() {
      q.resetPromptOverride(select.value).then(function (tpl) { paint(tpl); QuireUI.toast(t('Back to the default template.')); list(); },
        function (err) { error.textContent = err.message; error.hidden = false; });
    }
    return box;
  }

  self.QuireStudy.templateEditor = templateEditor;
})();
