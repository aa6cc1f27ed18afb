// `npm run dev`: local D1 migrated, demo data seeded on an empty database, the dashboard URL, demo user and demo API key
// printed, wrangler dev up.
// Extra arguments go to `wrangler dev` (e.g. `npm run dev -- --var ADMIN_TOKEN:secret`).
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { assertNodeVersion, spawnWrangler } from './wrangler.mjs';
import { DEMO_OPERATOR, DEMO_USER } from './seed.mjs';
import { demoWallet, persist, prepareLocalDatabase } from './local-db.mjs';
import { localPaymentBaseUrl } from './payment-base-url.mjs';
import { vendorDocs } from './vendor-docs.mjs';

const PORT = process.env.PORT ?? '8787';

assertNodeVersion();

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('Created .dev.vars from .dev.vars.example');
}

// The /docs page's Swagger UI files (public/vendor/), in step with the installed swagger-ui-dist.
vendorDocs();

const args = process.argv.slice(2);
const paymentBase = localPaymentBaseUrl(PORT, args);
const { apiKey: demoKey, testKey: demoTestKey, demoBalanceCents } = prepareLocalDatabase({ paymentBaseUrl: paymentBase.url });

/** Mail on locally (simulated by wrangler dev: printed here), also for a .dev.vars made before email existed. */
function localMail() {
  return /^EMAIL_FROM=/m.test(readFileSync('.dev.vars', 'utf8')) ? [] : ['--var', 'EMAIL_FROM:Stock Wallet <shop@example.com>'];
}
const base = `http://localhost:${PORT}/api/v2`;
const banner = `
  Dashboard:     http://localhost:${PORT}/dashboard  (sign in as the demo user, or sign up)
  Demo user:     ${DEMO_USER.email} / ${DEMO_USER.password} (${demoWallet(demoBalanceCents)})
  Demo operator: ${DEMO_OPERATOR.email} / ${DEMO_OPERATOR.password} (the console: http://localhost:${PORT}/dashboard/console)
  Demo API key:  ${demoKey ?? '(not known: the database was seeded elsewhere; create a user with POST /admin/users)'}
  Demo test key: ${demoTestKey ?? '(not known: make one with POST /api-keys {"name": "test", "mode": "test"})'}  (test mode: docs/test-mode.md)
  Admin token:   see ADMIN_TOKEN in .dev.vars
  Checkout page: ${paymentBase.url}/pay/<deposit id>  (PAYMENT_BASE_URL: the payment_url of local deposits)
  Emails:        printed below as they are sent (simulated), and listed on http://localhost:${PORT}/dashboard/console/emails

  Try it:
    curl -s -H "X-API-Key: ${demoKey ?? '<key>'}" ${base}/wallet/balance
    curl -s ${base}/stock
`;

// The banner goes out once the server is ready, so it is the last thing on screen rather than buried in wrangler's.
const child = spawnWrangler(['dev', '--port', PORT, ...persist, ...paymentBase.varArgs, ...localMail(), ...args]);
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
