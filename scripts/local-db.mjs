// The local D1 database of `npm run dev` (wrangler's default state under .wrangler/, or DEV_STATE_DIR's): migrate and
// seed it (`npm run dev`), or throw it away and start again (`npm run db:reset`).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wrangler } from './wrangler.mjs';
import { DEMO_OPERATOR, DEMO_USER, operatorSql, sandboxSeedSql, seedSql } from './seed.mjs';

// DEV_STATE_DIR gives a separate local database (the quickstart check and the e2e suite use a fresh one, like a new clone).
export const STATE_DIR = process.env.DEV_STATE_DIR ?? '.wrangler';
export const persist = process.env.DEV_STATE_DIR ? ['--persist-to', STATE_DIR] : [];
const DEMO_KEY_FILE = join(STATE_DIR, 'demo-api-key.txt');
const DEMO_TEST_KEY_FILE = join(STATE_DIR, 'demo-test-key.txt');
// Where wrangler keeps D1's SQLite files: `<persist-to>/v3/d1`, by default `.wrangler/state/v3/d1`.
const D1_DIR = process.env.DEV_STATE_DIR ? join(STATE_DIR, 'v3', 'd1') : join(STATE_DIR, 'state', 'v3', 'd1');

/** `wrangler d1 execute` on the local database (or the test-mode sandbox's), answering the rows of the one statement. */
const query = (sql, binding = 'DB') =>
  JSON.parse(wrangler(['d1', 'execute', binding, '--local', ...persist, '--json', '--command', sql], { capture: true }))[0].results;

/** Applies the pending migrations, printing one line per migration rather than wrangler's tables (shown on failure). */
function migrate() {
  const output = wrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...persist], { capture: true });
  const applied = [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
  if (applied.length === 0) console.log('Local database: migrations up to date.');
  for (const name of applied) console.log(`Local database: applied migration ${name}`);
}

/**
 * The test-mode sandbox (SANDBOX_DB): migrated with the same migrations, and seeded once, while empty, with the demo
 * user's test money, a demo test key and the catalogue's copy. One line says what happened. Returns the demo test key
 * when it is known.
 */
function prepareSandbox() {
  const output = wrangler(['d1', 'migrations', 'apply', 'SANDBOX_DB', '--local', ...persist], { capture: true });
  const applied = new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? []).size;
  const [{ users }] = query('SELECT count(*) AS users FROM users', 'SANDBOX_DB');
  let seeded = '';
  if (users === 0) {
    const { sql, apiKey } = sandboxSeedSql();
    const seedFile = join(STATE_DIR, 'sandbox-seed.sql');
    writeFileSync(seedFile, sql);
    wrangler(['d1', 'execute', 'SANDBOX_DB', '--local', ...persist, '--file', seedFile], { capture: true });
    writeFileSync(DEMO_TEST_KEY_FILE, `${apiKey}\n`);
    seeded = "; seeded the demo user's test money, a demo test key and the catalogue";
  }
  console.log(`Sandbox database (test mode): ${applied > 0 ? `applied ${applied} migrations` : 'migrations up to date'}${seeded}.`);
  return existsSync(DEMO_TEST_KEY_FILE) ? readFileSync(DEMO_TEST_KEY_FILE, 'utf8').trim() : null;
}

/**
 * Applies the migrations and seeds demo data into an empty database (never twice: a database with users is left as it
 * is). Returns the demo API key when it is known, and the demo user's balance as the database holds it (null when
 * the demo user is gone).
 */
export function prepareLocalDatabase({ paymentBaseUrl }) {
  migrate();
  const demoBalance = `(SELECT balance_cents FROM users WHERE email = '${DEMO_USER.email}')`;
  const [{ users, operators, demo_balance_cents: found }] = query(
    `SELECT count(*) AS users, count(CASE WHEN email = '${DEMO_OPERATOR.email}' THEN 1 END) AS operators, ${demoBalance} AS demo_balance_cents FROM users`,
  );
  let demoBalanceCents = found;
  if (users === 0) {
    const started = Date.now();
    const { sql, apiKey, summary } = seedSql({ paymentBaseUrl });
    mkdirSync(STATE_DIR, { recursive: true });
    const seedFile = join(STATE_DIR, 'seed.sql');
    writeFileSync(seedFile, sql);
    wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--file', seedFile], { capture: true });
    writeFileSync(DEMO_KEY_FILE, `${apiKey}\n`);
    console.log(`Empty database: seeded the demo data and ${summary} (${((Date.now() - started) / 1000).toFixed(1)} s).`);
    [{ demo_balance_cents: demoBalanceCents }] = query(`SELECT ${demoBalance} AS demo_balance_cents`);
  } else if (operators === 0) {
    // A database seeded before the console existed gets the demo operator too.
    console.log('Adding the demo operator...');
    wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--command', operatorSql()], { capture: true });
  }
  const testKey = prepareSandbox();
  return { apiKey: existsSync(DEMO_KEY_FILE) ? readFileSync(DEMO_KEY_FILE, 'utf8').trim() : null, testKey, demoBalanceCents };
}

/** The demo user's wallet as the banners print it. */
export const demoWallet = (cents) =>
  cents === null ? 'not in this database' : `wallet: $${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** Deletes the local database and the demo key written with its seed. */
export function deleteLocalDatabase() {
  rmSync(D1_DIR, { recursive: true, force: true });
  rmSync(DEMO_KEY_FILE, { force: true });
  rmSync(DEMO_TEST_KEY_FILE, { force: true });
  rmSync(join(STATE_DIR, 'seed.sql'), { force: true });
  rmSync(join(STATE_DIR, 'sandbox-seed.sql'), { force: true });
  return D1_DIR;
}
