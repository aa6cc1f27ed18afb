// `npm run bench:jobs`: how fast the scheduled job completes held orders, on the bench's data (1,000 users, 10,000
// products, 1,000,000 stock items) plus an order history: 500,000 completed orders, a backlog of pending orders past
// the hold period and 20,000 fresh pending ones. The production bundle runs on workerd (bench/harness.mjs) and its
// real `scheduled` handler is invoked run after run until the backlog is gone; each run's completed orders and wall
// time are printed, then the sustained rate (orders a 5-minute cron can complete) and the cost per order. Options: --backlog N (default 250,000), --port P (default 8813; P..P+2 are used), --state-dir DIR.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadProducts, loadStockTo, loadUsers, migrate } from './data.mjs';
import { buildWorker, loadWrangler, productionConfig, ROOT, startWorkers } from './harness.mjs';

const { values: opts } = parseArgs({
  options: {
    backlog: { type: 'string', default: '250000' },
    port: { type: 'string', default: '8813' },
    'state-dir': { type: 'string' },
  },
});
const BACKLOG = Number(opts.backlog);
const HISTORY = 500_000;
const FRESH = 20_000;
const ROWS_PER_STATEMENT = 50_000;
const CRON_MINUTES = 5;
const HOUR = 3_600_000;

const work = mkdtempSync(join(opts['state-dir'] ?? '/dev/shm', 'stock-wallet-jobs-'));
const children = new Set();
let mf = null;
const cleanup = async () => {
  for (const child of children) child.kill('SIGKILL');
  if (mf) await mf.dispose().catch(() => {});
  rmSync(work, { recursive: true, force: true });
};
const quiet = () => {};
const seconds = (t) => ((performance.now() - t) / 1000).toFixed(2);

/** `count` orders of one status, created at `createdAt(i)`, in statements of ROWS_PER_STATEMENT rows. */
async function insertOrders(db, first, count, status, createdAt) {
  for (let start = first; start < first + count; start += ROWS_PER_STATEMENT) {
    const end = Math.min(start + ROWS_PER_STATEMENT, first + count) - 1;
    await db
      .prepare(
        `INSERT INTO orders (order_number, user_id, product_id, product_name, quantity, unit_price_cents, total_amount_cents, list_unit_price_cents, status, created_at, updated_at)
         WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
         SELECT 'ORD-BENCH-' || i, 1 + i % 1000, 1 + i % 10000, 'Bench product', 1, 100, 100, 100, ?3,
                strftime('%Y-%m-%dT%H:%M:%fZ', ?4 / 1000.0 - i / 1000.0, 'unixepoch'), strftime('%Y-%m-%dT%H:%M:%fZ', ?4 / 1000.0, 'unixepoch')
         FROM n`,
      )
      .bind(start, end, status, createdAt)
      .run();
  }
}

async function main() {
  const port = Number(opts.port);
  const apiScript = await buildWorker(join(work, 'build'), children);
  const config = await productionConfig(1_000_000_000);
  mf = await startWorkers({
    apiScript,
    ceilingScript: join(ROOT, 'bench', 'ceiling-worker.mjs'),
    config,
    host: '127.0.0.1',
    apiPort: port,
    noCachePort: port + 1,
    ceilingPort: port + 2,
    persistDir: join(work, 'state'),
    onLog: ({ message }) => message.includes('"scheduled jobs"') && console.log(`    worker: ${message}`),
    extraVars: { LOG_REQUESTS: 'false' },
  });
  const db = await mf.getD1Database(config.d1Binding, 'api');
  const wrangler = await loadWrangler();
  await migrate(db, config.migrationsDir, wrangler.unstable_splitSqlQuery);
  await loadUsers(db, 1_000, quiet);
  await loadProducts(db, 10_000, quiet);
  let t = performance.now();
  await loadStockTo(db, 1_000_000, 10_000, quiet);
  console.log(`loaded 1,000 users, 10,000 products, 1,000,000 stock items (${seconds(t)} s)`);

  const now = Date.now();
  t = performance.now();
  await insertOrders(db, 1, HISTORY, 'completed', now - 72 * HOUR);
  await insertOrders(db, HISTORY + 1, BACKLOG, 'pending', now - 25 * HOUR);
  await insertOrders(db, HISTORY + BACKLOG + 1, FRESH, 'pending', now - HOUR);
  console.log(`orders: ${HISTORY.toLocaleString('en-US')} completed, ${BACKLOG.toLocaleString('en-US')} pending past the 24 h hold, ${FRESH.toLocaleString('en-US')} fresh pending (${seconds(t)} s)`);

  const overdue = async () =>
    (await db.prepare("SELECT count(*) AS n FROM orders WHERE status = 'pending' AND created_at <= ?1").bind(new Date(Date.now() - 24 * HOUR).toISOString()).first()).n;
  const worker = await mf.getWorker('api');
  const runs = [];
  for (let left = await overdue(); left > 0; ) {
    t = performance.now();
    await worker.scheduled({ scheduledTime: Date.now(), cron: '*/5 * * * *' });
    const wall = performance.now() - t;
    const after = await overdue();
    runs.push({ completed: left - after, ms: wall });
    console.log(`  run ${runs.length}: completed ${(left - after).toLocaleString('en-US')} orders in ${(wall / 1000).toFixed(2)} s, ${after.toLocaleString('en-US')} overdue left`);
    left = after;
  }
  const full = runs.filter((r) => r.completed === Math.max(...runs.map((x) => x.completed)));
  const perRun = full[0].completed;
  const msPerRun = full.reduce((sum, r) => sum + r.ms, 0) / full.length;
  console.log(
    `\nsustained: ${perRun.toLocaleString('en-US')} orders per run (every ${CRON_MINUTES} min) = ${Math.round(perRun / CRON_MINUTES).toLocaleString('en-US')} orders/min ` +
      `(${Math.round(perRun / (CRON_MINUTES * 60))} purchases/s); a full run takes ${(msPerRun / 1000).toFixed(2)} s, ` +
      `${Math.round((msPerRun * 1000) / perRun)} µs per order`,
  );
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
