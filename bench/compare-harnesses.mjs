// `npm run bench:harnesses`: the evidence behind the bench's choice of harness. Serves the ceiling worker
// (bench/ceiling-worker.mjs) in each of the ways a worker can be run locally on workerd, and measures the same two
// requests through each with the same load (bench/load.mjs): GET /empty (what the harness costs per request) and
// POST /d1-write (one D1 write). Options: --connections N (20), --duration S (8), --warmup S (2), --port P (8830).
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundledModule, childEnv, loadMiniflare, loadWrangler, ROOT, versions, wranglerBin } from './harness.mjs';

const { values: opts } = parseArgs({
  options: {
    connections: { type: 'string', default: '20' },
    duration: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '2' },
    port: { type: 'string', default: '8830' },
  },
});
const PORT = Number(opts.port);
const HOST = '127.0.0.1';
const COMPAT_DATE = '2026-11-01';
const stateRoot = (() => {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
})();
const work = mkdtempSync(join(stateRoot, 'stock-wallet-harnesses-'));
const children = new Set();
const cleanups = [];
process.on('exit', () => {
  for (const child of children) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const ceiling = join(ROOT, 'bench', 'ceiling-worker.mjs');
// wrangler bundles the source itself; Miniflare is given it bundled (it imports from src).
const ceilingModule = await bundledModule(ceiling);
const config = join(work, 'wrangler.toml');
writeFileSync(
  config,
  `name = "bench-ceiling"\nmain = ${JSON.stringify(ceiling)}\ncompatibility_date = "${COMPAT_DATE}"\ncompatibility_flags = ["nodejs_compat"]\n\n` +
    `[[d1_databases]]\nbinding = "DB"\ndatabase_name = "bench"\ndatabase_id = "00000000-0000-0000-0000-00000000beef"\n`,
);

function load(base, method, path) {
  const spec = join(work, `spec-${Date.now()}.json`);
  writeFileSync(
    spec,
    JSON.stringify({ url: base, connections: Number(opts.connections), warmupSeconds: Number(opts.warmup), durationSeconds: Number(opts.duration), requests: [{ method, path }] }),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench', 'load.mjs'), spec], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(err))));
  });
}

async function waitFor(url) {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} never answered`);
}

const harnesses = [
  {
    name: '`wrangler dev` (CLI)',
    async start() {
      const child = spawn(process.execPath, [wranglerBin, 'dev', '--config', config, '--ip', HOST, '--port', String(PORT), '--persist-to', join(work, 'dev'), '--log-level', 'error'], {
        env: childEnv,
        stdio: ['ignore', 'ignore', 'ignore'],
        detached: true, // its own process group: wrangler and its workerd are stopped together
      });
      children.add(child);
      await waitFor(`http://${HOST}:${PORT}/empty`);
      return {
        base: `http://${HOST}:${PORT}`,
        stop: async () => {
          process.kill(-child.pid, 'SIGTERM');
          await new Promise((r) => child.on('exit', r));
          children.delete(child);
        },
      };
    },
  },
  {
    name: "wrangler's `unstable_startWorker` (API)",
    async start() {
      const wrangler = await loadWrangler();
      const worker = await wrangler.unstable_startWorker({
        config,
        dev: { server: { hostname: HOST, port: PORT + 1 }, inspector: false, persist: join(work, 'start'), logLevel: 'error' },
      });
      await worker.ready;
      const url = await worker.url;
      return { base: url.origin, stop: () => worker.dispose() };
    },
  },
  {
    name: 'Miniflare, through its entry worker',
    async start() {
      const { Miniflare, convertV4MiniflareOptions } = await loadMiniflare();
      const mf = new Miniflare(
        convertV4MiniflareOptions({
          host: HOST,
          port: PORT + 2,
          logRequests: false,
          enableDevRegistry: false,
          cf: { colo: 'BENCH' },
          resourcePersistencePath: join(work, 'mf'),
          workers: [{ name: 'ceiling', modules: true, ...ceilingModule, compatibilityDate: COMPAT_DATE, compatibilityFlags: ['nodejs_compat'], d1Databases: { DB: 'bench-db' } }],
        }),
      );
      const url = await mf.ready;
      return { base: url.origin, stop: () => mf.dispose() };
    },
  },
  {
    name: 'Miniflare, direct workerd socket (the bench)',
    async start() {
      const { Miniflare, convertV4MiniflareOptions } = await loadMiniflare();
      const mf = new Miniflare(
        convertV4MiniflareOptions({
          host: HOST,
          port: 0,
          logRequests: false,
          enableDevRegistry: false,
          cf: { colo: 'BENCH' },
          resourcePersistencePath: join(work, 'direct'),
          workers: [
            {
              name: 'ceiling',
              modules: true,
              ...ceilingModule,
              compatibilityDate: COMPAT_DATE,
              compatibilityFlags: ['nodejs_compat'],
              d1Databases: { DB: 'bench-db' },
              unsafeDirectSockets: [{ host: HOST, port: PORT + 3 }],
            },
          ],
        }),
      );
      await mf.ready;
      return { base: `http://${HOST}:${PORT + 3}`, stop: () => mf.dispose() };
    },
  },
];

const v = versions();
console.log(`harness comparison: ceiling worker, ${opts.connections} connections, ${opts.warmup} s warm-up + ${opts.duration} s; state in ${stateRoot}`);
console.log(`Node ${v.node}, wrangler ${v.wrangler}, miniflare ${v.miniflare}, workerd ${v.workerd}\n`);
const rows = [];
for (const h of harnesses) {
  const { base, stop } = await h.start();
  cleanups.push(stop);
  try {
    const empty = await load(base, 'GET', '/empty');
    const write = await load(base, 'POST', '/d1-write');
    rows.push({ name: h.name, empty, write });
    console.log(
      `${h.name.padEnd(46)} GET /empty ${Math.round(empty.rps).toLocaleString('en-US').padStart(7)} req/s (p50 ${empty.latency_ms.p50} ms)` +
        `   POST /d1-write ${Math.round(write.rps).toLocaleString('en-US').padStart(6)} req/s (p50 ${write.latency_ms.p50} ms)   errors ${empty.errors + write.errors}`,
    );
  } finally {
    await stop();
  }
}
console.log('\n| harness | GET /empty req/s | p50 ms | POST /d1-write req/s | p50 ms |\n|---|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.name} | ${Math.round(r.empty.rps).toLocaleString('en-US')} | ${r.empty.latency_ms.p50} | ${Math.round(r.write.rps).toLocaleString('en-US')} | ${r.write.latency_ms.p50} |`);
}
process.exit(0);
