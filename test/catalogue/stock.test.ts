import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { BASE, call, expectError, newProduct, unique } from '../helpers';

// Public stock: no credentials, CORS for any origin, short public caching with ETags.
// Storage is shared between the tests of this file: every test makes its own products and looks for them.

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type StockEntry = { product_id: number; product_name: string; sku: string; stock_count: number; in_stock: boolean; price: number; cancellable: boolean };

async function stockList(): Promise<StockEntry[]> {
  const res = await call('/stock');
  expect(res.status, res.text).toBe(200);
  return res.json.data;
}

/** The one variant of a product made without variants, as a stock entry lists it. */
const standard = (sku: string, price: number, stockCount: number) => ({
  variant_id: expect.any(Number),
  name: 'Standard',
  sku,
  price,
  volume_prices: null,
  allowed_quantities: null,
  backorders: false,
  stock_count: stockCount,
  in_stock: stockCount > 0,
});

describe('GET /stock', () => {
  it('returns the envelope with an ISO timestamp and complete entries for active products', async () => {
    const stocked = await newProduct({ price: 4.99, stock: 3 });
    const empty = await newProduct({ price: 0.07, cancellable: false });

    const res = await call('/stock');
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.timestamp).toMatch(ISO_UTC);
    expect(Math.abs(Date.parse(res.json.timestamp) - Date.now())).toBeLessThan(60_000);
    expect(Array.isArray(res.json.data)).toBe(true);

    const byId = new Map<number, StockEntry>(res.json.data.map((e: StockEntry) => [e.product_id, e]));
    expect(byId.get(stocked.id)).toEqual({
      product_id: stocked.id,
      product_name: stocked.name,
      sku: stocked.sku,
      stock_count: 3,
      in_stock: true,
      price: 4.99,
      cancellable: true,
      // The catalogue's fields, after the spec's.
      category: null,
      image_url: null,
      final_sale: false,
      allowed_quantities: null,
      volume_prices: null,
      warranty_hours: 0,
      // A product made without variants has one, `Standard`, carrying its sku, price and stock.
      variants: [standard(stocked.sku, 4.99, 3)],
    });
    expect(byId.get(empty.id)).toEqual({
      product_id: empty.id,
      product_name: empty.name,
      sku: empty.sku,
      stock_count: 0,
      in_stock: false,
      price: 0.07,
      cancellable: false,
      category: null,
      image_url: null,
      final_sale: true,
      allowed_quantities: null,
      volume_prices: null,
      warranty_hours: 0,
      variants: [standard(empty.sku, 0.07, 0)],
    });
  });

  it('lists active products only', async () => {
    const active = await newProduct({ stock: 1 });
    const inactive = await newProduct({ stock: 2, active: false });
    const ids = (await stockList()).map((e) => e.product_id);
    expect(ids).toContain(active.id);
    expect(ids).not.toContain(inactive.id);
    // and every listed product is active in the database
    const { results } = await env.DB.prepare('SELECT id FROM products WHERE active = 0').all<{ id: number }>();
    for (const row of results) expect(ids).not.toContain(row.id);
  });

  it('lists newest first (created_at desc, id desc)', async () => {
    const first = await newProduct();
    const second = await newProduct();
    const third = await newProduct();
    const ids = (await stockList()).map((e) => e.product_id);
    expect(ids.indexOf(third.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(third.id)).toBeLessThan(ids.indexOf(second.id));
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));

    const { results } = await env.DB.prepare('SELECT id FROM products WHERE active = 1 ORDER BY created_at DESC, id DESC').all<{
      id: number;
    }>();
    expect(ids).toEqual(results.map((r) => r.id));
  });

  it('needs no API key, and ignores an invalid one', async () => {
    const product = await newProduct({ stock: 1 });
    const anonymous = await SELF.fetch(`${BASE}/stock`);
    expect(anonymous.status).toBe(200);
    const body = (await anonymous.json()) as { data: StockEntry[] };
    expect(body.data.map((e) => e.product_id)).toContain(product.id);

    const bogus = await call(`/stock/${product.id}`, { key: 'sk_live_not-a-real-key' });
    expect(bogus.status, bogus.text).toBe(200);
  });
});

