// `npm run dev`: local D1 migrated, demo data seeded on an empty database, the dashboard URL, demo user and demo API key
// printed, wrangler dev up.
// Extra arguments go to `wrangler dev` (e.g. `npm run dev -- --var ADMIN_TOKEN:secret`).
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { assertNodeVersion, spawnWrangler, wrangler } from './wrangler.mjs';
import { DEMO_OPERATOR, DEMO_USER, operatorSql, seedSql } from './seed.mjs';
import { vendorDocs } from './vendor-docs.mjs';

const PORT = process.env.PORT ?? '8787';
// DEV_STATE_DIR gives a separate local database (the quickstart check uses a fresh one, like a new clone).
const STATE_DIR = process.env.DEV_STATE_DIR ?? '.wrangler';
const persist = process.env.DEV_STATE_DIR ? ['--persist-to', STATE_DIR] : [];
const DEMO_KEY_FILE = `${STATE_DIR}/demo-api-key.txt`;

assertNodeVersion();

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('Created .dev.vars from .dev.vars.example');
}

// The /docs page's Swagger UI files (public/vendor/), in step with the installed swagger-ui-dist.
vendorDocs();

console.log('Applying D1 migrations to the local database...');
wrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...persist]);

const countQuery = `SELECT count(*) AS users, count(CASE WHEN email = '${DEMO_OPERATOR.email}' THEN 1 END) AS operators FROM users`;
const countOutput = wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--json', '--command', countQuery], { capture: true });
const { users, operators } = JSON.parse(countOutput)[0].results[0];

if (users === 0) {
  console.log('Empty database: seeding demo data...');
  const { sql, apiKey } = seedSql();
  mkdirSync(STATE_DIR, { recursive: true });
  const seedFile = `${STATE_DIR}/seed.sql`;
  writeFileSync(seedFile, sql);
  wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--file', seedFile], { capture: true });
  writeFileSync(DEMO_KEY_FILE, `${apiKey}\n`);
} else if (operators === 0) {
  console.log('Adding the demo operator...');
  wrangler(['d1', 'execute', 'DB', '--local', ...persist, '--command', operatorSql()], { capture: true });
}

const demoKey = existsSync(DEMO_KEY_FILE) ? readFileSync(DEMO_KEY_FILE, 'utf8').trim() : null;
const base = `http://localhost:${PORT}/api/v2`;
const banner = `
  Dashboard:     http://localhost:${PORT}/dashboard  (sign in as the demo user, or sign up)
  Demo user:     ${DEMO_USER.email} / ${DEMO_USER.password} (wallet: $100.00)
  Demo operator: ${DEMO_OPERATOR.email} / ${DEMO_OPERATOR.password} (the console: http://localhost:${PORT}/dashboard/console)
  Demo API key:  ${demoKey ?? '(not known: the database was seeded elsewhere; create a user with POST /admin/users)'}
  Admin token:   see ADMIN_TOKEN in .dev.vars

  Try it:
    curl -s -H "X-API-Key: ${demoKey ?? '<key>'}" ${base}/wallet/balance
    curl -s ${base}/stock
`;

// The banner goes out once the server is ready, so it is the last thing on screen rather than buried in wrangler's.
const child = spawnWrangler(['dev', '--port', PORT, ...persist, ...process.argv.slice(2)]);
let announced = false;
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  if (!announced && String(chunk).includes('Ready on')) {
    announced = true;
    console.log(banner);
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));
