// How the bench measures a case: one load process per case (bench/load.mjs), the worker's own log lines counted per
// case, CPU from /proc, D1 round trips from bench/instrumented-entry.ts, and CPU profiles with --profile.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './harness.mjs';
import { CONNECTIONS, DURATION, INSPECTOR_PORT, LOAD_SCRIPT, PROFILING, WARMUP } from './options.mjs';
import { roundTripsText } from './report.mjs';
import { startProfiling, summarise } from './profile.mjs';

/**
 * What the runner sets up before the cases and the cases share: the work directory, the child processes to stop,
 * and, once the workers run, the bases whose round trips are counted and what --profile attributes samples to.
 */
export const session = {
  work: null,
  children: new Set(),
  profiles: [],
  moduleOfLine: null,
  profiledTarget: {},
  profiledCeiling: null,
  // The API workers (with and without the Cache API): served through bench/instrumented-entry.ts, they count D1 round trips.
  roundTripBases: new Set(),
  unexpectedLogs: [],
};

export const log = (message) => console.log(message);
export const int = (n) => Math.round(n).toLocaleString('en-US');
export const secondsSince = (t) => (Date.now() - t) / 1000;

// ---------------------------------------------------------------------------------------------------------------
// Progress bar (a text bar on a terminal, a line every 10% otherwise)

export function progress(label) {
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
// GET /stock answered from D1 (a cache miss), whatever case is running: the drop with storefronts reads it.
const STOCK_LIST_ROUTE = /^\/api\/v2\/stock\/?$/;
let stockListReads = 0;
/** D1 reads of GET /stock (cache misses) since the workers started. */
export const stockListReadCount = () => stockListReads;
function newWorkerStats() {
  return { logged: 0, cache: {}, statuses: {}, error_logs: [] };
}
export function onLog({ level, message }) {
  const unexpectedLogs = session.unexpectedLogs;
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

// ---------------------------------------------------------------------------------------------------------------
// One case's load

/** The API's D1 round trips since the last call (the call resets them), from bench/instrumented-entry.ts. */
const roundTrips = async (base) => (await fetch(`${base}/__bench/round-trips`)).json();

/** Run one case through bench/load.mjs in its own process; worker-side stats cover the measured run only. */
export function runLoad(name, base, requests, { consume = false, expectedStatus, soldOutStatus, maxRequests, connections = CONNECTIONS, warmup = WARMUP, duration = DURATION } = {}) {
  const specFile = join(session.work, `case-${name.replace(/[^a-z0-9]+/gi, '_')}.json`);
  writeFileSync(specFile, JSON.stringify({ url: base, connections, warmupSeconds: warmup, durationSeconds: duration, consume, expectedStatus, soldOutStatus, maxRequests, requests }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LOAD_SCRIPT, specFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    session.children.add(child);
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
        if (session.roundTripBases.has(base)) child.roundTripsReset = roundTrips(base); // drop the warm-up's
        if (PROFILING) {
          child.profiling = startProfiling(INSPECTOR_PORT);
          if (base !== session.profiledCeiling) fetch(`${base}/__bench/statements`).catch(() => {}); // reset the warm-up's counts
        }
      }
    });
    child.on('exit', async (code, signal) => {
      const cpuEnd = cpuSnapshot();
      clearTimeout(killer);
      session.children.delete(child);
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
          const summary = summarise(await stop(), result.requests, session.moduleOfLine, session.profiledTarget[base], result.cpu?.workerd_cpu_us_per_request ?? null);
          if (base !== session.profiledCeiling) summary.d1 = await (await fetch(`${base}/__bench/statements`)).json();
          session.profiles.push({ name, summary, wall_s: result.duration_s });
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

/** Measure one case and print its line. */
export async function measure(name, base, requests, options) {
  process.stderr.write(`  ${name.padEnd(44)}`);
  const result = await runLoad(name, base, requests, options);
  process.stderr.write(`${fmt(result)}\n`);
  return { name, ...result };
}
