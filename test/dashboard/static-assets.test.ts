import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import stylesheet from '../../assets/dashboard/app.css?raw';
import icon from '../../assets/dashboard/icon.svg?raw';
import headersFile from '../../public/_headers?raw';
import docsPage from '../../public/docs.html?raw';
import { sha256Hex } from '../../src/lib/crypto';
import { STATIC_ASSETS } from '../../src/generated/static-assets';
import { createCheckedApp } from '../contract';
import { signedInUser, visit } from '../dashboard-helpers';
import { newDeposit, newUser } from '../helpers';

// The pages' static files (contract, dashboard section): linked by URLs that carry a hash of their content, served by
// Workers Static Assets with a one-year immutable cache. Static Assets do not run in this suite (the worker's fetch is
// called directly), so this checks the parts: the URLs the pages link, the hash in them, and the headers file the
// platform applies; test/e2e/dashboard.e2e.test.ts fetches the files from `npm run dev` and checks the headers sent.

const SOURCES = { 'app.css': stylesheet, 'icon.svg': icon };
const linksOf = (html: string) => [...html.matchAll(/<link rel="(?:stylesheet|icon)" href="([^"]+)"/g)].map((m) => m[1]);

/** The headers public/_headers gives a path pattern. */
function headersFor(pattern: string): Record<string, string> {
  const lines = headersFile.split('\n').filter((line) => !line.startsWith('#'));
  const start = lines.indexOf(pattern);
  expect(start, `a rule for ${pattern} in public/_headers`).toBeGreaterThan(-1);
  const rule: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    if (!/^\s+\S/.test(line)) break;
    const [name, ...value] = line.trim().split(':');
    rule[name.toLowerCase()] = value.join(':').trim();
  }
  return rule;
}

describe('static files under content-hashed URLs', () => {
  it('each URL carries the hash of the file\'s content', async () => {
    for (const [name, content] of Object.entries(SOURCES)) {
      const [base, ext] = name.split('.');
      const hash = (await sha256Hex(content)).slice(0, 16);
      expect(STATIC_ASSETS[name as keyof typeof STATIC_ASSETS]).toBe(`/dashboard/assets/${base}.${hash}.${ext}`);
    }
  });

  it('the pages link only those URLs: dashboard pages, error pages, the checkout page and /docs', async () => {
    const user = await signedInUser();
    const hashed = Object.values(STATIC_ASSETS);
    const deposit = await newDeposit(await newUser(), { amount: 5 });
    const pages = [
      (await visit('/dashboard/sign-in')).text,
      (await visit('/dashboard/keys', { cookie: user.cookie })).text,
      (await visit('/dashboard/orders/999999999', { cookie: user.cookie })).text,
      await (await createCheckedApp().request(`/pay/${deposit.deposit_id}`, {}, env)).text(),
      docsPage,
    ];
    for (const html of pages) {
      const links = linksOf(html);
      expect(links.length).toBeGreaterThan(0);
      for (const href of links.filter((h) => h.startsWith('/dashboard/'))) expect(hashed).toContain(href);
    }
    expect(linksOf(pages[1])).toEqual([STATIC_ASSETS['app.css'], STATIC_ASSETS['icon.svg']]);
  });

  it('public/_headers caches them for a year, immutable, with the pages\' other headers; the pages stay no-store', async () => {
    expect(headersFor('/dashboard/assets/*')).toEqual({
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    });
    const page = await visit('/dashboard/sign-in');
    expect(page.headers.get('Cache-Control')).toBe('no-store');
  });

  it('/docs: its rule refuses framing and inline scripts, and the page has no inline script for it to have to allow', () => {
    const rule = headersFor('/docs');
    expect(rule['content-security-policy']).toMatch(/^default-src 'none';/);
    expect(rule['content-security-policy']).toContain("frame-ancestors 'none'");
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
