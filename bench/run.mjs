// `npm run bench [-- --quick] [options]`: builds the worker as deployed, runs it on workerd with a local D1 loaded
// with realistic data, drives load from a separate process and reports throughput, latency and D1 round trips per
// case against the ceilings measured in the same run. See bench/README.md.
//
// Options:
//   --quick              small data and seconds per case (what CI runs; results go to bench/results/quick.*)
//   --rtt primary=MS,replica=MS
//                        latency model of a far client: every D1 round trip of the API is delayed by MS (to the
//                        primary, or to a nearby replica for a replica-eligible read); runs the API cases only, one
//                        connection, against latency targets. Results: bench/results/latest-rtt.* (quick: quick-rtt.*)
//   --connections N      concurrent connections per case (default 20; quick 10; --rtt 1)
//   --duration S         measured seconds per case (default 15; quick 2)
//   --warmup S           warm-up seconds per case (default 3; quick 1)
//   --host H, --port P   where the API listens (default 127.0.0.1:8810); the API without cache takes P + 1, the
//                        ceiling worker P + 2, the inspector (--profile, --serve) P + 9
//   --state-dir DIR      where the build and the local D1/cache/rate-limiter state go (default /dev/shm when it
//                        exists, else the system temp dir; see bench/README.md)
//   --cases a,b          only these cases (keys as in the JSON output; `scaling` for the smaller levels); for profiling
//   --var NAME=VALUE     override a worker var for this run (e.g. LOG_REQUESTS=false); for profiling
//   --out NAME           results file stem under bench/results (default latest; quick: quick)
//   --without-ratelimits run the API without its Rate Limiting bindings (the app skips unbound limiters); for profiling
//   --profile            CPU-profile every workerd isolate during each measured run (figures then carry the
//                        profiler's overhead); writes bench/results/<out>.profile.md. Default out: profile
//   --serve              load the data, then keep the workers running (no cases) until interrupted; for poking
//                        around and profiling by hand. API keys of the bench users go to <work dir>/keys.txt
//   --keep               keep the temporary build and database directory (printed at the end)
import { spawn } from 'node:child_process';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { bestsellerCount, loadDrop, loadProducts, loadStockTo, loadUsers, migrate } from './data.mjs';
import { buildWorker, loadWrangler, productionConfig, ROOT, startWorkers, versions } from './harness.mjs';
import { caseHeaders, items, markdownReport, roundTripsText, scalingChart, scalingRows, SCALING_HEADERS, tableRows, targetRows, TARGET_HEADERS, textTable } from './report.mjs';
import { bundleModules, profileMarkdown, startProfiling, summarise } from './profile.mjs';
import { AUDIT_CHECKS } from '../src/services/audit.ts';

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rtt: { type: 'string' },
    connections: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '8810' },
    cases: { type: 'string' },
    var: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'state-dir': { type: 'string' },
    profile: { type: 'boolean', default: false },
    serve: { type: 'boolean', default: false },
    'without-ratelimits': { type: 'boolean', default: false },
  },
});

/** `primary=80,replica=10` → { primary_ms: 80, replica_ms: 10 } */
function parseRtt(text) {
  const model = { primary_ms: null, replica_ms: null };
  for (const part of text.split(',')) {
    const [name, value] = part.split('=');
    const ms = Number(value);
    if (!(`${name}_ms` in model) || value === undefined || !Number.isFinite(ms) || ms < 0) throw new Error(`--rtt ${text}: expected primary=MS,replica=MS`);
    model[`${name}_ms`] = ms;
  }
  if (model.primary_ms === null || model.replica_ms === null) throw new Error(`--rtt ${text}: expected primary=MS,replica=MS`);
  return model;
}

const QUICK = opts.quick;
const LATENCY_MODEL = opts.rtt ? parseRtt(opts.rtt) : null;
const PROFILE = QUICK
  ? { products: 200, users: 50, levels: [1_000, 5_000, 20_000], connections: 10, warmup: 1, duration: 2, drop: { items: 500, buyers: 50 } }
  : { products: 10_000, users: 1_000, levels: [10_000, 100_000, 1_000_000], connections: 20, warmup: 3, duration: 15, drop: { items: 5_000, buyers: 200 } };
// The flash sale runs until the drop is sold out, up to this long (its req/s: ~100 and more on this machine).
const DROP_MAX_SECONDS = 300;
// A far client's latency is measured one request at a time: with many connections the one workerd thread would add
// its queue to every request and measure this machine's capacity, which the throughput cases already do.
const RTT_CONNECTIONS = 1;
const CONNECTIONS = Number(opts.connections ?? (LATENCY_MODEL ? RTT_CONNECTIONS : PROFILE.connections));
// Runs of each scaling point (the best p50 counts); one in quick runs, which only keep the harness from rotting.
const SCALING_ROUNDS = QUICK ? 1 : 2;
const WARMUP = Number(opts.warmup ?? PROFILE.warmup);
const DURATION = Number(opts.duration ?? PROFILE.duration);
const HOST = opts.host;
const API_PORT = Number(opts.port);
const NOCACHE_PORT = API_PORT + 1;
const CEILING_PORT = API_PORT + 2;
const BENCH_RATE_LIMIT = 1_000_000_000; // per 60 s: far above anything this machine can send
const PROFILING = opts.profile;
const OUT = opts.out ?? (PROFILING ? 'profile' : `${QUICK ? 'quick' : 'latest'}${LATENCY_MODEL ? '-rtt' : ''}`);
const INSPECTOR_PORT = API_PORT + 9;
const SERVE = opts.serve;
const ONLY = opts.cases ? new Set(opts.cases.split(',')) : null;
const EXTRA_VARS = Object.fromEntries(opts.var.map((v) => v.split(/=(.*)/s).slice(0, 2)));
// The API's edge cache lifetime (wrangler.toml's, unless --var sets another): the drop with storefronts' target.
const STOCK_CACHE_SECONDS = Number(EXTRA_VARS.STOCK_CACHE_SECONDS ?? 10);
// Upper bound on requests one case can send (warm-up + measured): sizes the lists of distinct users, items, orders.
const MAX_CASE_REQUESTS = Math.ceil(3_000 * (WARMUP + DURATION));
const RESULTS_DIR = join(ROOT, 'bench', 'results');
const LOAD_SCRIPT = join(ROOT, 'bench', 'load.mjs');
const CEILING_SCRIPT = join(ROOT, 'bench', 'ceiling-worker.mjs');
const INSTRUMENTED_ENTRY = join(ROOT, 'bench', 'instrumented-entry.ts');
// What the instrumented entry reads from its vars: the latency model, and statement counts when profiling.
const BENCH_VARS = {
  ...(LATENCY_MODEL ? { BENCH_RTT_PRIMARY_MS: String(LATENCY_MODEL.primary_ms), BENCH_RTT_REPLICA_MS: String(LATENCY_MODEL.replica_ms) } : {}),
  ...(PROFILING ? { BENCH_STATEMENTS: 'true' } : {}),
};
const API = '/api/v2';
// The ceilings (bench/ceiling-worker.mjs): what a route must do at least, alone on the same runtime and database.
const CEILING_LABELS = {
  empty: 'empty worker',
  d1_write: 'bare D1 write',
  d1_read: 'one D1 read',
  cache_hit_stock_size: 'bare cache hit as big as /stock',
  purchase_batch: 'purchase batch qty 1, bare',
};
// Each case's ratio is to the least that route must do: its ceiling.
const CEILING_OF = {
  app_root: 'empty',
  ratelimit: 'empty',
  cache_hit: 'empty',
  empty_stock_size: 'empty',
  stock_hit: 'cache_hit_stock_size',
  stock_miss: 'd1_read',
  stock_id: 'd1_read',
  stock_check: 'd1_read',
  wallet_balance: 'd1_read',
  orders_q1: 'purchase_batch',
  orders_q1_coupon: 'purchase_batch',
  orders_q100: 'd1_write',
  cancel: 'd1_write',
  orders_list: 'd1_read',
  flash_sale: null, // no ceiling: judged on what it sold
  drop_storefronts: null, // judged on /stock reads and against the flash sale
};