describe('GET /stock/{product_id}', () => {
  it('returns the stock entry of one product', async () => {
    const product = await newProduct({ price: 12.5, stock: 2 });
    const res = await call(`/stock/${product.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ success: true });
    expect(res.json.data).toEqual({
      product_id: product.id,
      product_name: product.name,
      sku: product.sku,
      stock_count: 2,
      in_stock: true,
      price: 12.5,
      cancellable: true,
      category: null,
      image_url: null,
      final_sale: false,
      allowed_quantities: null,
      volume_prices: null,
      warranty_hours: 0,
      variants: [standard(product.sku, 12.5, 2)],
      description: null,
    });
  });

  it('answers 404 NOT_FOUND for an unknown product', async () => {
    const { max } = (await env.DB.prepare('SELECT coalesce(max(id), 0) AS max FROM products').first<{ max: number }>())!;
    expectError(await call(`/stock/${max + 1000}`), 404, 'NOT_FOUND');
  });

  it('answers 404 NOT_FOUND for an inactive product', async () => {
    const product = await newProduct({ stock: 1, active: false });
    expectError(await call(`/stock/${product.id}`), 404, 'NOT_FOUND');
  });

  it.each(['abc', '0', '-1', '1.5', '1e3'])('answers 422 VALIDATION_FAILED for the id %j', async (id) => {
    const res = await call(`/stock/${id}`);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('product_id');
  });
});

describe('GET /stock/check', () => {
  it('returns bulk entries in the order asked; unknown ids count 0', async () => {
    const a = await newProduct({ stock: 2 });
    const b = await newProduct({ stock: 0 });
    const { max } = (await env.DB.prepare('SELECT coalesce(max(id), 0) AS max FROM products').first<{ max: number }>())!;
    const unknown = max + 1000;

    const res = await call(`/stock/check?ids=${b.id},${unknown},${a.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toEqual([
      { product_id: b.id, stock_count: 0, in_stock: false },
      { product_id: unknown, stock_count: 0, in_stock: false },
      { product_id: a.id, stock_count: 2, in_stock: true },
    ]);
  });

  it('accepts exactly 50 distinct ids', async () => {
    const product = await newProduct({ stock: 1 });
    const ids = [product.id, ...Array.from({ length: 49 }, (_, i) => product.id + 1_000_000 + i)];
    const res = await call(`/stock/check?ids=${ids.join(',')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toHaveLength(50);
    expect(res.json.data.map((e: { product_id: number }) => e.product_id)).toEqual(ids);
    expect(res.json.data[0]).toEqual({ product_id: product.id, stock_count: 1, in_stock: true });
  });

  it('rejects 51 ids with 422', async () => {
    const ids = Array.from({ length: 51 }, (_, i) => i + 1);
    const res = await call(`/stock/check?ids=${ids.join(',')}`);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('ids');
  });

  it('rejects duplicate ids with 422', async () => {
    const product = await newProduct({ stock: 1 });
    const res = await call(`/stock/check?ids=${product.id},${product.id}`);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('ids');
  });

  it.each([
    ['ids=x', 'a non-numeric id'],
    ['ids=', 'an empty list'],
    ['', 'a missing ids parameter'],
    ['ids=1,,2', 'an empty element'],
    ['ids=0', 'zero'],
    ['ids=-3', 'a negative id'],
    ['ids=1.5', 'a fractional id'],
  ])('rejects %j (%s) with 422', async (query) => {
    const res = await call(`/stock/check${query ? `?${query}` : ''}`);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('ids');
  });
});

describe('GET /stock/categories', () => {
  type CategoryEntry = { category: string | null; total_products: number; total_stock: number };
  const categories = async (): Promise<CategoryEntry[]> => {
    const res = await call('/stock/categories');
    expect(res.status, res.text).toBe(200);
    expect(res.json.success).toBe(true);
    return res.json.data;
  };

  it('totals products and stock per category', async () => {
    const games = unique('games');
    const music = unique('music');
    await newProduct({ category: games, stock: 3 });
    await newProduct({ category: games, stock: 2 });
    await newProduct({ category: music, stock: 0 });

    const data = await categories();
    expect(data.find((c) => c.category === games)).toEqual({ category: games, total_products: 2, total_stock: 5 });
    expect(data.find((c) => c.category === music)).toEqual({ category: music, total_products: 1, total_stock: 0 });
    for (const entry of data) {
      expect(Number.isInteger(entry.total_products)).toBe(true);
      expect(Number.isInteger(entry.total_stock)).toBe(true);
    }
  });

  it("groups products without a category as 'uncategorized'", async () => {
    const before = (await categories()).find((c) => c.category === 'uncategorized') ?? { total_products: 0, total_stock: 0 };
    await newProduct({ category: null, stock: 4 });
    const data = await categories();
    expect(data.some((c) => c.category === null)).toBe(false);
    const after = data.find((c) => c.category === 'uncategorized');
    expect(after).toEqual({
      category: 'uncategorized',
      total_products: before.total_products + 1,
      total_stock: before.total_stock + 4,
    });
  });
});

describe('public stock at the edge', () => {
  const paths = async () => {
    const product = await newProduct({ stock: 1, category: unique('edge') });
    return [`/stock`, `/stock/${product.id}`, `/stock/check?ids=${product.id}`, `/stock/categories`];
  };

  it('sends CORS, public caching and an ETag on every stock route', async () => {
    for (const path of await paths()) {
      const res = await SELF.fetch(`${BASE}${path}`, { headers: { Origin: 'https://shop.example' } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Access-Control-Allow-Origin'), path).toBe('*');
      expect(res.headers.get('Cache-Control'), path).toBe('public, max-age=10');
      expect(res.headers.get('ETag'), path).toBeTruthy();
      await res.arrayBuffer();
    }
  });

  it('answers a matching If-None-Match with 304 and an empty body', async () => {
    for (const path of await paths()) {
      const first = await SELF.fetch(`${BASE}${path}`);
      await first.arrayBuffer();
      const tag = first.headers.get('ETag');
      expect(tag, path).toBeTruthy();

      const again = await SELF.fetch(`${BASE}${path}`, { headers: { 'If-None-Match': tag!, Origin: 'https://shop.example' } });
      expect(again.status, path).toBe(304);
      expect(await again.text(), path).toBe('');
      expect(again.headers.get('ETag'), path).toBe(tag);
      expect(again.headers.get('Access-Control-Allow-Origin'), path).toBe('*');
      expect(again.headers.get('Cache-Control'), path).toBe('public, max-age=10');
    }
  });

  it('answers a stale If-None-Match with the full body', async () => {
    const product = await newProduct({ stock: 1 });
    const res = await call(`/stock/${product.id}`, { headers: { 'If-None-Match': '"not-the-current-tag"' } });
    expect(res.status).toBe(200);
    expect(res.json.data.product_id).toBe(product.id);
  });

  it('changes the ETag when the stock changes', async () => {
    const product = await newProduct({ stock: 1 });
    const paths = [`/stock/${product.id}`, '/stock'];
    const before = await Promise.all(paths.map((path) => call(path)));
    const added = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: [unique('more')] } });
    expect(added.status, added.text).toBe(201);
    for (const [i, path] of paths.entries()) {
      const tag = before[i].headers.get('ETag')!;
      const after = await call(path, { headers: { 'If-None-Match': tag } });
      expect(after.status, path).toBe(200);
      expect(after.headers.get('ETag'), path).not.toBe(tag);
    }
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(2);
  });

  it('answers an OPTIONS preflight with 204 and CORS headers, without credentials', async () => {
    for (const path of ['/stock', '/stock/check?ids=1', '/stock/categories', '/stock/1']) {
      const res = await SELF.fetch(`${BASE}${path}`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'GET' },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('Access-Control-Allow-Origin'), path).toBe('*');
      expect(res.headers.get('Access-Control-Allow-Methods') ?? '', path).toContain('GET');
      expect(await res.text()).toBe('');
    }
  });

  it('sends CORS headers on stock errors too, so browsers can read them', async () => {
    const missing = await SELF.fetch(`${BASE}/stock/abc`, { headers: { Origin: 'https://shop.example' } });
    expect(missing.status).toBe(422);
    expect(missing.headers.get('Access-Control-Allow-Origin')).toBe('*');
    const bad = await SELF.fetch(`${BASE}/stock/check?ids=x`, { headers: { Origin: 'https://shop.example' } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });

  it('sends Cache-Control: no-store when STOCK_CACHE_SECONDS is 0', async () => {
    const product = await newProduct({ stock: 1 });
    const app = createCheckedApp();
    const res = await app.request(`/api/v2/stock/${product.id}`, {}, { ...env, STOCK_CACHE_SECONDS: '0' });
    expect(res.status).toBe(200);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
  });
});
