/* Check and time site/engine/kernels.js inside real Pyodide, in Node.
 *
 *   node tests/bench/kernels_node.js <pyodide dir> [--json out.json]
 *
 * <pyodide dir> holds pyodide.js, pyodide.asm.{js,wasm}, pyodide-lock.json and
 * the numpy wheel.  The Memory is the one Pyodide's module imports, as in the worker
 * (there: imports.env.memory in instantiateWasm; here: the first WebAssembly.Memory
 * passed as imports.env.memory to WebAssembly.instantiate).
 * Prints a correctness table (kernels.matvec against numpy's `@`) and a timing
 * table; exits 1 if any case is off by more than 1e-4.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const ROOT = path.resolve(__dirname, '..', '..');
const TOLERANCE = 1e-4;  // rows and query are unit vectors, so scores lie in [-1, 1]
const RUNS = 20;

function captureMemory() {
  const seen = { memory: null };
  const keep = (imports) => {
    const m = imports && imports.env && imports.env.memory;
    if (!seen.memory && m instanceof WebAssembly.Memory) seen.memory = m;
  };
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = function (source, imports) { keep(imports); return instantiate.apply(this, arguments); };
  const streaming = WebAssembly.instantiateStreaming;
  if (streaming) {
    WebAssembly.instantiateStreaming = function (source, imports) { keep(imports); return streaming.apply(this, arguments); };
  }
  return seen;
}

const CHECK = `
import json
import numpy as np
from quire.retrieval import kernels
from quire.retrieval.dense import DenseIndex

def unit_rows(rows, dim, seed):
    m = np.random.default_rng(seed).standard_normal((rows, dim), dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)

def case(name, m, q):
    got = kernels.matvec(m, q)
    want = m @ q
    return {"case": name, "rows": m.shape[0], "dim": m.shape[1],
            "max_abs_err": float(np.max(np.abs(got - want))), "dtype": str(got.dtype)}

results = []
for rows in (1, 3, 8, 9, 17, 1000, 100000):
    for dim in (1, 5, 7, 768, 1024):
        m = unit_rows(rows, dim, rows * 7 + dim)
        results.append(case("plain", m, unit_rows(1, dim, 1)[0]))
        del m

def misaligned(a):
    """A copy of a whose data starts 4 bytes past a 16-byte boundary."""
    buf = np.empty(a.size + 4, dtype=np.float32)
    skip = (4 - buf.__array_interface__["data"][0] % 16) % 16 // 4
    out = buf[skip : skip + a.size].reshape(a.shape)
    out[:] = a
    return out

spare = unit_rows(13, 7, 2)  # leading rows of a bigger buffer, as DenseIndex slices its capacity
results.append(case("leading-rows", spare[:10], unit_rows(1, 7, 3)[0]))
results.append(case("misaligned", misaligned(unit_rows(11, 6, 4)), misaligned(unit_rows(1, 6, 5)[0])))

index = DenseIndex()
vectors = unit_rows(500, 33, 6)
index.add(range(500), vectors)
query = unit_rows(1, 33, 7)[0]
results.append({"case": "DenseIndex.scores", "rows": 500, "dim": 33, "dtype": "float32",
                "max_abs_err": float(np.max(np.abs(index.scores(query) - vectors @ query)))})
json.dumps({"backend": kernels.backend(), "results": results})
`;

const TIME = `
import json, time
import numpy as np
from quire.retrieval import kernels

def p50_ms(f, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return float(np.percentile(times, 50)), float(min(times))

m = np.random.default_rng(0).standard_normal((100000, 768), dtype=np.float32)
q = np.random.default_rng(1).standard_normal(768, dtype=np.float32)
t = time.perf_counter()
kernels.matvec(m[:1000], q)
first_ms = (time.perf_counter() - t) * 1000
rows = []
for name, f in (("numpy @", lambda: m @ q), ("kernel", lambda: kernels.matvec(m, q))):
    f()
    p50, best = p50_ms(f, ${RUNS})
    rows.append({"what": name, "p50_ms": p50, "min_ms": best})
json.dumps({"rows": 100000, "dim": 768, "runs": ${RUNS}, "first_small_call_ms": first_ms, "timings": rows})
`;

async function main() {
  const args = process.argv.slice(2);
  const jsonAt = args.indexOf('--json');
  const jsonPath = jsonAt >= 0 ? args.splice(jsonAt, 2)[1] : null;
  if (args.length !== 1) {
    console.error('usage: node tests/bench/kernels_node.js <pyodide dir> [--json out.json]');
    process.exit(2);
  }
  const dir = path.resolve(args[0]) + path.sep;

  const seen = captureMemory();
  const { loadPyodide } = require(path.join(dir, 'pyodide.js'));
  globalThis.self = globalThis;
  vm.runInThisContext(fs.readFileSync(path.join(ROOT, 'site', 'engine', 'kernels.js'), 'utf8'),
    { filename: 'kernels.js' });

  const pyodide = await loadPyodide({ indexURL: dir });
  if (!seen.memory) throw new Error('no WebAssembly.Memory seen in imports.env.memory');
  const installed = self.quireKernels.install(pyodide, seen.memory);
  const bytesAtInstall = seen.memory.buffer.byteLength;
  await pyodide.loadPackage('numpy', { messageCallback: () => {} });
  pyodide.FS.mkdir('/quire');
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.join(ROOT, 'py') }, '/quire');
  pyodide.runPython("import sys; sys.path.insert(0, '/quire')");

  const check = JSON.parse(pyodide.runPython(CHECK));
  const timing = JSON.parse(pyodide.runPython(TIME));
  const bytesAtEnd = seen.memory.buffer.byteLength;

  console.log(`pyodide ${pyodide.version}, node ${process.version}, kernel installed: ${installed}, backend: ${check.backend}`);
  console.log(`heap ${(bytesAtInstall / 2 ** 20).toFixed(0)} MiB at install -> ${(bytesAtEnd / 2 ** 20).toFixed(0)} MiB at end` +
    ` (HEAP8 still on it: ${pyodide._module.HEAP8.buffer === seen.memory.buffer})`);
  console.log('\ncase                rows    dim   max |kernel - numpy|');
  let failed = 0;
  for (const r of check.results) {
    const ok = r.max_abs_err <= TOLERANCE && r.dtype === 'float32';
    failed += ok ? 0 : 1;
    console.log(`${r.case.padEnd(18)} ${String(r.rows).padStart(6)} ${String(r.dim).padStart(6)}   ${r.max_abs_err.toExponential(2)}${ok ? '' : '  FAIL'}`);
  }
  console.log(`\n${timing.rows} x ${timing.dim} float32, ${timing.runs} runs`);
  console.log('what         p50 ms   min ms');
  for (const t of timing.timings) console.log(`${t.what.padEnd(10)} ${t.p50_ms.toFixed(1).padStart(8)} ${t.min_ms.toFixed(1).padStart(8)}`);
  const [np_, kernel] = timing.timings;
  console.log(`speed-up at p50: ${(np_.p50_ms / kernel.p50_ms).toFixed(1)}x; first call (1000 rows, may be V8's baseline tier): ${timing.first_small_call_ms.toFixed(2)} ms`);
  console.log(`${check.results.length - failed} passed, ${failed} failed`);

  if (jsonPath) {
    fs.writeFileSync(jsonPath, JSON.stringify({
      pyodide: pyodide.version, node: process.version, installed, backend: check.backend,
      heap_bytes: { install: bytesAtInstall, end: bytesAtEnd }, correctness: check.results, timing,
    }, null, 2) + '\n');
  }
  process.exit(failed || !installed ? 1 : 0);
}

main().catch((err) => { console.error(err); process.exit(1); });
