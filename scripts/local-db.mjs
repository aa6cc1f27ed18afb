// The local D1 database of `npm run dev` (wrangler's default state under .wrangler/, or DEV_STATE_DIR's): migrate and
// seed it (`npm run dev`), or throw it away and start again (`npm run db:reset`).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wrangler } from './wrangler.mjs';
import { DEMO_OPERATOR, operatorSql, seedSql } from './seed.mjs';

// DEV_STATE_DIR gives a separate local database (the quickstart check and the e2e suite use a fresh one, like a new clone).
export const STATE_DIR = process.env.DEV_STATE_DIR ?? '.wrangler';
export const persist = process.env.DEV_STATE_DIR ? ['--persist-to', STATE_DIR] : [];
const DEMO_KEY_FILE = join(STATE_DIR, 'demo-api-key.txt');
// Where wrangler keeps D1's SQLite files: `<persist-to>/v3/d1`, by default `.wrangler/state/v3/d1`.
const D1_DIR = process.env.DEV_STATE_DIR ? join(STATE_DIR, 'v3', 'd1') : join(STATE_DIR, 'state', 'v3', 'd1');

/** Applies the migrations and seeds demo data into an empty database; returns the demo API key when it is known. */
export function prepareLocalDatabase() {
  console.log('Applying D1 migrations to the local database...');
  wrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...persist]);

  const countQuery = `SELECT count(*) AS users, count(CASE WHEN email = '${DEMO_OPERATOR.email}' THEN 1 END) AS operators FROM users`;
  const countOutput = wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--json', '--command', countQuery], { capture: true });
  const { users, operators } = JSON.parse(countOutput)[0].results[0];
  if (users === 0) {
    console.log('Empty database: seeding demo data...');
    const { sql, apiKey } = seedSql();
    mkdirSync(STATE_DIR, { recursive: true });
    const seedFile = join(STATE_DIR, 'seed.sql');
    writeFileSync(seedFile, sql);
    wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--file', seedFile], { capture: true });
    writeFileSync(DEMO_KEY_FILE, `${apiKey}\n`);
  } else if (operators === 0) {
    // A database seeded before the console existed gets the demo operator too.
    console.log('Adding the demo operator...');
    wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--command', operatorSql()], { capture: true });
  }
  return existsSync(DEMO_KEY_FILE) ? readFileSync(DEMO_KEY_FILE, 'utf8').trim() : null;
}

/** Deletes the local database and the demo key written with its seed. */
export function deleteLocalDatabase() {
  rmSync(D1_DIR, { recursive: true, force: true });
  rmSync(DEMO_KEY_FILE, { force: true });
  rmSync(join(STATE_DIR, 'seed.sql'), { force: true });
  return D1_DIR;
}
