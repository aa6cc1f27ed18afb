import { parse, validate } from '@readme/openapi-parser';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser } from './browser';
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

describe('static files beside the worker ([assets] in wrangler.toml)', () => {
  // The worker stamps X-Request-Id on every response it gives, so its absence shows the worker never ran.
  const ranWorker = (res: Response) => res.headers.has('X-Request-Id');

  it('serves /docs and its Swagger UI files without running the worker', async () => {
    for (const [path, type] of [
      ['/docs', 'text/html'],
      ['/vendor/swagger-ui/swagger-ui-bundle.js', 'text/javascript'],
      ['/vendor/swagger-ui/swagger-ui.css', 'text/css'],
    ]) {
      const res = await globalThis.fetch(`${server.origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Content-Type'), path).toContain(type);
      expect(ranWorker(res), path).toBe(false);
    }
  });

  it('sends /docs with a Content-Security-Policy that forbids framing and inline scripts', async () => {
    const res = await globalThis.fetch(`${server.origin}/docs`);
    const csp = res.headers.get('Content-Security-Policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.headers.get('X-Frame-Options')).toBe('DENY');
  });

  it('leaves the API, the badge, the checkout pages and unknown paths to the worker', async () => {
    const api = await fetch(`${server.api}`);
    expect([api.status, ranWorker(api)]).toEqual([200, true]);
    const badge = await fetch(`${server.api}/stock/1/badge.svg`);
    expect([badge.status, badge.headers.get('Content-Type'), ranWorker(badge)]).toEqual([200, 'image/svg+xml; charset=utf-8', true]);
    const checkout = await fetch(`${server.origin}/pay/999999`);
    expect([checkout.status, ranWorker(checkout)]).toEqual([404, true]);
    const missing = await globalThis.fetch(`${server.origin}/vendor/swagger-ui/missing.js`);
    expect([missing.status, (await missing.json()).code, ranWorker(missing)]).toEqual([404, 'NOT_FOUND', true]);
  });
});

describe.runIf(browserAvailable)('GET /docs in a real browser', () => {
  const browser = useBrowser();

  it('renders the reference offline, from static assets, and finds the purchase operation', async () => {
    const page = await browser().newPage();
    // Anything the page's Content-Security-Policy blocks is reported on the console.
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const offHost: string[] = [];
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === 'localhost' || url.hostname === '127.0.0.1') return route.continue();
      offHost.push(url.href);
      return route.abort();
    });
    await page.goto(`${server.origin}/docs`);
    // Sections start folded; opening "Orders" shows its operations.
    await page.locator('#operations-tag-Orders').click();
    const purchase = page.locator('.opblock-post', { hasText: '/api/v2/orders' }).first();
    await purchase.waitFor({ timeout: 30_000 });
    expect(await purchase.textContent()).toContain('Buy a product');
    await page.screenshot({ path: process.env.DOCS_SCREENSHOT ?? '/tmp/docs.png' });
    expect(offHost).toEqual([]);
    expect(blocked).toEqual([]);
  });
});
