import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import headersFile from '../public/_headers?raw';
import docsPage from '../public/docs.html?raw';
import { createCheckedApp } from './contract';
import { newOperator } from './console-helpers';
import { signedInUser, visit } from './dashboard-helpers';
import { newDeposit, newUser } from './helpers';

// Every HTML page the service serves carries a Content-Security-Policy with `frame-ancestors 'none'`: the dashboard
// and console pages (and their error pages), the local checkout page, and /docs, a static file whose headers come
// from public/_headers (test/e2e/docs.e2e.test.ts checks them as `npm run dev` sends them, and the page in Chromium).

/** The headers public/_headers gives one path. */
function staticHeaders(path: string): Record<string, string> {
  const lines = headersFile.split('\n').filter((line) => !line.startsWith('#'));
  const start = lines.indexOf(path);
  expect(start, `a rule for ${path} in public/_headers`).toBeGreaterThan(-1);
  const rule: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    if (!/^\s+\S/.test(line)) break;
    const [name, ...value] = line.trim().split(':');
    rule[name.toLowerCase()] = value.join(':').trim();
  }
  return rule;
}

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

  it('/docs (a static file): its rule in public/_headers, and no inline script for that rule to have to allow', () => {
    const rule = staticHeaders('/docs');
    expectFramingRefused('/docs', rule['content-security-policy']);
    expect(rule['content-security-policy']).toMatch(/script-src 'self'(;|$)/);
    expect(rule['x-frame-options']).toBe('DENY');
    const scripts = [...docsPage.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/[^"]+"/);
      expect(body.trim()).toBe('');
    }
  });
});
