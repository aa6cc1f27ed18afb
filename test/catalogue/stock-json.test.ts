import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { toStatement } from '../../src/db/batch';
import { amountJson } from '../../src/db/json';
import { sha256Hex } from '../../src/lib/crypto';
import { centsToAmount } from '../../src/lib/money';
import { presentStock } from '../../src/routes/representations';
import { checkStockJson, listStockJson, stockByCategoryJson, type StockEntry } from '../../src/services/catalogue/stock';
import { call } from '../helpers';

// `/stock`, `/stock/check` and `/stock/categories` are rendered by SQLite (json_group_array) and sent as text. They
// must be byte for byte what the JS rendering they replaced wrote (JSON.stringify of presentStock's objects): that
// rendering is kept here as the reference, over a catalogue of awkward prices and names.

const PRICES = [7, 1250, 123456, 1000, 1, 10, 99, 100, 101, 110, 499, 1999, 5000, 100_000_000, 99_999_999, 29, 57, 115];
const NAMES = [
  'Plain',
  'Quote " inside',
  "Apostrophe's",
  'Back\\slash \\" and \\\\u0041',
  'Unicode: café – 日本語 – Ελληνικά',
  'Emoji 🎮🎁 and ZWJ 👩‍💻',
  'Control\tchars\nnew\rline \u0001 \u001f \u007f',
  '</script><b>html</b>',
  'Line sep \u2028 para sep \u2029',
  '',
];

const ts = (i: number) => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();

async function seedCatalogue(): Promise<number[]> {
  const statements = PRICES.map((cents, i) =>
    env.DB.prepare(
      `INSERT INTO products (name, sku, category, price_cents, active, stock_count, cancellable, created_at, updated_at, image, allowed_quantities)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(NAMES[i % NAMES.length], `JSON-SKU-${i}-"\\é`, i % 3 === 0 ? null : `Cat ${i % 3} "ü"`, cents, i % 7 === 6 ? 0 : 1, i % 4 === 0 ? 0 : i * 13, i % 2, ts(i % 5), ts(i),
      i % 4 === 1 ? null : `${'ab'.repeat(32)}.${['png', 'jpg', 'webp'][i % 3]}`, i % 5 === 2 ? null : JSON.stringify([1, 5, 10 + i])),
  );
  await env.DB.batch(statements);
  const { results } = await env.DB.prepare('SELECT id FROM products ORDER BY id').all<{ id: number }>();
  return results.map((r) => r.id);
}

// The JS rendering before issue 17, as it was (with the catalogue's fields since).
const ORIGIN = 'http://localhost';
async function jsList(): Promise<string> {
  const { results: rows } = await env.DB.prepare(
    `SELECT id AS productId, name AS productName, sku, stock_count AS stockCount, price_cents AS priceCents, cancellable,
            allowed_quantities AS allowedQuantities, category, image, volume_prices AS volumePrices, warranty_hours AS warrantyHours
     FROM products WHERE active = 1 ORDER BY created_at DESC, id DESC`,
  ).all<StockEntry>();
  return JSON.stringify(rows.map((row) => presentStock(row, ORIGIN)));
}

async function jsCheck(ids: number[]): Promise<string> {
  const { results } = await env.DB.prepare('SELECT id, stock_count FROM products WHERE active = 1').all<{ id: number; stock_count: number }>();
  const counts = new Map(results.map((r) => [r.id, r.stock_count]));
  return JSON.stringify(ids.map((id) => ({ product_id: id, stock_count: counts.get(id) ?? 0, in_stock: (counts.get(id) ?? 0) > 0 })));
}

async function jsCategories(): Promise<string> {
  const { results } = await env.DB.prepare(
    `SELECT coalesce(category, 'uncategorized') AS category, count(*) AS n, coalesce(sum(stock_count), 0) AS s
     FROM products WHERE active = 1 GROUP BY 1 ORDER BY 1`,
  ).all<{ category: string; n: number; s: number }>();
  return JSON.stringify(results.map((r) => ({ category: r.category, total_products: r.n, total_stock: r.s })));
}

describe('stock JSON rendered by SQLite', () => {
  it('is byte for byte the JS rendering: list, check and categories, empty and seeded', async () => {
    expect(await listStockJson(env.DB, ORIGIN)).toBe('[]');
    expect(await listStockJson(env.DB, ORIGIN)).toBe(await jsList());
    expect(await stockByCategoryJson(env.DB)).toBe(await jsCategories());

    const ids = await seedCatalogue();
    const list = await listStockJson(env.DB, ORIGIN);
    expect(list).toBe(await jsList());
    expect(JSON.parse(list).length).toBeGreaterThan(10);
    expect(await stockByCategoryJson(env.DB)).toBe(await jsCategories());
    // in the order asked, with inactive and unknown ids counting 0
    const asked = [...ids.slice(3, 9).reverse(), 999_999, ids[6], ids[0]];
    expect(await checkStockJson(env.DB, asked)).toBe(await jsCheck(asked));
  });

  it('renders every amount as JSON.stringify does: each cent to $2,000 and large prices', async () => {
    const cents = sql.raw('cents');
    const rendered = await toStatement(
      env.DB,
      sql`WITH RECURSIVE c(cents) AS (SELECT 0 UNION ALL SELECT cents + 1 FROM c WHERE cents < 200000)
          SELECT json_group_array(${amountJson(cents)} ORDER BY cents) AS json
          FROM (SELECT cents FROM c UNION ALL SELECT value FROM json_each(${JSON.stringify(LARGE)}))`,
    ).first<string>('json');
    const all = [...Array.from({ length: 200_001 }, (_, cents) => cents), ...LARGE].sort((a, b) => a - b);
    expect(rendered).toBe(JSON.stringify(all.map(centsToAmount)));
  });

  it('answers the routes with those bytes, the ETag of the JS rendering, and caches the same bytes', async () => {
    const data = await jsList();
    const res = await call('/stock');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('Content-Type')).toBe('application/json');
    // the JSON text, then the line break every JSON answer ends with (src/middleware/json-newline.ts)
    expect(res.text).toBe(`${JSON.stringify({ success: true, data: JSON.parse(data), timestamp: res.json.timestamp })}\n`);
    expect(res.headers.get('ETag')).toBe(`W/"${await sha256Hex(data)}"`);
    const cached = await call('/stock');
    expect(cached.text).toBe(res.text);
    expect(cached.headers.get('ETag')).toBe(res.headers.get('ETag'));

    const categories = await call('/stock/categories');
    expect(categories.text).toBe(`{"success":true,"data":${await jsCategories()}}\n`);
    const check = await call('/stock/check?ids=1,2,3');
    expect(check.text).toBe(`{"success":true,"data":${await jsCheck([1, 2, 3])}}\n`);
  });
});

const LARGE = [99_999_999, 100_000_000, 123_456_789, 987_654_321_01, 1_000_000_000_000 + 7];
