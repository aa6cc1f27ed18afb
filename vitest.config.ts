import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { buildStaticAssets } from './scripts/static-assets.mjs';
import { holdBackKnownWorkerdLines, reporters } from './test/node/quiet-output.js';

// Wrangler's own info lines (one "Using secrets defined in .dev.vars" per test file for anyone who ran `npm run dev`)
// would double a passing run's output; warnings and errors still show. The vars are pinned below anyway.
process.env.WRANGLER_LOG ??= 'warn';

// The pages link their static files by content-hashed URLs (src/generated/static-assets.ts): written afresh here, so
// `npm test` after an edit to assets/ tests the edited files, with no extra command.
buildStaticAssets();

// A passing run prints its totals and nothing else; what is held back and why: test/node/quiet-output.ts.
holdBackKnownWorkerdLines();

export default defineConfig({
  // SEED=<n> reaches the tests as import.meta.env.SEED (test/seed.ts); process.env does not reach workerd.
  envPrefix: ['VITE_', 'SEED'],
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations('migrations'),
          ADMIN_TOKEN: 'test-admin-token',
          GATEWAY_ONE_WEBHOOK_SECRET: 'test-secret-one',
          GATEWAY_TWO_WEBHOOK_SECRET: 'test-secret-two',
          GATEWAY_THREE_WEBHOOK_SECRET: 'test-secret-three',
          // Every var is pinned here, so a developer's .dev.vars never changes what the tests see
          // (test/pinned-vars.test.ts fails when a var of src/env.ts, wrangler.toml or .dev.vars.example is not).
          // The test worker's own origin (test/helpers.ts' BASE): no payment link a test follows can lead to a
          // developer's `npm run dev` on :8787. Outbound requests are refused anyway (test/network.ts).
          PAYMENT_BASE_URL: 'http://localhost',
          // Links in emails start with it, never with the request's Host (test/mail/links.test.ts).
          PUBLIC_BASE_URL: 'http://localhost',
          DEV_CHECKOUT: 'true',
          ORDER_HOLD_HOURS: '24',
          DEPOSIT_TTL_MINUTES: '60',
          STOCK_CACHE_SECONDS: '10',
          // Tests that need more cancellations override it per request (`call(..., { env })` in test/helpers.ts).
          MAX_CANCELS_PER_DAY: '5',
          ALLOW_LOCAL_WEBHOOK_URLS: 'true',
          WEBHOOK_RETRY_BASE_SECONDS: '60',
          WEBHOOK_MAX_ATTEMPTS: '10',
          DASHBOARD_SIGNUP: 'open',
          GATEWAY_POLL_MINUTES: '5',
          GATEWAY_POLL_LIMIT: '20',
          // Every slot is the generic adapter, whatever provider block a developer's .dev.vars turns on; a test puts a
          // vendor on a slot per request (test/vendors.ts). Empty settings are unset (src/services/payments/gateways/slots.ts).
          GATEWAY_ONE_PROVIDER: 'generic',
          GATEWAY_ONE_API_KEY: '',
          GATEWAY_ONE_ACCOUNT: '',
          GATEWAY_ONE_API_URL: '',
          GATEWAY_TWO_PROVIDER: 'generic',
          GATEWAY_TWO_API_KEY: '',
          GATEWAY_TWO_ACCOUNT: '',
          GATEWAY_TWO_API_URL: '',
          GATEWAY_THREE_PROVIDER: 'generic',
          GATEWAY_THREE_API_KEY: '',
          GATEWAY_THREE_ACCOUNT: '',
          GATEWAY_THREE_API_URL: '',
          // test/mail/alerts.test.ts counts crossings of this threshold.
          LOW_STOCK_THRESHOLD: '10',
          // One log line per request would bury test output; test/middleware/logging.test.ts turns it on.
          LOG_REQUESTS: 'false',
          // Mail on (the binding is simulated); tests that need it off or with verification override these.
          EMAIL_FROM: 'Test Shop <shop@example.com>',
          SHOP_NAME: 'Test Shop',
          SUPPORT_EMAIL: 'help@example.com',
          EMAIL_VERIFICATION: 'off',
          // Never on in tests but those that turn it on (test/mail/preview.test.ts); `npm run dev` alone sets it.
          EMAIL_PREVIEW: 'false',
        },
        // The whole suite shares one client IP and a few keys: the production limits would throttle it. A tiny
        // limiter lets test/middleware/rate-limit.test.ts reach 429 with a handful of requests.
        // An empty database of its own for test/db/migrations-with-data.test.ts, which applies the migrations one by one.
        d1Databases: { UPGRADE_DB: 'upgrade-db' },
        ratelimits: {
          API_KEY_RATE_LIMITER: { namespace_id: '1001', simple: { limit: 100_000, period: 60 } },
          PUBLIC_RATE_LIMITER: { namespace_id: '1002', simple: { limit: 100_000, period: 60 } },
          TINY_RATE_LIMITER: { namespace_id: '1099', simple: { limit: 3, period: 60 } },
          // The dashboard's limits are the contract's own numbers (test/dashboard-throttle.test.ts counts to them);
          // tests that sign in spread over client IPs and emails instead.
          SIGN_IN_EMAIL_RATE_LIMITER: { namespace_id: '1003', simple: { limit: 5, period: 60 } },
          SIGN_IN_IP_RATE_LIMITER: { namespace_id: '1004', simple: { limit: 30, period: 60 } },
          SIGN_UP_IP_RATE_LIMITER: { namespace_id: '1005', simple: { limit: 10, period: 60 } },
          // Per user: every test user is new, so the contract's numbers fit the suite as they are.
          PASSWORD_CHECK_RATE_LIMITER: { namespace_id: '1006', simple: { limit: 5, period: 60 } },
          EMAIL_CHANGE_RATE_LIMITER: { namespace_id: '1007', simple: { limit: 5, period: 60 } },
          // The whole suite is one client IP; test/payments/gateways/slots.test.ts swaps in the tiny limiter to reach 429.
          VENDOR_INVOICE_IP_RATE_LIMITER: { namespace_id: '1008', simple: { limit: 100_000, period: 60 } },
          // The suite is one client IP; test/mail/email.test.ts counts to 429 with a limiter of the contract's size.
          FORGOT_PASSWORD_IP_RATE_LIMITER: { namespace_id: '1022', simple: { limit: 100_000, period: 60 } },
        },
      },
    }),
  ],
  test: {
    // Stylesheets are read as text (`?raw`) by test/dashboard/static-assets.test.ts; vitest otherwise hands tests an empty one.
    css: { include: [/assets\/dashboard\/.*\.css/] },
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'test/node/**', 'node_modules/**'],
    setupFiles: ['./test/setup.ts'],
    // A passing run prints no log line: what a passing test logs (often on purpose: a vendor failing, a corrupted row)
    // is dropped; a failing test's logs are printed with its failure. Tests that log on purpose assert it (test/logs.ts).
    silent: 'passed-only',
    reporters: reporters(),
    // Under load many tests pass 300 ms: only the truly slow are named in the summary.
    slowTestThreshold: 5_000,
    testTimeout: 30_000,
  },
});
