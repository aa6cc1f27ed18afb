// `node bench/forgot-password-timing.mjs`: does "Forgot password?" take as long for an address without an account as for a
// real one? Starts `npm run dev` on its own port and database (a temporary DEV_STATE_DIR), makes PAIRS accounts
// through the admin API, then sends PAIRS interleaved pairs of POST /api/v2/auth/forgot-password: a real address (its
// first request, so its link and email are written) and an address nobody has, in alternating order, each from its
// own client address (the per-IP limit would refuse the 11th post of a minute). Prints the median of each kind, their
// ratio and how many pairs the real address was the slower of. A measurement, not a test: its numbers go to
// docs/security.md.
//
// It also prints each kind's median by its place in the pair (first or second), a check that the alternation cancels
// what the previous request leaves behind, and, with RECORD=<file>, writes every timing as JSON.
//
//   node bench/forgot-password-timing.mjs                           # PORT 8801, 100 pairs
//   PORT=8900 PAIRS=200 node bench/forgot-password-timing.mjs
//   RECORD=/tmp/forgot.json node bench/forgot-password-timing.mjs
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PORT = Number(process.env.PORT ?? 8801);
const PAIRS = Number(process.env.PAIRS ?? 100);
const WARMUP = 10;
/** A pause between requests, so the mail a real address queues after its answer is sent before the next request. */
const GAP_MS = Number(process.env.GAP_MS ?? 50);
const ADMIN_TOKEN = 'bench-admin-token';
const origin = `http://localhost:${PORT}`;

const state = mkdtempSync(join(tmpdir(), 'forgot-password-timing-'));
const { NODE_ENV: _ignored, ...shell } = process.env;
const child = spawn('npm', ['run', 'dev', '--', '--var', `ADMIN_TOKEN:${ADMIN_TOKEN}`], {
  env: { ...shell, PORT: String(PORT), DEV_STATE_DIR: state, WRANGLER_REGISTRY_PATH: join(state, 'registry'), WRANGLER_SEND_METRICS: 'false' },
  detached: true,
  stdio: ['ignore', 'pipe', 'pipe'],
});
let log = '';
child.stdout.on('data', (chunk) => (log += chunk));
child.stderr.on('data', (chunk) => (log += chunk));

async function stop() {
  if (child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await sleep(1000);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(state, { recursive: true, force: true });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function forgot(email, ip) {
  const started = performance.now();
  const res = await fetch(`${origin}/api/v2/auth/forgot-password`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
    body: JSON.stringify({ email }),
  });
  await res.text();
  const ms = performance.now() - started;
  if (res.status !== 202) throw new Error(`forgot-password answered ${res.status}`);
  return ms;
}

try {
  const deadline = Date.now() + 180_000;
  while (!log.includes('Ready on') || !log.includes('Demo API key')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm run dev did not come up:\n${log}`);
    await sleep(250);
  }
  const run = Date.now().toString(36);
  const total = PAIRS + WARMUP;
  const real = [];
  for (let i = 0; i < total; i++) {
    const email = `timing-${run}-${i}@example.com`;
    const res = await fetch(`${origin}/api/v2/admin/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ name: 'Timing', email, password: 'timing password' }),
    });
    if (res.status !== 201) throw new Error(`creating a user answered ${res.status}: ${await res.text()}`);
    real.push(email);
  }
  const times = { real: [], unknown: [], diff: [] };
  const byPlace = { real: [[], []], unknown: [[], []] };
  const record = [];
  let realSlower = 0;
  for (let i = 0; i < total; i++) {
    const ip = `198.18.${(i >> 8) & 255}.${i & 255}`;
    const pair = [
      ['real', real[i]],
      ['unknown', `nobody-${run}-${i}@example.com`],
    ];
    if (i % 2) pair.reverse();
    const took = {};
    for (const [place, [kind, email]] of pair.entries()) {
      took[kind] = await forgot(email, ip);
      if (i >= WARMUP) byPlace[kind][place].push(took[kind]);
      record.push({ pair: i, kind, place, ms: took[kind], warmup: i < WARMUP });
      await sleep(GAP_MS);
    }
    if (i < WARMUP) continue;
    times.real.push(took.real);
    times.unknown.push(took.unknown);
    times.diff.push(took.real - took.unknown);
    if (took.real > took.unknown) realSlower++;
  }
  const [r, u] = [median(times.real), median(times.unknown)];
  console.log(`forgot-password, ${PAIRS} interleaved pairs (after ${WARMUP} warm-up pairs), ${GAP_MS} ms between requests, npm run dev on ${origin}`);
  console.log(`  median real address:    ${r.toFixed(2)} ms`);
  console.log(`  median unknown address: ${u.toFixed(2)} ms`);
  console.log(`  real / unknown:         ${(r / u).toFixed(3)} (${(((r - u) / u) * 100).toFixed(1)} %)`);
  console.log(`  median of the pairs' differences (real - unknown): ${median(times.diff).toFixed(2)} ms`);
  console.log(`  pairs where the real address was slower: ${realSlower} of ${PAIRS} (${Math.round((realSlower / PAIRS) * 100)} %)`);
  const place = (kind) => byPlace[kind].map((xs) => median(xs).toFixed(2)).join(' ms first, ');
  console.log(`  by place in the pair: real ${place('real')} ms second; unknown ${place('unknown')} ms second`);
  if (process.env.RECORD) writeFileSync(process.env.RECORD, JSON.stringify(record));
} finally {
  await stop();
}
