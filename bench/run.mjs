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
//
// This file is the runner: it builds and starts the workers, loads the data, runs the cases of bench/cases/ in order
// (each file a group of cases: references, stock, accounts, orders, scaling, drop), audits the ledger and writes the
// results (bench/results.mjs, bench/targets.mjs). How a case is measured: bench/measure.mjs; the options:
// bench/options.mjs.
import { loadavg, tmpdir } from 'node:os';
import { accessSync, constants, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bestsellerCount, loadProducts, loadStockTo, loadUsers, migrate } from './data.mjs';
import { buildWorker, loadWrangler, productionConfig, startWorkers, versions } from './harness.mjs';
import { items } from './report.mjs';
import { bundleModules } from './profile.mjs';
import { log, measure, onLog, progress, secondsSince, session } from './measure.mjs';
import {
  API_PORT,
  BENCH_RATE_LIMIT,
  BENCH_VARS,
  CEILING_LABELS,
  CEILING_PORT,
  CEILING_SCRIPT,
  CONNECTIONS,
  DURATION,
  EXTRA_VARS,
  HOST,
  INSPECTOR_PORT,
  INSTRUMENTED_ENTRY,
  LATENCY_MODEL,
  NOCACHE_PORT,
  ONLY,
  opts,
  PROFILE,
  PROFILING,
  QUICK,
  SERVE,
  WARMUP,
} from './options.mjs';
import { requestBuilders } from './cases/requests.mjs';
import { referenceCases } from './cases/references.mjs';
import { stockCases } from './cases/stock.mjs';
import { signInCase, walletBalanceCase } from './cases/accounts.mjs';
import { orderCases } from './cases/orders.mjs';
import { finalScalingPoint, scalingPoint } from './cases/scaling.mjs';
import { dropCases } from './cases/drop.mjs';
import { rowsByHistoryCase } from './cases/rows.mjs';
import { buildResults, writeResults } from './results.mjs';
import { AUDIT_CHECKS } from '../src/services/operator/ledger-audit.ts';

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
const children = session.children;
const STATE_ROOT = opts['state-dir'] ?? (isWritableDir('/dev/shm') ? '/dev/shm' : tmpdir());
const work = mkdtempSync(join(STATE_ROOT, 'stock-wallet-bench-'));
session.work = work;
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
  if (PROFILING) session.moduleOfLine = bundleModules(apiScript);
  const apiBase = `http://${HOST}:${API_PORT}`;
  const noCacheBase = `http://${HOST}:${NOCACHE_PORT}`;
  const ceilingBase = `http://${HOST}:${CEILING_PORT}`;
  session.profiledTarget = { [apiBase]: 'core:user:api', [noCacheBase]: 'core:user:api-nocache', [ceilingBase]: 'core:user:ceiling' };
  session.profiledCeiling = ceilingBase;
  session.roundTripBases = new Set([apiBase, noCacheBase]);
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

  if (SERVE) {
    for (const level of PROFILE.levels) await loadStockTo(db, level, PROFILE.products, progress(`stock ${items(level).padEnd(4)}`));
    writeFileSync(join(work, 'keys.txt'), `${keys.join('\n')}\n`);
    log(`\nserving until interrupted: API ${apiBase}, API without cache ${noCacheBase}, ceiling ${ceilingBase}, inspector 127.0.0.1:${INSPECTOR_PORT}`);
    log(`API keys of users 1..${keys.length}: ${join(work, 'keys.txt')}`);
    await new Promise(() => {});
  }

  // What the cases share (bench/cases/*.mjs take it as `b`) -----------------------------------------------------------
  const scaling = [];
  const cases = [];
  const ceilings = Object.fromEntries(Object.keys(CEILING_LABELS).map((key) => [key, []]));
  const selected = (key) => !ONLY || ONLY.has(key);
  // `always`: a case another selected case needs as its baseline (the flash sale for the drop with storefronts).
  const runCase = async (name, fn, { always = false } = {}) => {
    if (!always && !selected(name)) return null;
    const result = await fn();
    cases.push({ ...result, key: name });
    return result;
  };
  const runCeiling = async (key, when, requests, options) => {
    if (LATENCY_MODEL || !selected(key)) return;
    ceilings[key].push(await measure(`ceiling: ${CEILING_LABELS[key]} (${when})`, ceilingBase, await requests(), options));
  };
  const b = {
    db,
    keys,
    apiBase,
    noCacheBase,
    ceilingBase,
    requests: requestBuilders({ db, keys, apiBase }),
    selected,
    runCase,
    // Reference rows and ceilings measure the worker on this machine: no far client sees them, so --rtt skips them.
    reference: (name, fn) => (LATENCY_MODEL ? null : runCase(name, fn)),
    runCeiling,
    // A target's ceiling runs right before and right after its case, so the ratio compares runs a few seconds apart
    // on a machine whose speed drifts.
    bracketed: async ([key, requests, options], name, fn) => {
      await runCeiling(key, 'before', requests, options);
      const result = await runCase(name, fn);
      await runCeiling(key, 'after', requests, options);
      return result;
    },
    // Data loaded between cases counts as loading time.
    load: async (fn) => {
      const started = Date.now();
      const result = await fn();
      loadSeconds += secondsSince(started);
      return result;
    },
  };
  const runtimeCeilings = async (when) => {
    await runCeiling('empty', when, b.requests.get('/empty'));
    await runCeiling('d1_write', when, async () => [{ method: 'POST', path: '/d1-write' }]);
  };

  const levels = PROFILE.levels;
  for (const [index, level] of levels.entries()) {
    const added = await b.load(() => loadStockTo(db, level, PROFILE.products, progress(`stock ${items(level).padEnd(4)}`)));
    log(`\n${items(level)} stock items (${added.toLocaleString('en-US')} added; bestsellers: products 1-${bestsellerCount(PROFILE.products)})`);
    if (index < levels.length - 1) {
      if (!LATENCY_MODEL && selected('scaling')) scaling.push(await scalingPoint(b, level));
      continue;
    }
    await runtimeCeilings('before');
    const stockBytes = await referenceCases(b);
    const stockMiss = await stockCases(b, stockBytes);
    await walletBalanceCase(b);
    const q1 = await orderCases(b);
    await signInCase(b);
    await rowsByHistoryCase(b);
    await runtimeCeilings('after');
    if (stockMiss && q1 && !LATENCY_MODEL) scaling.push(await finalScalingPoint(b, level, stockMiss, q1));
    if (!LATENCY_MODEL) await dropCases(b);
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
  const results = buildResults({ startedAt, loadavgStart, loadSeconds, STATE_ROOT, v, config, levels, ceilings, cases, scaling, failed });
  const broken = writeResults(results);
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
