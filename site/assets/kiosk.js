/* Kiosk mode, for a shared screen: the page fills the screen with large touch targets, and the
 * controls that change what the kiosk is or leave it are not there (Settings, Erase, remove,
 * delete, the vault's export and import, the language switch: the kiosk's language is its
 * address's ?lang=).  After some minutes without input the kiosk resets for the next visitor
 * (assets/kiosk-reset.js).
 *
 * On with ?kiosk or ?kiosk=1 in the address, or always in a bundle built with
 * `python3 build.py --kiosk` (assets/kiosk-config.js); ?idle=MINUTES (or --kiosk-idle) sets the
 * wait, 5 minutes unless given.  ?kiosk=0 is off, except in a kiosk build.
 *
 * Those controls are taken out of the page, not hidden.  This script runs in <head>, before the
 * body exists, and one MutationObserver removes every element that matches REMOVED as soon as it
 * is added: the parser's (the Settings tab) and every view's, whenever a view builds one (a
 * chat's delete button each time the list is drawn).  Mutation observers run before the browser
 * paints or hands it a click or a key, so no such element is ever seen, clicked or reached by
 * Tab.  The Settings view is not registered either (kiosk-reset.js): #settings typed into the
 * address lands on the library.  One list here, so a view never needs to know about kiosks. */
var QuireKiosk = (function () {
  'use strict';
  var DEFAULT_IDLE_MINUTES = 5;
  var built = self.QUIRE_KIOSK_BUILD || {};
  var params = new URLSearchParams(location.search);
  var on = built.kiosk === true || (params.has('kiosk') && params.get('kiosk') !== '0');

  function idleMinutes() {
    var asked = Number(params.get('idle'));
    if (params.has('idle') && asked > 0) return asked;
    if (params.has('idle')) console.warn('Quire kiosk: ?idle=' + params.get('idle') + ' is not a number of minutes; using the default');
    return built.idleMinutes > 0 ? built.idleMinutes : DEFAULT_IDLE_MINUTES;
  }

  var EXCLUDED_VIEWS = ['settings'];
  var REMOVED = [
    // Settings, and everything that leads there or changes a setting
    '[data-view="settings"]', '[data-nav="settings"]', 'a[href="#settings"]', '[data-testid="llm-badge"]',
    '[data-testid="chat-settings-link"]', '[data-testid="embedding-settings-hint"]', '[data-testid="server-banner"]',
    '[data-testid="lang-switch"]',
    // Erase, remove, delete
    '.danger-zone', '[data-testid="erase-all"]', '[data-testid="erase-dialog"]', '[data-testid="remove-source"]',
    '[data-testid="sample-remove"]', '[data-testid="chat-delete"]', '[data-testid="set-delete"]', '[data-testid="flag-delete"]',
    // the vault: export and import
    '[data-testid="vault-card"]', '[data-testid="vault-export"]', '[data-testid="vault-import"]', '[data-testid="vault-file"]',
  ].join(', ');

  function sweep(el) {
    if (el.matches(REMOVED)) { el.remove(); return; }
    Array.prototype.forEach.call(el.querySelectorAll(REMOVED), function (found) { found.remove(); });
  }

  if (on) {
    document.documentElement.dataset.kiosk = '1';
    new MutationObserver(function (records) {
      records.forEach(function (r) {
        // An element that becomes one later (its testid or link set after it was added) goes too.
        if (r.type === 'attributes') { if (r.target.isConnected && r.target.matches(REMOVED)) r.target.remove(); return; }
        r.addedNodes.forEach(function (node) { if (node.nodeType === 1 && node.isConnected) sweep(node); });
      });
    }).observe(document.documentElement, { childList: true, subtree: true, attributes: true,
      attributeFilter: ['data-testid', 'data-view', 'data-nav', 'href', 'class'] });
  }

  return { on: on, idleMinutes: on ? idleMinutes() : null, excludedViews: on ? EXCLUDED_VIEWS : [] };
})();
