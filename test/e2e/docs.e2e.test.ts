import { parse, validate } from '@readme/openapi-parser';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { browserAvailable, launchBrowser } from './browser';
import { contractFetch } from './checked-fetch';

const server = inject('devServer');
const fetch = contractFetch(server.api);

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (checked by a real validator)', async () => {
    const doc = await (await fetch(`${server.api}/openapi.json`)).json();
    const result = await validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors ?? [], null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    const api = await parse(structuredClone(doc));
    expect(api.openapi).toBe('3.1.0');
    expect(api.info.version).toBe('2.0');
  });
});

describe.runIf(browserAvailable)('GET /docs in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders the reference offline, assets served by the worker, and finds the purchase operation', async () => {
    const page = await browser.newPage();
    const offHost: string[] = [];
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === 'localhost' || url.hostname === '127.0.0.1') return route.continue();
      offHost.push(url.href);
      return route.abort();
    });
    await page.goto(`${server.origin}/docs`);
    const purchase = page.locator('.opblock-post', { hasText: '/api/v2/orders' }).first();
    await purchase.waitFor({ timeout: 30_000 });
    expect(await purchase.textContent()).toContain('Buy a product');
    await page.screenshot({ path: process.env.DOCS_SCREENSHOT ?? '/tmp/docs.png' });
    expect(offHost).toEqual([]);
  });
});
