/* Build step (Node, not shipped): byte-compile the boot packages with the runtime's own Python.
 *
 *   node compile-pyc.js <runtime dir> <file image in> <file image out>
 *
 * The engine compiles every .py it imports on every boot (nothing persists between
 * page loads), which for numpy alone costs ~0.4 s.  This writes the files of a
 * build.py file image into Pyodide's file system, compiles them with compileall
 * into unchecked-hash .pyc files (valid whatever the files' times are when the worker
 * writes them) and writes an image of just the .pyc files.  The hash seed is 0, so
 * constants such as frozensets marshal in the same order on every build.
 */
'use strict';
const fs = require('fs');
const path = require('path');

const [dir, input, output] = process.argv.slice(2);
if (!dir || !input || !output) {
  console.error('usage: node compile-pyc.js <runtime dir> <file image in> <file image out>');
  process.exit(2);
}
const indexURL = path.resolve(dir) + path.sep;
const ROOT = '/quire-build';

function readImage(bytes) {
  if (bytes.subarray(0, 4).toString('latin1') !== 'QFS1') throw new Error(input + ' is not a file image');
  const headerLength = bytes.readUInt32LE(4);
  const entries = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  let at = 8 + headerLength;
  return entries.map(([name, size]) => {
    const data = bytes.subarray(at, at + size);
    at += size;
    return [name, data];
  });
}

function writeImage(files) {
  files.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const header = Buffer.from(JSON.stringify(files.map(([name, data]) => [name, data.length])));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  return Buffer.concat([Buffer.from('QFS1'), length, header, ...files.map(([, data]) => data)]);
}

(async () => {
  const { loadPyodide } = require(indexURL + 'pyodide.js');
  const py = await loadPyodide({ indexURL, stdout: () => {}, stderr: (line) => console.error(line), env: { PYTHONHASHSEED: '0' } });
  for (const [name, data] of readImage(fs.readFileSync(input))) {
    const target = ROOT + '/' + name;
    py.FS.mkdirTree(target.slice(0, target.lastIndexOf('/')));
    py.FS.writeFile(target, data);
  }
  const ok = py.runPython(
    'import compileall, py_compile\n' +
    `compileall.compile_dir(${JSON.stringify(ROOT)}, quiet=1, workers=1,\n` +
    '                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)');
  if (!ok) throw new Error('some files did not compile');
  const pycs = [];
  (function walk(dirPath) {
    for (const name of py.FS.readdir(dirPath)) {
      if (name === '.' || name === '..') continue;
      const full = dirPath + '/' + name;
      if (py.FS.isDir(py.FS.stat(full).mode)) walk(full);
      else if (name.endsWith('.pyc')) pycs.push([full.slice(ROOT.length + 1), Buffer.from(py.FS.readFile(full))]);
    }
  })(ROOT);
  fs.writeFileSync(output, writeImage(pycs));
  process.stdout.write(JSON.stringify({ files: pycs.length }) + '\n');
})().catch((err) => {
  console.error(err && err.stack || err);
  process.exit(1);
});
