import { SELF } from 'cloudflare:test';
import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { describe, expect, it } from 'vitest';
import { finishResponse, setResponseHeaders } from '../../src/middleware/finish-response';
import { newProduct } from '../helpers';

// The outermost middleware (src/middleware/finish-response.ts) sets what every answer carries once, on the way out:
// the request id, Cache-Control no-store unless the route set one, nosniff, and the line break after a JSON body.

function miniApp() {
  const app = new Hono();
  app.use('*', finishResponse);
  app.get('/json', (c) => c.json({ ok: true }));
  app.get('/json-newline', (c) => c.body('{"ok":true}\n', 200, { 'Content-Type': 'application/json' }));
  app.get('/json-length', (c) => c.body('{"ok":true}', 200, { 'Content-Type': 'application/json', 'Content-Length': '11' }));
  app.get('/cookies', (c) => {
    setCookie(c, 'a', '1');
    setCookie(c, 'b', '2');
    return c.json({ ok: true });
  });
  app.get('/cached', (c) => c.body('<svg/>', 200, { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=10' }));
  // Response.redirect's headers are immutable: the headers go on a copy.
  app.get('/redirect', () => Response.redirect('https://example.com/elsewhere', 302));
  return app;
}

describe('finishResponse', () => {
  it('ends a JSON answer with one line break and sets the request id, no-store and nosniff', async () => {
    const app = miniApp();
    for (const path of ['/json', '/json-newline']) {
      const res = await app.request(path, { headers: { 'X-Request-Id': 'abc-123' } });
      expect(await res.text(), path).toBe('{"ok":true}\n');
      expect(res.headers.get('Content-Type'), path).toMatch(/^application\/json/);
      expect(res.headers.get('X-Request-Id'), path).toBe('abc-123');
      expect(res.headers.get('Cache-Control'), path).toBe('no-store');
      expect(res.headers.get('X-Content-Type-Options'), path).toBe('nosniff');
    }
  });

  it('mints a request id when none (or a malformed one) comes in', async () => {
    const app = miniApp();
    const minted = await app.request('/json', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(minted.headers.get('X-Request-Id')).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it('keeps every Set-Cookie of a JSON answer and drops a Content-Length the line break made wrong', async () => {
    const app = miniApp();
    const res = await app.request('/cookies');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    const sized = await app.request('/json-length');
    expect(sized.headers.get('Content-Length')).not.toBe('11');
    expect(await sized.text()).toBe('{"ok":true}\n');
  });

  it("leaves other bodies as they are and keeps a route's own Cache-Control", async () => {
    const res = await miniApp().request('/cached');
    expect(await res.text()).toBe('<svg/>');
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=10');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
  });

  it('sets the headers on a copy when the answer has immutable headers', async () => {
    const res = await miniApp().request('/redirect');
    expect(res.status).toBe(302);
    expect(res.headers.get('Location')).toBe('https://example.com/elsewhere');
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    expect(res.headers.get('X-Request-Id')).toMatch(/^req_/);
  });

  it('setResponseHeaders changes a mutable answer in place (no copy)', async () => {
    const app = new Hono();
    let same: boolean | undefined;
    app.use('*', async (c, next) => {
      await next();
      const before = c.res;
      setResponseHeaders(c, (headers) => headers.set('X-Test', '1'));
      same = c.res === before;
    });
    app.get('/', (c) => c.text('hi'));
    const res = await app.request('/');
    expect(res.headers.get('X-Test')).toBe('1');
    expect(same).toBe(true);
  });

  it('on the app: a cached stock answer (a Cache API hit) keeps its headers and gets the line break once', async () => {
    const product = await newProduct({ stock: 2 });
    const url = `https://example.com/api/v2/stock/${product.id}`;
    const first = await SELF.fetch(url);
    const firstText = await first.text();
    const hit = await SELF.fetch(url);
    const hitText = await hit.text();
    expect(hitText).toBe(firstText);
    expect(hitText.endsWith('}\n')).toBe(true);
    expect(hit.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(hit.headers.get('ETag')).toBe(first.headers.get('ETag'));
    expect(hit.headers.get('Cache-Control')).toBe('public, max-age=10');
    expect(hit.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(hit.headers.get('X-Request-Id')).not.toBe(first.headers.get('X-Request-Id'));
  });
});