function isWritableDir(dir) {
  try {
    accessSync(dir, constants.W_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

const startedAt = Date.now();
const loadavgStart = loadavg().map((n) => Number(n.toFixed(2)));
const children = new Set();
const STATE_ROOT = opts['state-dir'] ?? (isWritableDir('/dev/shm') ? '/dev/shm' : tmpdir());
const work = mkdtempSync(join(STATE_ROOT, 'stock-wallet-bench-'));
let mf = null;
let cleaned = false;

async function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const child of children) child.kill('SIGKILL');
  if (mf) await mf.dispose().catch(() => {});
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
}
// Miniflare's own exit hook may end the process on a signal before the async cleanup is done: this one runs always.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  if (!opts.keep) rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the bench`);
    cleanup().finally(() => process.exit(130));
  });
}

const log = (message) => console.log(message);
const int = (n) => Math.round(n).toLocaleString('en-US');
const secondsSince = (t) => (Date.now() - t) / 1000;

// ---------------------------------------------------------------------------------------------------------------
// Progress bar (a text bar on a terminal, a line every 10% otherwise)

function progress(label) {
  const tty = process.stderr.isTTY;
  let lastStep = -1;
  const started = Date.now();
  return (done, total) => {
    const fraction = total === 0 ? 1 : done / total;
    if (tty) {
      const width = 30;
      const filled = Math.round(fraction * width);
      process.stderr.write(`\r  ${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
      if (done >= total) process.stderr.write(` (${secondsSince(started).toFixed(1)} s)\n`);
    } else {
      const step = Math.floor(fraction * 10);
      if (step !== lastStep) {
        lastStep = step;
        process.stderr.write(`  ${label} ${String(step * 10).padStart(3)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}${done >= total ? ` (${secondsSince(started).toFixed(1)} s)` : ''}\n`);
      }
    }
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Worker logs: the API logs one JSON line per request; the bench counts them per case (cache hits, statuses) and
// keeps the first unexpected errors for the report.

let workerStats = null;
const unexpectedLogs = [];
// GET /stock answered from D1 (a cache miss), whatever case is running: the drop with storefronts reads it.
const STOCK_LIST_ROUTE = /^\/api\/v2\/stock\/?$/;
let stockListReads = 0;
function newWorkerStats() {
  return { logged: 0, cache: {}, statuses: {}, error_logs: [] };
}
function onLog({ level, message }) {
  if (message.startsWith('{')) {
    let line;
    try {
      line = JSON.parse(message);
    } catch {
      line = null;
    }
    if (line?.msg === 'request') {
      if (line.cache === 'miss' && STOCK_LIST_ROUTE.test(line.route)) stockListReads++;
      if (!workerStats) return;
      workerStats.logged++;
      if (line.cache) workerStats.cache[line.cache] = (workerStats.cache[line.cache] ?? 0) + 1;
      workerStats.statuses[line.status] = (workerStats.statuses[line.status] ?? 0) + 1;
      return;
    }
    if (line?.level === 'error') {
      if (workerStats && workerStats.error_logs.length < 3) workerStats.error_logs.push(line);
      else if (unexpectedLogs.length < 10) unexpectedLogs.push(line);
      return;
    }
  }
  if ((level === 'error' || level === 'warn') && unexpectedLogs.length < 10) unexpectedLogs.push({ level, message: message.slice(0, 500) });
}

// ---------------------------------------------------------------------------------------------------------------
// Cases

/** Run one case through bench/load.mjs in its own process; worker-side stats cover the measured run only. */
// CPU accounting from /proc (Linux): what workerd (all its threads) and the whole machine spent during a measured run,
// so each case also reports workerd CPU per request (robust to a busy machine) and how much CPU other processes took.
let workerdPid;
function findWorkerd() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const m = /^\d+ \((.*)\) \S (\d+)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (m && m[1] === 'workerd' && Number(m[2]) === process.pid) return Number(entry);
    } catch {
      // process gone
    }
  }
  return null;
}
function cpuSnapshot() {
  try {
    workerdPid ??= findWorkerd();
    const stat = readFileSync(`/proc/${workerdPid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const [, ...cpu] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    const idle = cpu[3] + cpu[4];
    return { workerd: Number(fields[11]) + Number(fields[12]), total, idle, steal: cpu[7] ?? 0, at: Date.now() };
  } catch {
    return null;
  }
}
function cpuBetween(a, b, requests, ownMs) {
  if (!a || !b) return null;
  const tick = 10; // ms per clock tick (USER_HZ = 100)
  const wall = b.at - a.at;
  // busy = all non-idle time summed over cores, less steal (time the hypervisor gave to other machines)
  const stealMs = (b.steal - a.steal) * tick;
  const machineBusyMs = (b.total - a.total - (b.idle - a.idle)) * tick - stealMs;
  const workerdMs = (b.workerd - a.workerd) * tick;
  return {
    workerd_cpu_ms: workerdMs,
    workerd_cpu_us_per_request: requests ? (workerdMs * 1000) / requests : null,
    workerd_cores: workerdMs / wall,
    load_generator_cores: ownMs === null ? null : ownMs / wall,
    // everything else on the machine (other processes, the bench's own Node process): the noise of this run
    other_cores: Math.max(0, (machineBusyMs - workerdMs - (ownMs ?? 0)) / wall),
    // CPU the hypervisor took away from this VM meanwhile
    steal_cores: stealMs / wall,
  };
}

const profiles = [];
let moduleOfLine = null;
let profiledTarget = {};
let profiledCeiling = null;
// The API workers (with and without the Cache API): served through bench/instrumented-entry.ts, they count D1 round trips.
let roundTripBases = new Set();

/** The API's D1 round trips since the last call (the call resets them), from bench/instrumented-entry.ts. */
const roundTrips = async (base) => (await fetch(`${base}/__bench/round-trips`)).json();

function runLoad(name, base, requests, { consume = false, expectedStatus, soldOutStatus, maxRequests, connections = CONNECTIONS, warmup = WARMUP, duration = DURATION } = {}) {
  const specFile = join(work, `case-${name.replace(/[^a-z0-9]+/gi, '_')}.json`);
  writeFileSync(specFile, JSON.stringify({ url: base, connections, warmupSeconds: warmup, durationSeconds: duration, consume, expectedStatus, soldOutStatus, maxRequests, requests }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, specFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const killer = setTimeout(() => child.kill('SIGKILL'), (warmup + duration + 120) * 1000);
    let stdout = '';
    let stderr = '';
    workerStats = newWorkerStats();
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('warmup done\n') && !child.measuring) {
        child.measuring = true;
        workerStats = newWorkerStats();
        child.cpuStart = cpuSnapshot();
        if (roundTripBases.has(base)) child.roundTripsReset = roundTrips(base); // drop the warm-up's
        if (PROFILING) {
          child.profiling = startProfiling(INSPECTOR_PORT);
          if (base !== profiledCeiling) fetch(`${base}/__bench/statements`).catch(() => {}); // reset the warm-up's counts
        }
      }
    });
    child.on('exit', async (code, signal) => {
      const cpuEnd = cpuSnapshot();
      clearTimeout(killer);
      children.delete(child);
      const stats = workerStats;
      workerStats = null;
      if (code !== 0) return reject(new Error(`load for ${name} failed (${signal ?? `exit ${code}`}):\n${stderr.slice(-3000)}`));
      const parsed = JSON.parse(stdout.trim().split('\n').pop());
      const result = { ...parsed, worker: stats, cpu: cpuBetween(child.cpuStart, cpuEnd, parsed.requests, parsed.load_generator_cpu_ms ?? null) };
      if (child.roundTripsReset) {
        try {
          await child.roundTripsReset;
          result.round_trips = await roundTrips(base);
        } catch (err) {
          return reject(err);
        }
      }
      if (child.profiling) {
        try {
          const stop = await child.profiling;
          const summary = summarise(await stop(), result.requests, moduleOfLine, profiledTarget[base], result.cpu?.workerd_cpu_us_per_request ?? null);
          if (base !== profiledCeiling) summary.d1 = await (await fetch(`${base}/__bench/statements`)).json();
          profiles.push({ name, summary, wall_s: result.duration_s });
        } catch (err) {
          return reject(err);
        }
      }
      resolve(result);
    });
  });
}

