// `npm run bench:audit [-- options]`: what each ledger audit check costs on a large database. Loads the bench data
// (bench/data.mjs: 1,000 users, 10,000 products, 1,000,000 stock items) plus a ledger history (bench/ledger-data.mjs:
// 200,000 orders, a tenth cancelled and refunded, 50,000 deposits, half paid) into a local D1, then runs
// `npm run audit:ledger` on it, whole and in windows, and writes the figures to bench/results/audit-cost.md.
//   --state-dir DIR   where the database goes (kept and reused when it exists; default: a temporary directory, removed)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getPlatformProxy } from 'wrangler';
import { loadProducts, loadStockTo, loadUsers, migrate, productOfItem } from './data.mjs';
import { loadWrangler, ROOT } from './harness.mjs';
import { loadLedger } from './ledger-data.mjs';

const { values: opts } = parseArgs({ options: { 'state-dir': { type: 'string' } } });
// Windows of 50,000 ids bound the checks keyed on orders, items, deposits and ledger rows; a user holds hundreds of
// ledger rows, so the checks keyed on users (all named "balance...") take windows of 100 users.
const WINDOWED_RUNS = [
  ['--window', '50000'],
  ['--window', '100', '--check', 'balance'],
];
const SIZE = { users: 1_000, products: 10_000, items: 1_000_000, orders: 200_000, deposits: 50_000 };
const stateDir = opts['state-dir'] ?? mkdtempSync(join(tmpdir(), 'audit-cost-'));
const persist = join(stateDir, 'v3'); // the layout `npm run audit:ledger` reads through DEV_STATE_DIR

const log = (message) => console.log(message);
const progress = (label) => {
  let last = -1;
  return (done, total) => {
    const percent = Math.floor((done / total) * 10) * 10;
    if (percent !== last) log(`  ${label} ${percent}%`);
    last = percent;
  };
};

async function load() {
  const started = Date.now();
  const { env, dispose } = await getPlatformProxy({ configPath: join(ROOT, 'wrangler.toml'), persist: { path: persist } });
  try {
    await migrate(env.DB, join(ROOT, 'migrations'), (await loadWrangler()).unstable_splitSqlQuery);
    await loadUsers(env.DB, SIZE.users, progress('users'));
    await loadProducts(env.DB, SIZE.products, progress('products'));
    await loadStockTo(env.DB, SIZE.items, SIZE.products, progress('stock items'));
    await loadLedger(env.DB, SIZE, (i) => productOfItem(i, SIZE.products), progress('orders and deposits'));
  } finally {
    await dispose();
  }
  log(`loaded in ${Math.round((Date.now() - started) / 1000)} s`);
}

function audit(...args) {
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'audit-ledger.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, DEV_STATE_DIR: stateDir, WRANGLER_SEND_METRICS: 'false' },
    encoding: 'utf8',
  });
  process.stdout.write(result.stdout);
  if (result.status !== 0) throw new Error(`audit:ledger ${args.join(' ')} failed (exit ${result.status}):\n${result.stderr}`);
  // wrangler's own notes ("Using secrets defined in .dev.vars") are not part of the audit's report
  return result.stdout.split('\n').filter((line) => !line.startsWith('Using ')).join('\n').trim();
}

try {
  if (!existsSync(persist)) await load();
  const whole = audit();
  const windowed = WINDOWED_RUNS.map((args) => `\`npm run audit:ledger -- ${args.join(' ')}\`\n\n\`\`\`\n${audit(...args)}\n\`\`\`\n`);
  const report = `# Ledger audit cost on a large database

\`npm run bench:audit\` on ${new Date().toISOString().slice(0, 10)}, in a local D1 (workerd's SQLite) on the development machine:
${[
    `${SIZE.users.toLocaleString('en-US')} users`,
    `${SIZE.products.toLocaleString('en-US')} products`,
    `${SIZE.items.toLocaleString('en-US')} stock items`,
    `${SIZE.orders.toLocaleString('en-US')} orders (a tenth cancelled)`,
    `${SIZE.deposits.toLocaleString('en-US')} deposits (half paid)`,
    `${(SIZE.users + SIZE.orders * 1.1 + SIZE.deposits / 4).toLocaleString('en-US')} ledger rows`,
  ].join(', ')}.
"Rows read" is D1's own count (what D1 bills, and what a statement's time grows with).

## Whole checks (\`npm run audit:ledger\`)

\`\`\`
${whole}
\`\`\`

## In windows (totals over all windows, and the most one window read)

${windowed.join('\n')}`;
  writeFileSync(join(ROOT, 'bench', 'results', 'audit-cost.md'), report);
  log('wrote bench/results/audit-cost.md');
} finally {
  if (!opts['state-dir']) rmSync(stateDir, { recursive: true, force: true });
}
