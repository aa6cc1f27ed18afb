import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { newOperator } from '../console-helpers';
import { signedInUser, visit } from '../dashboard-helpers';
import { newDeposit, newUser } from '../helpers';

// Every HTML page the service serves carries a Content-Security-Policy with `frame-ancestors 'none'`: the dashboard
// and console pages (and their error pages), the local checkout page, and /docs, a static file whose headers come
// from public/_headers (checked in test/dashboard/static-assets.test.ts; test/e2e/docs.e2e.test.ts checks them as `npm run dev`
// sends them, and the page in Chromium).

function expectFramingRefused(where: string, csp: string | null | undefined) {
  expect(csp ?? '', where).toMatch(/(^|;\s*)default-src /);
  expect(csp ?? '', where).toContain("frame-ancestors 'none'");
}

describe('every HTML page has a Content-Security-Policy that refuses framing', () => {
  it('the pages the worker renders: dashboard, console, checkout, and their error pages', async () => {
    const user = await signedInUser();
    const operator = await newOperator();
    const deposit = await newDeposit(await newUser(), { amount: 5 });
    const app = createCheckedApp();
    const pages = {
      signIn: await visit('/dashboard/sign-in'),
      overview: await visit('/dashboard', { cookie: user.cookie }),
      missingOrder: await visit('/dashboard/orders/999999999', { cookie: user.cookie }),
      console: await visit('/dashboard/console/deposits', { cookie: operator.cookie }),
      consoleRefused: await visit('/dashboard/console/deposits', { cookie: user.cookie }),
      checkout: await app.request(`/pay/${deposit.deposit_id}`, {}, env),
    };
    for (const [kind, res] of Object.entries(pages)) {
      expect(res.headers.get('Content-Type'), kind).toContain('text/html');
      expectFramingRefused(kind, res.headers.get('Content-Security-Policy'));
    }
  });

});
