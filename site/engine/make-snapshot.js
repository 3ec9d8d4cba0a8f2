/* Build step (Node, not shipped): a memory snapshot of a freshly started Pyodide.
 *
 *   node make-snapshot.js <runtime dir> <out file> [module,module,...]
 *
 * Restoring the snapshot skips Python's start-up (about 2 s of the engine's boot).
 * What is written is the snapshot with pyodide.asm.wasm's data segment XORed out of
 * its heap (worker-snapshot.js), which gzips a third smaller; the worker XORs it back
 * and checks the sha256 this script prints as JSON on stdout:
 *   {"sha256": <hex of the real snapshot>, "size": <bytes>, "memoryBase": <where data starts>}
 *
 * The modules named are imported before the snapshot is taken (pure-Python stdlib
 * modules numpy and Quire import: ~0.4 s less on every boot).  The clock and the
 * random source are fixed while the snapshot is made, and the hash seed is 0, so the
 * same inputs give the same bytes on every build.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const nodeCrypto = require('crypto');

const [dir, out, modules] = process.argv.slice(2);
if (!dir || !out) {
  console.error('usage: node make-snapshot.js <runtime dir> <out file>');
  process.exit(2);
}
const indexURL = path.resolve(dir) + path.sep;

let seed = 1;
function fill(array) {
  const view = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  for (let i = 0; i < view.length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    view[i] = seed >>> 24;
  }
  return array;
}
if (globalThis.crypto) globalThis.crypto.getRandomValues = fill;  // Node 19+; Node 18 has randomFillSync only
nodeCrypto.randomFillSync = fill;
Date.now = () => 1700000000000;
let tick = 0;
performance.now = () => (tick += 1);

require(indexURL + 'pyodide.asm.js');
const { loadPyodide } = require(indexURL + 'pyodide.js');
const QuireSnapshot = require(path.join(__dirname, 'worker-snapshot.js'));
const quiet = { stdout: () => {}, stderr: (line) => console.error(line) };

function sha256(bytes) { return nodeCrypto.createHash('sha256').update(bytes).digest('hex'); }

(async () => {
  const made = await loadPyodide({ indexURL, ...quiet, _makeSnapshot: true, env: { PYTHONHASHSEED: '0' } });
  if (modules) made.runPython(modules.split(',').map((m) => 'import ' + m).join('\n'));
  const snapshot = made.makeMemorySnapshot();
  const info = { sha256: sha256(snapshot), size: snapshot.length, memoryBase: made._module.___memory_base.value };
  const wasm = new Uint8Array(fs.readFileSync(indexURL + 'pyodide.asm.wasm'));
  if (QuireSnapshot.dataSegments(wasm, info.memoryBase).length === 0) throw new Error('pyodide.asm.wasm has no data segment');

  const delta = snapshot.slice();
  QuireSnapshot.xorSegments(delta, wasm, info.memoryBase);

  // Prove the round trip the worker will do: restore from the delta and run Python.
  const decoded = delta.slice();
  const restored = await QuireSnapshot.load(loadPyodide, { indexURL, ...quiet }, decoded, wasm, info);
  if (sha256(decoded) !== info.sha256) throw new Error('XORing the data segment back did not give the snapshot');
  const answer = restored.runPython('import sys; f"{sys.version_info.major}.{sys.version_info.minor} {sum(range(10))}"');
  if (!/^3\.\d+ 45$/.test(answer)) throw new Error('restored snapshot answered ' + answer);

  fs.writeFileSync(out, delta);
  process.stdout.write(JSON.stringify(info) + '\n');
})().catch((err) => {
  console.error(err && err.stack || err);
  process.exit(1);
});