const fmt = (r) =>
  `${Math.round(r.rps).toLocaleString('en-US').padStart(7)} req/s  p50 ${String(r.latency_ms.p50).padStart(4)} ms  p99 ${String(r.latency_ms.p99).padStart(4)} ms  errors ${r.errors}` +
  (r.round_trips ? `  D1 ${roundTripsText(r.round_trips)}` : '') +
  (r.cpu ? `  workerd ${Math.round(r.cpu.workerd_cpu_us_per_request)} µs/req (${r.cpu.workerd_cores.toFixed(2)} cores), client ${r.cpu.load_generator_cores?.toFixed(2)}, others ${r.cpu.other_cores.toFixed(2)}, steal ${r.cpu.steal_cores.toFixed(2)}` : '') +
  (r.stopped_early ? '  (list used up: stopped early)' : '');

async function measure(name, base, requests, options) {
  process.stderr.write(`  ${name.padEnd(44)}`);
  const result = await runLoad(name, base, requests, options);
  process.stderr.write(`${fmt(result)}\n`);
  return { name, ...result };
}

/**
 * The flash sale: `buyers` connections buy quantity 1 of one new product of `items` items (the users in turn) until it
 * is sold out: `items + buyers` requests in all, so every connection meets the sold-out answer and every answer, the
 * last purchases' too, is counted. Then the database says what was sold.
 */
async function dropSale(db, base, keys) {
  const { items, buyers } = PROFILE.drop;
  const productId = await loadDrop(db, items);
  const requests = keys.map((key) => ({ method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity: 1 } }));
  const name = `flash sale: ${items.toLocaleString('en-US')} items, ${buyers} buyers`;
  const result = await measure(name, base, requests, { soldOutStatus: 400, maxRequests: items + buyers, connections: buyers, warmup: 0, duration: DROP_MAX_SECONDS });
  const state = await dropState(db, productId);
  return { ...result, drop: dropOutcome(result, state, { productId, items, buyers }) };
}

/** The drop's product as the database has it after the sale. */
function dropState(db, productId) {
  return db
    .prepare(
      `SELECT (SELECT count(*) FROM stock_items WHERE product_id = ?1 AND status = 'sold') AS items_sold,
              (SELECT count(*) FROM stock_items WHERE product_id = ?1 AND status = 'available') AS items_available,
              (SELECT stock_count FROM products WHERE id = ?1) AS stock_count,
              (SELECT count(*) FROM orders WHERE product_id = ?1) AS orders,
              (SELECT coalesce(sum(quantity), 0) FROM orders WHERE product_id = ?1) AS quantity_ordered`,
    )
    .bind(productId)
    .first();
}

/** What a drop sold, from its answers and the database: bought, oversold, 5xx (logged). */
function dropOutcome(result, state, { productId, items, buyers }) {
  const bought = result.statuses['201'] ?? 0;
  const serverErrors = Object.entries(result.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0);
  const oversold = Math.max(0, bought - items, state.quantity_ordered - items, state.items_sold - items);
  log(`    ${result.requests} requests in ${result.duration_s} s: ${bought} bought, ${state.items_sold} items sold, ${state.quantity_ordered} ordered in ${state.orders} orders, stock_count ${state.stock_count}, ${result.sold_out_responses} sold-out answers, ${oversold} oversold, ${serverErrors} 5xx`);
  return { product_id: productId, items, buyers, bought, ...state, sold_out_responses: result.sold_out_responses, oversold, server_errors: serverErrors };
}

