// `npm run dev`: local D1 migrated, demo data seeded on an empty database, the dashboard URL, demo user and demo API key
// printed, wrangler dev up.
// Extra arguments go to `wrangler dev` (e.g. `npm run dev -- --var ADMIN_TOKEN:secret`).
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { assertNodeVersion, spawnWrangler } from './wrangler.mjs';
import { DEMO_OPERATOR, DEMO_USER } from './seed.mjs';
import { demoWallet, persist, prepareLocalDatabase } from './local-db.mjs';
import { localPaymentBaseUrl, localPublicBaseUrl } from './payment-base-url.mjs';
import { vendorDocs } from './vendor-docs.mjs';

const PORT = process.env.PORT ?? '8787';
// The scheduled job (deposit expiry, vendor polls, order completion, operator alerts) runs every minute locally, as its
// cron runs in production, so nothing waits for a manual trigger. DEV_SCHEDULED_SECONDS changes the pace (tests).
const SCHEDULED_SECONDS = Number(process.env.DEV_SCHEDULED_SECONDS ?? 60);
// wrangler.toml's [triggers]: the live shop's jobs, and test mode's own run (src/services/sandbox/jobs.ts).
const CRONS = ['*/5 * * * *', '2-59/5 * * * *'];

assertNodeVersion();

if (!existsSync('.dev.vars')) {
  copyFileSync('.dev.vars.example', '.dev.vars');
  console.log('Created .dev.vars from .dev.vars.example');
}

// The /docs page's Swagger UI files (public/vendor/), in step with the installed swagger-ui-dist.
vendorDocs();

const args = process.argv.slice(2);
const paymentBase = localPaymentBaseUrl(PORT, args);
const publicBase = localPublicBaseUrl(PORT, args);
const { apiKey: demoKey, testKey: demoTestKey, demoBalanceCents } = prepareLocalDatabase({ paymentBaseUrl: paymentBase.url });

/**
 * Mail on locally (simulated by wrangler dev: printed here), also for a .dev.vars made before email existed; and each
 * sent email's text and HTML kept for the console's Emails page (EMAIL_PREVIEW: `npm run dev` only, never production).
 */
function localMail() {
  const from = /^EMAIL_FROM=/m.test(readFileSync('.dev.vars', 'utf8')) ? [] : ['--var', 'EMAIL_FROM:Stock Wallet <shop@example.com>'];
  return [...from, '--var', 'EMAIL_PREVIEW:true'];
}

/** Until when a scheduled report comes from the loop: an idle one is not shown then (one triggered by hand always is). */
let loopUntil = 0;

/** The scheduled job through wrangler dev's test endpoint (`--test-scheduled`), every SCHEDULED_SECONDS. */
function runScheduledLoop() {
  const urls = CRONS.map((cron) => `http://127.0.0.1:${PORT}/__scheduled?cron=${encodeURIComponent(cron)}`);
  let failures = 0;
  const timer = setInterval(async () => {
    loopUntil = Date.now() + 60_000;
    try {
      for (const url of urls) {
        const res = await fetch(url);
        await res.arrayBuffer();
      }
      failures = 0;
    } catch (err) {
      // The server restarting after an edit: the next minute runs it.
      if (++failures === 3) console.error(`The scheduled job could not be started (${err instanceof Error ? err.message : err}); it is retried every ${SCHEDULED_SECONDS} s.`);
    }
    // The runs' log lines reach us through wrangler's output a moment after their answers.
    loopUntil = Date.now() + 2_000;
  }, SCHEDULED_SECONDS * 1000);
  timer.unref();
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
  Emails:        simulated (nothing leaves the machine); each one opens on http://localhost:${PORT}/dashboard/console/emails
                 (their links start with PUBLIC_BASE_URL: ${publicBase.url})
  Scheduled job: every ${SCHEDULED_SECONDS} s (deposit expiry, payment checks, order completion, alerts), as in production

  Try it:
    curl -s -H "X-API-Key: ${demoKey ?? '<key>'}" ${base}/wallet/balance
    curl -s ${base}/stock
`;

// The banner goes out once the server is ready, so it is the last thing on screen rather than buried in wrangler's.
const child = spawnWrangler(['dev', '--port', PORT, '--test-scheduled', ...persist, ...paymentBase.varArgs, ...publicBase.varArgs, ...localMail(), ...args]);
let announced = false;
let bindingsShown = false;
let skippingTable = false;
let partial = '';
let flushTimer;
const BINDINGS_HEADING = 'Your Worker has access to the following bindings:';

/**
 * What wrangler prints, less its repetitions: the bindings table once (wrangler prints it again when the local server
 * connects), no line per run of the scheduled loop, and the loop's reports only when the job did something (a run
 * triggered by hand, as the README shows, always prints its report).
 */
function shown(line) {
  if (line.includes(BINDINGS_HEADING)) {
    if (bindingsShown) skippingTable = true;
    bindingsShown = true;
    if (skippingTable) return false;
  }
  if (skippingTable) {
    if (line.trim() === '') skippingTable = false;
    return false;
  }
  if (/GET \/__scheduled\b/.test(line)) return false;
  if (/"msg":"(sandbox )?scheduled jobs"/.test(line)) return Date.now() > loopUntil || !idleRun(line);
  return true;
}

/** A scheduled report whose every count is 0 (the sandbox's: the products it copied and the statements it spent aside). */
function idleRun(line) {
  const steady = new Set(['cron', 'products', 'statements']);
  try {
    const counts = JSON.stringify(JSON.parse(line.slice(line.indexOf('{'))), (key, value) => (steady.has(key) ? undefined : value));
    return !/[1-9]/.test(counts);
  } catch {
    return false;
  }
}

child.stdout.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop() ?? '';
  const out = lines.filter(shown);
  if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
  // A line without its end yet (a prompt): shown if nothing completes it soon.
  clearTimeout(flushTimer);
  if (partial !== '') {
    flushTimer = setTimeout(() => {
      if (!skippingTable) process.stdout.write(partial);
      partial = '';
    }, 200);
  }
  if (!announced && lines.some((line) => line.includes('Ready on'))) {
    announced = true;
    console.log(banner);
    runScheduledLoop();
  }
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code) => process.exit(code ?? 0));
