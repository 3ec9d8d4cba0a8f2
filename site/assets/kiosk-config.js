/* Kiosk mode as the bundle was built: `python3 build.py --kiosk [--kiosk-idle MINUTES]` writes this
 * file (py/quire_build/kiosk.py); this copy is what every other build ships.  Data only, read by
 * assets/kiosk.js: kiosk true makes every page of the bundle a kiosk, idleMinutes (null: 5)
 * is how long a kiosk waits without input before it resets for the next visitor. */
self.QUIRE_KIOSK_BUILD = {"idleMinutes": null, "kiosk": false};