const STOREFRONT_POLLERS = 50;

/**
 * The drop with storefronts: the flash sale again (a new product of the same size), while STOREFRONT_POLLERS more
 * connections poll GET /stock as storefronts do during a drop. A sale purges only the sold product's entries, so the
 * list should stay a cache hit: D1 reads of /stock at most one per STOCK_CACHE_SECONDS (this location), and the
 * purchases about as fast as the flash sale without pollers (`plain`, run first when this case runs alone).
 */
async function dropWithStorefronts(db, base, keys, plain) {
  const { items, buyers } = PROFILE.drop;
  const baseline = plain ?? (await dropSale(db, base, keys));
  const productId = await loadDrop(db, items);
  const requests = keys.map((key) => ({ method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity: 1 } }));
  // The pollers outlast the drop (it sold out in `baseline.duration_s` without them); only the drop's seconds count.
  const pollers = runLoad('storefront pollers', base, [{ method: 'GET', path: `${API}/stock` }], {
    connections: STOREFRONT_POLLERS,
    warmup: 0,
    duration: Math.ceil(baseline.duration_s * 2) + 2,
  });
  const readsBefore = stockListReads;
  const name = `drop with storefronts: ${items.toLocaleString('en-US')} items, ${buyers} buyers, ${STOREFRONT_POLLERS} polling /stock`;
  const sale = await measure(name, base, requests, { soldOutStatus: 400, maxRequests: items + buyers, connections: buyers, warmup: 0, duration: DROP_MAX_SECONDS });
  const stockReads = stockListReads - readsBefore;
  const polled = await pollers;
  const drop = dropOutcome(sale, await dropState(db, productId), { productId, items, buyers });
  const storefronts = {
    pollers: STOREFRONT_POLLERS,
    polls: polled.requests,
    poll_rps: polled.rps,
    poll_errors: polled.errors,
    poll_server_errors: Object.entries(polled.statuses).reduce((n, [status, count]) => n + (Number(status) >= 500 ? count : 0), 0),
    stock_reads: stockReads,
    stock_reads_per_s: stockReads / sale.duration_s,
    stock_cache_seconds: STOCK_CACHE_SECONDS,
    baseline_rps: baseline.rps,
    throughput_ratio: sale.rps / baseline.rps,
  };
  log(`    /stock: ${polled.requests} polls (${Math.round(polled.rps)} req/s), ${stockReads} read from D1 in ${sale.duration_s} s (${storefronts.stock_reads_per_s.toFixed(2)}/s); purchases ${Math.round(sale.rps)} req/s vs ${Math.round(baseline.rps)} without pollers (${storefronts.throughput_ratio.toFixed(2)}×)`);
  return { ...sale, storefront_drop: { ...drop, ...storefronts } };
}

