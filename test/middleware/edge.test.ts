import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { BASE, buy, call, newProduct, newUser, restock } from '../helpers';

const setStockCount = (productId: number, count: number) =>
  env.DB.prepare('UPDATE products SET stock_count = ? WHERE id = ?').bind(count, productId).run();

describe('public stock in the edge cache', () => {
  it('serves a repeated request from the cache without reading the database, until a change purges it', async () => {
    const product = await newProduct({ stock: 3 });
    const first = await call(`/stock/${product.id}`);
    expect(first.json.data.stock_count).toBe(3);

    // The database changes behind the cache's back: a hit does not read it.
    await setStockCount(product.id, 99);
    const cached = await call(`/stock/${product.id}`);
    expect(cached.json.data.stock_count).toBe(3);
    expect(cached.headers.get('Cache-Control')).toBe('public, max-age=10');
    expect(cached.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(cached.headers.get('X-Request-Id')).not.toBe(first.headers.get('X-Request-Id'));
    await setStockCount(product.id, 3);

    // A restock purges the product's entries in this location.
    await restock(product.id, 2);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(5);
  });

  it('a purchase and a cancel purge the product\'s own entries; the list and the categories live out their seconds', async () => {
    const category = `cat-${crypto.randomUUID()}`;
    const product = await newProduct({ price: 1, stock: 4, category });
    const user = await newUser({ balance: 10 });
    const countInList = async () => (await call('/stock')).json.data.find((e: { product_id: number }) => e.product_id === product.id).stock_count;
    const categoryStock = async () => (await call('/stock/categories')).json.data.find((e: { category: string }) => e.category === category).total_stock;
    expect(await countInList()).toBe(4);
    expect(await categoryStock()).toBe(4);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(4);

    const order = await buy(user, product.id, 1);
    expect(order.status).toBe(201);
    // A drop must not turn every storefront poll into a database read: the lists stay cached...
    expect(await countInList()).toBe(4);
    expect(await categoryStock()).toBe(4);
    // ...while the product's own entry shows the sale at once.
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(3);

    // Cancel purges the product too (the count stays: revoked items are never resold), so it is re-read from D1.
    await call(`/stock/${product.id}`);
    await env.DB.prepare('UPDATE products SET name = ? WHERE id = ?').bind('Renamed behind the cache', product.id).run();
    await call(`/orders/${order.json.data.id}/cancel`, { key: user.key, method: 'POST' });
    expect((await call(`/stock/${product.id}`)).json.data.product_name).toBe('Renamed behind the cache');

    // An operator's change to the catalogue purges the lists too.
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 2 } });
    expect(await countInList()).toBe(3);
    expect(await categoryStock()).toBe(3);
  });

  it('answers If-None-Match from the cache with 304 and the CORS header', async () => {
    const product = await newProduct({ stock: 1 });
    const first = await call(`/stock/${product.id}`);
    const etag = first.headers.get('ETag')!;
    await call(`/stock/${product.id}`); // now certainly cached
    const res = await SELF.fetch(`${BASE}/stock/${product.id}`, { headers: { 'If-None-Match': etag } });
    expect(res.status).toBe(304);
    expect(await res.text()).toBe('');
    expect(res.headers.get('ETag')).toBe(etag);
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });

  it('with STOCK_CACHE_SECONDS=0 sends no-store and never caches', async () => {
    const app = createCheckedApp();
    const uncached = { ...env, STOCK_CACHE_SECONDS: '0' };
    const product = await newProduct({ stock: 2 });
    const read = async () => app.request(`/api/v2/stock/${product.id}`, {}, uncached);
    const first = await read();
    expect(first.headers.get('Cache-Control')).toBe('no-store');
    expect(((await first.json()) as any).data.stock_count).toBe(2);
    await setStockCount(product.id, 7);
    expect(((await (await read()).json()) as any).data.stock_count).toBe(7);
    await setStockCount(product.id, 2);
  });

  it('authenticated responses are never cached', async () => {
    const user = await newUser({ balance: 1 });
    const res = await call('/wallet/balance', { key: user.key });
    expect(res.headers.get('Cache-Control')).toBe('no-store');
  });
});

describe('GET /stock/{product_id}/badge.svg', () => {
  it('renders an accessible in-stock badge with a grouped count', async () => {
    const product = await newProduct({ stock: 1234 });
    const res = await SELF.fetch(`${BASE}/stock/${product.id}/badge.svg`);
    expect(res.status).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('Cache-Control')).toBe('public, max-age=10');
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
    const svg = await res.text();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('role="img"');
    expect(svg).toContain('aria-label="in stock: 1,234"');
    expect(svg).toContain('<title>in stock: 1,234</title>');
  });

  it('says out of stock at zero, and 404s for unknown or inactive products', async () => {
    const empty = await newProduct({ stock: 0 });
    const svg = await (await SELF.fetch(`${BASE}/stock/${empty.id}/badge.svg`)).text();
    expect(svg).toContain('aria-label="out of stock"');
    const inactive = await newProduct({ stock: 3, active: false });
    expect((await call(`/stock/${inactive.id}/badge.svg`)).json.code).toBe('NOT_FOUND');
    expect((await call('/stock/999999999/badge.svg')).status).toBe(404);
  });
});
