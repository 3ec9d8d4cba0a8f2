/* Kiosk mode, for demos on a screen that Playwright drives: open the page with ?kiosk=1.
 * Destructive controls (Erase, remove, delete, vault import) are hidden, text is larger and the
 * status bar goes; every control keeps its data-testid.  tests/kiosk_demo.py is a demo script.
 *
 *   quire.kiosk              -> true in kiosk mode
 *   quire.showView('study')  -> shows a view (library, search, ask, study, progress, privacy, settings, about)
 *   quire.uiLanguage()       -> 'en' or 'de';  quire.setUiLanguage('de') reloads the page in German */
(function () {
  'use strict';
  var q = self.quire;
  var on = new URLSearchParams(location.search).get('kiosk') === '1';
  if (on) document.documentElement.dataset.kiosk = '1';
  q.kiosk = on;
  q.uiLanguage = function () { return QuireI18n.lang; };
  q.setUiLanguage = function (code) { QuireI18n.set(code); };
  q.showView = function (name) {
    location.hash = '#' + name;
    QuireUI.show(name);
    return name;
  };
})();