async function main() {
  const v = versions();
  log(`stock-wallet-api bench (${QUICK ? 'quick' : 'full'}): ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per case`);
  if (LATENCY_MODEL) log(`  latency model: every D1 round trip of the API delayed by ${LATENCY_MODEL.primary_ms} ms to the primary, ${LATENCY_MODEL.replica_ms} ms to a replica`);
  log(`  Node ${v.node}, wrangler ${v.wrangler}, miniflare ${v.miniflare}, workerd ${v.workerd}; work dir ${work}`);

  // Build and start ------------------------------------------------------------------------------------------------
  let t = Date.now();
  // The app is served through bench/instrumented-entry.ts: its D1 binding counts round trips (and may delay them).
  const apiScript = await buildWorker(join(work, 'build'), children, INSTRUMENTED_ENTRY, PROFILING);
  log(`  built the production bundle behind bench/instrumented-entry.ts (wrangler deploy --dry-run) in ${secondsSince(t).toFixed(1)} s`);
  const config = await productionConfig(BENCH_RATE_LIMIT);
  t = Date.now();
  mf = await startWorkers({
    apiScript,
    ceilingScript: CEILING_SCRIPT,
    config,
    host: HOST,
    apiPort: API_PORT,
    noCachePort: NOCACHE_PORT,
    ceilingPort: CEILING_PORT,
    persistDir: join(work, 'state'),
    onLog,
    extraVars: { ...EXTRA_VARS, ...BENCH_VARS },
    ratelimits: !opts['without-ratelimits'],
    ...(PROFILING || SERVE ? { inspectorPort: INSPECTOR_PORT } : {}),
  });
  if (PROFILING) moduleOfLine = bundleModules(apiScript);
  const apiBase = `http://${HOST}:${API_PORT}`;
  const noCacheBase = `http://${HOST}:${NOCACHE_PORT}`;
  const ceilingBase = `http://${HOST}:${CEILING_PORT}`;
  profiledTarget = { [apiBase]: 'core:user:api', [noCacheBase]: 'core:user:api-nocache', [ceilingBase]: 'core:user:ceiling' };
  profiledCeiling = ceilingBase;
  roundTripBases = new Set([apiBase, noCacheBase]);
  log(`  workerd up in ${secondsSince(t).toFixed(1)} s: API on ${apiBase} (without Cache API on ${noCacheBase}), ceiling worker on ${ceilingBase}; one local D1 in ${work}`);
  const db = await mf.getD1Database(config.d1Binding, 'api');

  // Load -----------------------------------------------------------------------------------------------------------
  const loadStarted = Date.now();
  const wrangler = await loadWrangler();
  const migrations = await migrate(db, config.migrationsDir, wrangler.unstable_splitSqlQuery);
  log(`  applied ${migrations.length} migrations`);
  const keys = await loadUsers(db, PROFILE.users, progress('users   '));
  await loadProducts(db, PROFILE.products, progress('products'));
  let loadSeconds = secondsSince(loadStarted);

  const keyHash = (key) => createHash('sha256').update(key).digest('hex');
  // Purchases that can all succeed; `bare`: the same purchases as the ceiling worker's bare batch (key given by its hash).
  const purchaseRequests = async (quantity, { bare = false } = {}) => {
    const { results } = await db
      .prepare('SELECT id, stock_count FROM products WHERE active = 1 AND stock_count >= ?1 ORDER BY id')
      .bind(quantity)
      .all();
    // Round-robin over the products (lap after lap), so consecutive purchases hit different products, each user in
    // turn; every entry is bought once, so no request can run out of stock.
    const productIds = [];
    for (let lap = 0; productIds.length < MAX_CASE_REQUESTS; lap++) {
      const before = productIds.length;
      for (const p of results) {
        if (Math.floor(p.stock_count / quantity) > lap) productIds.push(p.id);
        if (productIds.length >= MAX_CASE_REQUESTS) break;
      }
      if (productIds.length === before) break;
    }
    return productIds.map((productId, i) => {
      const key = keys[i % keys.length];
      return bare
        ? { method: 'POST', path: '/purchase-batch', body: { key_hash: keyHash(key), product_id: productId, quantity } }
        : { method: 'POST', path: `${API}/orders`, headers: { 'X-API-Key': key }, body: { product_id: productId, quantity } };
    });
  };
  const cancelRequests = async () => {
    const { results } = await db
      .prepare(`SELECT id, user_id FROM orders WHERE status = 'pending' AND quantity = 1 ORDER BY id LIMIT ?1`)
      .bind(MAX_CASE_REQUESTS)
      .all();
    return results.map((o) => ({ method: 'POST', path: `${API}/orders/${o.id}/cancel`, headers: { 'X-API-Key': keys[o.user_id - 1] } }));
  };
  const byUser = (method, path) => keys.map((key) => ({ method, path, headers: { 'X-API-Key': key } }));
  // Dashboard sign-in of each bench user in turn (bench/data.mjs gives them all this password), a same-origin form.
  const signInRequests = () =>
    keys.map((_, i) => ({
      method: 'POST',
      path: '/dashboard/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: apiBase },
      body: new URLSearchParams({ email: `bench-user-${i + 1}@example.com`, password: 'bench-password' }).toString(),
    }));
  const stockMiss = [{ method: 'GET', path: `${API}/stock` }];

  if (SERVE) {
    for (const level of PROFILE.levels) await loadStockTo(db, level, PROFILE.products, progress(`stock ${items(level).padEnd(4)}`));
    writeFileSync(join(work, 'keys.txt'), `${keys.join('\n')}\n`);
    log(`\nserving until interrupted: API ${apiBase}, API without cache ${noCacheBase}, ceiling ${ceilingBase}, inspector 127.0.0.1:${INSPECTOR_PORT}`);
    log(`API keys of users 1..${keys.length}: ${join(work, 'keys.txt')}`);
    await new Promise(() => {});
  }

  const scaling = [];
  const cases = [];
  let flashSale = null;
  const ceilings = Object.fromEntries(Object.keys(CEILING_LABELS).map((key) => [key, []]));
  const levels = PROFILE.levels;
  const runCase = async (name, fn) => {
    if (ONLY && !ONLY.has(name)) return null;
    const result = await fn();
    cases.push({ ...result, key: name });
    return result;
  };
  // Reference rows and ceilings measure the worker on this machine: no far client sees them, so --rtt skips them.
  const reference = (name, fn) => (LATENCY_MODEL ? null : runCase(name, fn));
  const runCeiling = async (key, when, requests, options) => {
    if (LATENCY_MODEL || (ONLY && !ONLY.has(key))) return;
    ceilings[key].push(await measure(`ceiling: ${CEILING_LABELS[key]} (${when})`, ceilingBase, await requests(), options));
  };
  // A target's ceiling runs right before and right after its case, so the ratio compares runs a few seconds apart on
  // a machine whose speed drifts.
  const bracketed = async ([key, requests, options], name, fn) => {
    await runCeiling(key, 'before', requests, options);
    const result = await runCase(name, fn);
    await runCeiling(key, 'after', requests, options);
    return result;
  };
  const get = (path) => async () => [{ method: 'GET', path }];

  for (const [index, level] of levels.entries()) {
    t = Date.now();
    const added = await loadStockTo(db, level, PROFILE.products, progress(`stock ${items(level).padEnd(4)}`));
    loadSeconds += secondsSince(t);
    log(`\n${items(level)} stock items (${added.toLocaleString('en-US')} added; bestsellers: products 1-${bestsellerCount(PROFILE.products)})`);
    const final = index === levels.length - 1;
    if (!final) {
      if (LATENCY_MODEL || (ONLY && !ONLY.has('scaling'))) continue;
      const stock = [];
      const purchase = [];
      for (let round = 1; round <= SCALING_ROUNDS; round++) {
        stock.push(await measure(`GET /stock (miss) @${items(level)} #${round}`, noCacheBase, stockMiss));
        purchase.push(await measure(`POST /orders qty 1 @${items(level)} #${round}`, apiBase, await purchaseRequests(1), { consume: true }));
      }
      scaling.push({ stock_items: level, stock, purchase });
      continue;
    }
    const runtimeCeilings = async (when) => {
      await runCeiling('empty', when, get('/empty'));
      await runCeiling('d1_write', when, async () => [{ method: 'POST', path: '/d1-write' }]);
    };
    await runtimeCeilings('before');
    // Reference rows (no target): the primitives the routes are made of, each alone, on the same runtime.
    await reference('app_root', () => measure('ref: GET /api/v2 (app, no D1)', apiBase, [{ method: 'GET', path: API }]));
    await reference('ratelimit', () => measure('ref: one rate-limiter call', ceilingBase, [{ method: 'GET', path: '/ratelimit' }]));
    await reference('cache_hit', () => measure('ref: one Cache API hit', ceilingBase, [{ method: 'GET', path: '/cache-hit' }]));
    await reference('pbkdf2', () => measure('ref: one PBKDF2 (100,000 iterations)', ceilingBase, [{ method: 'GET', path: '/pbkdf2' }]));
    const stockBytes = (await (await fetch(`${apiBase}${API}/stock`)).arrayBuffer()).byteLength;
    await reference('empty_stock_size', () => measure(`ref: empty worker, ${(stockBytes / 1024).toFixed(0)} KB body`, ceilingBase, [{ method: 'GET', path: `/empty?bytes=${stockBytes}` }]));
    await bracketed(['cache_hit_stock_size', get(`/cache-hit?bytes=${stockBytes}`)], 'stock_hit', () =>
      measure('GET /stock (cache hit)', apiBase, [{ method: 'GET', path: `${API}/stock` }]),
    );
    // Misses go to the same API with the Cache API off: each request reads D1, as a miss does.
    const stockMissFinal = await runCase('stock_miss', () => measure('GET /stock (cache miss)', noCacheBase, stockMiss));
    const products = PROFILE.products;
    await runCase('stock_id', () => measure('GET /stock/{id} (cache miss)', noCacheBase, [{ method: 'GET', path: `${API}/stock/{ids:1:${products}}` }]));
    await runCase('stock_check', () => measure('GET /stock/check 50 ids (miss)', noCacheBase, [{ method: 'GET', path: `${API}/stock/check?ids={ids:50:${products}}` }]));
    await bracketed(['d1_read', get('/d1-read')], 'wallet_balance', () => measure('GET /wallet/balance', apiBase, byUser('GET', `${API}/wallet/balance`)));
    const q1 = await bracketed(['purchase_batch', () => purchaseRequests(1, { bare: true }), { consume: true }], 'orders_q1', async () =>
      measure('POST /orders qty 1', apiBase, await purchaseRequests(1), { consume: true }),
    );
    // The same purchases with a 10 % coupon (no limits: a campaign code): priced in the same one batch.
    await runCase('orders_q1_coupon', async () => {
      await db.prepare(`INSERT OR IGNORE INTO coupons (code, percent_off, max_per_user, active, created_at, updated_at)
                        VALUES ('BENCH-10', 10, NULL, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`).run();
      const requests = (await purchaseRequests(1)).map((r) => ({ ...r, body: { ...r.body, coupon: 'bench-10' } }));
      const withCoupon = await measure('POST /orders qty 1 with a coupon', apiBase, requests, { consume: true });
      // The same purchases without it again, right after: a later run is slower (the database grows, the stock of the
      // bestsellers falls: 0.92x with no coupon at all), so the coupon is compared with the mean of before and after.
      const after = await measure('POST /orders qty 1 (again, after the coupon case)', apiBase, await purchaseRequests(1), { consume: true });
      return { ...withCoupon, without_coupon_after_rps: after.rps };
    });
    await runCase('orders_q100', async () => measure('POST /orders qty 100', apiBase, await purchaseRequests(100), { consume: true }));
    await runCase('cancel', async () => measure('POST /orders/{id}/cancel', apiBase, await cancelRequests(), { consume: true }));
    await runCase('orders_list', () => measure('GET /orders', apiBase, byUser('GET', `${API}/orders`)));
    await runCase('sign_in', () => measure('POST /dashboard/sign-in (303)', apiBase, signInRequests(), { expectedStatus: 303 }));
    await runtimeCeilings('after');
    if (stockMissFinal && q1 && !LATENCY_MODEL) {
      const stock = [stockMissFinal];
      const purchase = [q1];
      for (let round = 2; round <= SCALING_ROUNDS; round++) {
        stock.push(await measure(`GET /stock (miss) @${items(level)} #${round}`, noCacheBase, stockMiss));
        purchase.push(await measure(`POST /orders qty 1 @${items(level)} #${round}`, apiBase, await purchaseRequests(1), { consume: true }));
      }
      scaling.push({ stock_items: level, stock, purchase });
    }
    // Last: the drop adds a product and thousands of orders that the cases above should not see.
    if (!LATENCY_MODEL) flashSale = await runCase('flash_sale', () => dropSale(db, apiBase, keys));
    // The same drop while storefronts poll the catalogue (after the flash sale: it compares with it).
    if (!LATENCY_MODEL) await runCase('drop_storefronts', () => dropWithStorefronts(db, apiBase, keys, flashSale));
  }

  // Audit: the bench's data and every purchase and cancel under load kept the ledger consistent -------------------
  t = Date.now();
  const failed = [];
  for (const check of AUDIT_CHECKS) {
    const { results } = await db.prepare(check.sql).all();
    if (results.length > 0) failed.push(`${check.name} (${results.length} rows)`);
  }
  log(`\nledger audit (${AUDIT_CHECKS.length} checks, ${secondsSince(t).toFixed(1)} s): ${failed.length === 0 ? 'ok' : failed.join('; ')}`);

  // Report ---------------------------------------------------------------------------------------------------------
  const average = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);
  const mean = (runs) => average(runs.map((r) => r.rps));
  const ceilingRps = Object.fromEntries(Object.entries(ceilings).map(([key, runs]) => [key, mean(runs)]));
  // Before/after disagreement of a ceiling: how much the machine itself moved during the run (a shared VM does).
  const drift = (runs) => (runs.length === 2 ? Math.abs(runs[0].rps - runs[1].rps) / ((runs[0].rps + runs[1].rps) / 2) : null);
  const ceilingDrift = Object.fromEntries(Object.entries(ceilings).map(([key, runs]) => [key, drift(runs)]));
  const shape = (r, key, ceiling) => ({
    key,
    name: r.name,
    rps: r.rps,
    requests: r.requests,
    duration_s: r.duration_s,
    latency_ms: r.latency_ms,
    errors: r.errors,
    statuses: r.statuses,
    error_samples: r.error_samples,
    stopped_early: r.stopped_early,
    worker: r.worker,
    round_trips: r.round_trips ?? null,
    cpu: r.cpu,
    ...(r.drop ? { drop: r.drop } : {}),
    ...(r.storefront_drop ? { storefront_drop: r.storefront_drop } : {}),
    ...(r.without_coupon_after_rps ? { without_coupon_after_rps: r.without_coupon_after_rps } : {}),
    ceiling: ceiling && ceilingRps[ceiling] ? CEILING_LABELS[ceiling] : null,
    ratio: ceiling && ceilingRps[ceiling] ? r.rps / ceilingRps[ceiling] : null,
  });
  const allCases = [
    ...Object.entries(ceilings).flatMap(([key, runs]) => runs.map((r) => shape(r, key, key))),
    ...cases.map((r) => shape(r, r.key, CEILING_OF[r.key])),
  ];
  const order = [...Object.keys(CEILING_LABELS), ...Object.keys(CEILING_OF)];
  const rank = (key) => (order.includes(key) ? order.indexOf(key) : order.length); // cases without a ceiling last
  allCases.sort((a, b) => rank(a.key) - rank(b.key));
  const byKey = Object.fromEntries(allCases.map((c) => [c.key, c]));

  // Each scaling point is the best (lowest p50) of its rounds: interference from a shared machine only ever adds
  // latency, so the best round is the one closest to what the code itself costs.
  const best = (runs) => runs.reduce((a, b) => (b.latency_ms.p50 < a.latency_ms.p50 ? b : a));
  for (const point of scaling) {
    point.rounds = { stock_p50: point.stock.map((r) => r.latency_ms.p50), purchase_p50: point.purchase.map((r) => r.latency_ms.p50) };
    point.stock = best(point.stock);
    point.purchase = best(point.purchase);
  }
  const first = scaling[0];
  const last = scaling[scaling.length - 1];
  const targets = [];
  // Judged on req/s; the same ratio in workerd CPU per request (ceiling / case) follows it, because throughput is
  // 1 / CPU per request when workerd's thread is saturated, and it moves less when other processes take the machine.
  const cpuPerRequest = (runs) => (runs.every((r) => r.cpu) ? average(runs.map((r) => r.cpu.workerd_cpu_us_per_request)) : null);
  const ratioTarget = (key, min, ceilingKey = CEILING_OF[key]) => {
    const c = byKey[key];
    const ceiling = ceilingRps[ceilingKey];
    if (!c || !ceiling || LATENCY_MODEL) return;
    const ratio = c.rps / ceiling;
    const ceilingCpu = cpuPerRequest(ceilings[ceilingKey]);
    const caseCpu = c.cpu?.workerd_cpu_us_per_request;
    const byCpu = caseCpu && ceilingCpu ? `; by CPU ${(ceilingCpu / caseCpu).toFixed(2)}× (${Math.round(caseCpu)} vs ${Math.round(ceilingCpu)} µs/req)` : '';
    const measured = `${ratio.toFixed(2)}× (${Math.round(c.rps)} vs ${Math.round(ceiling)} req/s)${byCpu}`;
    targets.push({ name: `${c.name} vs ${CEILING_LABELS[ceilingKey]}`, wanted: `≥ ${min.toFixed(2)}×`, measured, met: ratio >= min });
  };
  ratioTarget('wallet_balance', 0.8);
  ratioTarget('orders_q1', 0.8);
  // A coupon costs no extra round trip: within 10 % of the same purchase without one.
  if (byKey.orders_q1_coupon && byKey.orders_q1 && !LATENCY_MODEL) {
    const without = (byKey.orders_q1.rps + (byKey.orders_q1_coupon.without_coupon_after_rps ?? byKey.orders_q1.rps)) / 2;
    const ratio = byKey.orders_q1_coupon.rps / without;
    const measured = `${ratio.toFixed(2)}× (${Math.round(byKey.orders_q1_coupon.rps)} vs ${Math.round(without)} req/s, the mean of before and after)`;
    targets.push({ name: 'POST /orders qty 1 with a coupon vs without', wanted: '≥ 0.90×', measured, met: ratio >= 0.9 });
  }
  ratioTarget('stock_hit', 0.8);
  // Issue 17: the catalogue rendered by SQLite, bulk checks, packs of 100.
  ratioTarget('stock_miss', 0.3, 'cache_hit_stock_size');
  const cpuTarget = (key, maxUs) => {
    const cpu = byKey[key]?.cpu?.workerd_cpu_us_per_request;
    if (!cpu || LATENCY_MODEL) return;
    targets.push({ name: `${byKey[key].name}: workerd CPU per request`, wanted: `≤ ${int(maxUs)} µs`, measured: `${int(cpu)} µs`, met: cpu <= maxUs });
  };
  cpuTarget('stock_miss', 15_000);
  ratioTarget('stock_check', 0.5);
  ratioTarget('orders_q100', 0.3);
  // Under the latency model: p50 as a far client sees it (one replica round trip for a GET, one primary round trip
  // for a purchase, none for a cache hit, plus the worker's own time), split into the modelled network time of the
  // case's mean round trips and the rest (the worker, and this machine).
  const latencyTarget = (key, maxMs) => {
    const c = byKey[key];
    if (!LATENCY_MODEL || !c?.round_trips) return;
    const { trips, to_primary: toPrimary, requests } = c.round_trips;
    const networkMs = (toPrimary * LATENCY_MODEL.primary_ms + (trips - toPrimary) * LATENCY_MODEL.replica_ms) / requests;
    const rest = c.latency_ms.p50 - networkMs;
    const measured = `${c.latency_ms.p50} ms = ${Math.round(networkMs)} network + ${Math.round(rest)} worker (p99 ${c.latency_ms.p99} ms)`;
    targets.push({ name: `${c.name} p50, far client`, wanted: `≤ ${maxMs} ms`, measured, met: c.latency_ms.p50 <= maxMs });
  };
  for (const key of ['wallet_balance', 'orders_list']) latencyTarget(key, 15); // the authenticated GETs
  latencyTarget('orders_q1', 100);
  latencyTarget('orders_q100', 100);
  latencyTarget('stock_hit', 5);
  const drop = byKey.flash_sale?.drop;
  if (drop) {
    const exact = drop.bought === drop.items && drop.items_sold === drop.items && drop.quantity_ordered === drop.items && drop.stock_count === 0 && drop.items_available === 0;
    targets.push({
      name: `flash sale: ${int(drop.items)} items, ${drop.buyers} buyers, until sold out`,
      wanted: `${int(drop.items)} sold, 0 oversold, 0 5xx, audit clean`,
      measured: `${int(drop.bought)} bought (${int(drop.items_sold)} items sold, ${int(drop.quantity_ordered)} ordered, ${int(drop.items_available)} left), ${drop.oversold} oversold, ${drop.server_errors} 5xx, audit ${failed.length === 0 ? 'clean' : 'FAILED'}`,
      met: exact && drop.oversold === 0 && drop.server_errors === 0 && failed.length === 0,
    });
  }
  const storefronts = byKey.drop_storefronts?.storefront_drop;
  if (storefronts) {
    const s = storefronts;
    const readsWanted = 1 / s.stock_cache_seconds;
    targets.push({
      name: `drop with storefronts: D1 reads of /stock while ${s.pollers} connections poll it`,
      wanted: `≤ ${readsWanted.toFixed(2)}/s (one per STOCK_CACHE_SECONDS)`,
      measured: `${s.stock_reads} in ${byKey.drop_storefronts.duration_s} s (${s.stock_reads_per_s.toFixed(2)}/s) of ${int(s.polls)} polls`,
      // The first poll of the run may find the cache empty: one read more than the seconds allow is the same rate.
      met: s.stock_reads <= Math.ceil(byKey.drop_storefronts.duration_s * readsWanted) + 1,
    });
    targets.push({
      name: 'drop with storefronts: purchases vs the flash sale without pollers',
      wanted: '≥ 0.90×, 0 oversold, 0 5xx',
      measured: `${s.throughput_ratio.toFixed(2)}× (${int(byKey.drop_storefronts.rps)} vs ${int(s.baseline_rps)} req/s), ${s.oversold} oversold, ${s.server_errors + s.poll_server_errors} 5xx`,
      met: s.throughput_ratio >= 0.9 && s.oversold === 0 && s.server_errors === 0 && s.poll_server_errors === 0,
    });
  }
  const totalErrors = allCases.reduce((s, c) => s + c.errors, 0) + scaling.slice(0, -1).reduce((s, l) => s + l.stock.errors + l.purchase.errors, 0);
  const withErrors = allCases.filter((c) => c.errors > 0).map((c) => `${c.name}: ${c.errors}`);
  targets.push({ name: 'zero errors under load', wanted: '0', measured: `${totalErrors}${withErrors.length ? ` (${withErrors.join(', ')})` : ''}`, met: totalErrors === 0 });
  if (first && last && first !== last) {
    for (const [label, key] of [['POST /orders qty 1', 'purchase'], ['GET /stock (miss)', 'stock']]) {
      const r = last[key].latency_ms.p50 / first[key].latency_ms.p50;
      targets.push({
        name: `${label} p50 at ${items(last.stock_items)} vs ${items(first.stock_items)} items`,
        wanted: '≤ 1.20×',
        measured: `${r.toFixed(2)}× (${last[key].latency_ms.p50} vs ${first[key].latency_ms.p50} ms)`,
        met: r <= 1.2,
      });
    }
  }

  mkdirSync(RESULTS_DIR, { recursive: true });
  const files = { json: `${OUT}.json`, markdown: `${OUT}.md`, ...(scaling.length > 1 ? { chart: `${OUT}.svg` } : {}) };
  const cpuModel = (readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m) ?? [])[1] ?? cpus()[0]?.model ?? 'unknown';
  const results = {
    mode: QUICK ? 'quick' : 'full',
    started_at: new Date(startedAt).toISOString(),
    finished_at: new Date().toISOString(),
    elapsed_s: secondsSince(startedAt),
    load_s: loadSeconds,
    harness:
      `production bundle (wrangler deploy --dry-run) behind bench/instrumented-entry.ts (D1 round trips counted${LATENCY_MODEL ? ' and delayed by the latency model' : ''}) on workerd via wrangler's Miniflare; API, API without Cache API and ceiling worker on direct workerd sockets (no proxy); one local D1, cache and rate-limiter state in ${STATE_ROOT}`,
    machine: {
      cpu_model: cpuModel,
      cpus: cpus().length,
      memory_gib: Math.round(totalmem() / 2 ** 30),
      os: `${type()} ${release()}`,
      loadavg_start: loadavgStart,
      loadavg_end: loadavg().map((n) => Number(n.toFixed(2))),
    },
    versions: { node: v.node, wrangler: v.wrangler, miniflare: v.miniflare, workerd: v.workerd },
    config: {
      latency_model: LATENCY_MODEL,
      products: PROFILE.products,
      users: PROFILE.users,
      levels,
      connections: CONNECTIONS,
      warmup_s: WARMUP,
      duration_s: DURATION,
      bench_rate_limit: BENCH_RATE_LIMIT,
      production_rate_limits: config.productionRatelimits,
      vars: { ...config.vars, ...EXTRA_VARS },
      ratelimit_bindings: !opts['without-ratelimits'],
      only_cases: ONLY ? [...ONLY] : null,
    },
    ceilings: Object.fromEntries(
      Object.entries(ceilings).map(([key, runs]) => [key, { name: CEILING_LABELS[key], runs: runs.map((r) => r.rps), mean_rps: ceilingRps[key], drift: ceilingDrift[key] }]),
    ),
    cases: allCases,
    scaling: scaling.map((s) => ({
      stock_items: s.stock_items,
      rounds_p50_ms: s.rounds,
      purchase: { rps: s.purchase.rps, latency_ms: s.purchase.latency_ms, errors: s.purchase.errors },
      stock: { rps: s.stock.rps, latency_ms: s.stock.latency_ms, errors: s.stock.errors },
    })),
    targets,
    audit: { ok: failed.length === 0, failed },
    unexpected_worker_logs: unexpectedLogs,
    files,
  };

  writeFileSync(join(RESULTS_DIR, files.json), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, files.markdown), markdownReport(results));
  if (files.chart) writeFileSync(join(RESULTS_DIR, files.chart), scalingChart(results));
  if (PROFILING) {
    files.profile = `${OUT}.profile.md`;
    const header = `# CPU profiles (${results.mode} data, ${CONNECTIONS} connections, ${results.finished_at})\n\nSampled with the V8 profiler of each workerd isolate during the measured run of each case (the profiler slows the\nrun down: throughput figures of a profiling run are not benchmark figures). Time per request = busy time / requests.\n\n`;
    writeFileSync(join(RESULTS_DIR, files.profile), header + profiles.map((p) => profileMarkdown(p.name, p.summary, p.wall_s)).join('\n'));
    writeFileSync(join(RESULTS_DIR, `${OUT}.profile.json`), `${JSON.stringify(profiles, null, 2)}\n`);
  }

  log(`\n${textTable(tableRows(results), caseHeaders(results))}\n`);
  log(textTable(targetRows(results), TARGET_HEADERS));
  if (scaling.length) log(`\n${textTable(scalingRows(results), SCALING_HEADERS)}`);
  log('');
  log(`wrote ${Object.values(files).map((f) => relative(ROOT, join(RESULTS_DIR, f))).join(', ')} (${Math.round(results.elapsed_s)} s in all, loading ${Math.round(loadSeconds)} s)`);
  for (const [name, d] of Object.entries(ceilingDrift)) {
    if (d !== null && d > 0.15) log(`note: the ${CEILING_LABELS[name]} ceiling moved ${(d * 100).toFixed(0)}% between the start and the end of the cases: the machine was not steady; read ratios with that margin`);
  }
  if (unexpectedLogs.length) log(`worker logged ${unexpectedLogs.length} unexpected line(s); first: ${JSON.stringify(unexpectedLogs[0]).slice(0, 300)}`);

  // The bench asserts nothing about speed; it fails only when the harness itself is broken: a case that got no
  // successful response, a server error, or a ledger that no longer adds up.
  const broken = allCases.filter((c) => c.requests > 0 && c.requests === c.errors).map((c) => `${c.name}: no successful response`);
  for (const c of allCases) if (Object.keys(c.statuses).some((s) => Number(s) >= 500)) broken.push(`${c.name}: server errors ${JSON.stringify(c.statuses)}`);
  if (failed.length) broken.push(`ledger audit failed: ${failed.join('; ')}`);
  if (broken.length) {
    console.error(`\nbench harness problems:\n  ${broken.join('\n  ')}`);
    process.exitCode = 1;
  }
}

try {
  await main();
} catch (err) {
  console.error(`\nbench failed: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  if (opts.keep) console.log(`kept ${work}`);
  // Nothing may keep the process alive after a failure (a library's stray handle): exit with the run's status.
  process.exit(process.exitCode ?? 0);
}
