import { env } from 'cloudflare:test';
import { SELF } from '../contract';
import { describe, expect, it } from 'vitest';
import { balanceOf, BASE, buy, call, expectError, fund, newProduct, newUser, unique } from '../helpers';

// Operator surface: users, balance adjustments, products, stock uploads. Storage is shared between the tests of
// this file: every test makes its own users and products.

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const createUser = (body: unknown) => call('/admin/users', { admin: true, body });
const createProduct = (body: unknown) => call('/admin/products', { admin: true, body });
const patchProduct = (id: number, body: unknown) => call(`/admin/products/${id}`, { admin: true, method: 'PATCH', body });
const addItems = (id: number, items: unknown) => call(`/admin/products/${id}/stock`, { admin: true, body: { items } });
const addText = (id: number, text: string) =>
  call(`/admin/products/${id}/stock`, { admin: true, body: text, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
const adjust = (userId: number, body: unknown) => call(`/admin/users/${userId}/balance-adjustments`, { admin: true, body });

async function unknownId(table: 'users' | 'products') {
  const row = await env.DB.prepare(`SELECT coalesce(max(id), 0) AS max FROM ${table}`).first<{ max: number }>();
  return row!.max + 1000;
}

async function itemsOf(productId: number) {
  const { results } = await env.DB.prepare("SELECT content FROM stock_items WHERE product_id = ? AND status = 'available' ORDER BY id")
    .bind(productId)
    .all<{ content: string }>();
  return results.map((r) => r.content);
}

const validProduct = () => ({ name: 'Gift card', sku: unique('SKU'), price: 9.99 });

describe('admin authentication', () => {
  const routes: Array<[string, string, unknown]> = [
    ['POST', '/admin/users', { name: 'X', email: 'x@example.com', password: 'long enough pw' }],
    ['POST', '/admin/users/1/balance-adjustments', { amount: 1, description: 'x' }],
    ['POST', '/admin/products', { name: 'X', sku: 'X', price: 1 }],
    ['PATCH', '/admin/products/1', { price: 1 }],
    ['POST', '/admin/products/1/stock', { items: ['x'] }],
  ];

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer wrong-token'],
    ['the token without the Bearer scheme', 'test-admin-token'],
    ['a token prefix', 'Bearer test-admin'],
    ['lower-case scheme with a wrong token', 'bearer nope'],
  ])('answers 401 UNAUTHORIZED with %s and writes nothing', async (_label, authorization) => {
    const before = await env.DB.prepare('SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM products) AS p').first();
    for (const [method, path, body] of routes) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (authorization) headers.Authorization = authorization;
      const res = await SELF.fetch(`${BASE}${path}`, { method, headers, body: JSON.stringify(body) });
      const json = await res.json();
      expectError({ status: res.status, json }, 401, 'UNAUTHORIZED');
    }
    const after = await env.DB.prepare('SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM products) AS p').first();
    expect(after).toEqual(before);
  });

  it('does not accept a user API key as the admin token', async () => {
    const user = await newUser();
    const res = await call('/admin/products', { body: validProduct(), headers: { Authorization: `Bearer ${user.key}` } });
    expectError(res, 401, 'UNAUTHORIZED');
    expectError(await call('/admin/products', { key: user.key, body: validProduct() }), 401, 'UNAUTHORIZED');
  });
});

describe('POST /admin/users', () => {
  it('creates a user with balance 0 and a working first API key', async () => {
    const email = `${unique('admin-user')}@example.com`;
    const res = await createUser({ name: 'Ada Lovelace', email, password: 'correct horse battery' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    const data = res.json.data;
    expect(Object.keys(data).sort()).toEqual(['api_key', 'balance', 'created_at', 'discount_percent', 'email', 'id', 'name', 'referred_by']);
    expect(data).toMatchObject({ name: 'Ada Lovelace', email, balance: 0 });
    expect(Number.isInteger(data.id)).toBe(true);
    expect(data.created_at).toMatch(ISO_UTC);
    expect(data.api_key).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);

    const profile = await call('/user/profile', { key: data.api_key });
    expect(profile.status, profile.text).toBe(200);
    expect(profile.json.data).toMatchObject({ id: data.id, email, name: 'Ada Lovelace', balance: 0 });

    // only a hash of the key is stored, and the password is not stored in clear
    const stored = await env.DB.prepare(
      'SELECT u.password_hash AS hash, k.key_hash AS keyHash FROM users u JOIN api_keys k ON k.user_id = u.id WHERE u.id = ?',
    )
      .bind(data.id)
      .first<{ hash: string; keyHash: string }>();
    expect(stored!.hash).not.toContain('correct horse battery');
    expect(stored!.keyHash).not.toBe(data.api_key);
  });

  it('rejects a duplicate email (case-insensitively) with 422 errors.email', async () => {
    const email = `${unique('dup')}@example.com`;
    expect((await createUser({ name: 'First', email, password: 'password123' })).status).toBe(201);
    for (const again of [email, email.toUpperCase()]) {
      const res = await createUser({ name: 'Second', email: again, password: 'password123' });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors).toHaveProperty('email');
    }
    const row = await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first<{ n: number }>();
    expect(row!.n).toBe(1);
  });

  it.each([
    ['a malformed email', { name: 'X', email: 'not-an-email', password: 'password123' }, 'email'],
    ['a missing email', { name: 'X', password: 'password123' }, 'email'],
    ['a 7-character password', { name: 'X', email: 'short@example.com', password: 'seven77' }, 'password'],
    ['a missing password', { name: 'X', email: 'nopw@example.com' }, 'password'],
    ['a missing name', { email: 'noname@example.com', password: 'password123' }, 'name'],
    ['a blank name', { name: '   ', email: 'blank@example.com', password: 'password123' }, 'name'],
  ])('rejects %s with 422', async (_label, body, field) => {
    const res = await createUser(body);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty(field);
  });
});

describe('POST /admin/users/{id}/balance-adjustments', () => {
  it("credits with an 'adjustment' transaction", async () => {
    const user = await newUser();
    const res = await adjust(user.id, { amount: 12.34, description: 'goodwill credit' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toMatchObject({ type: 'adjustment', amount: 12.34, balance_after: 12.34, description: 'goodwill credit' });
    expect(Number.isInteger(res.json.data.id)).toBe(true);
    expect(res.json.data.created_at).toMatch(ISO_UTC);
    expect(await balanceOf(user)).toBe(12.34);

    const row = await env.DB.prepare('SELECT balance_cents FROM users WHERE id = ?').bind(user.id).first<{ balance_cents: number }>();
    expect(row!.balance_cents).toBe(1234);
  });

  it('debits with a negative amount, down to exactly zero', async () => {
    const user = await newUser({ balance: 10 });
    const debit = await adjust(user.id, { amount: -2.34, description: 'correction' });
    expect(debit.status, debit.text).toBe(201);
    expect(debit.json.data).toMatchObject({ type: 'adjustment', amount: -2.34, balance_after: 7.66 });
    const toZero = await adjust(user.id, { amount: -7.66, description: 'close out' });
    expect(toZero.status, toZero.text).toBe(201);
    expect(toZero.json.data.balance_after).toBe(0);
    expect(await balanceOf(user)).toBe(0);
  });

  it('refuses a debit below zero with 400 INSUFFICIENT_BALANCE and changes nothing', async () => {
    const user = await newUser({ balance: 5 });
    const count = async () =>
      (await env.DB.prepare('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?').bind(user.id).first<{ n: number }>())!.n;
    const before = await count();
    const res = await adjust(user.id, { amount: -5.01, description: 'too much' });
    expectError(res, 400, 'INSUFFICIENT_BALANCE');
    expect(await balanceOf(user)).toBe(5);
    expect(await count()).toBe(before);
  });

  it.each([
    ['amount 0', { amount: 0, description: 'zero' }, 'amount'],
    ['3 decimals', { amount: 1.234, description: 'precise' }, 'amount'],
    ['a string amount', { amount: '5', description: 'string' }, 'amount'],
    ['a missing amount', { description: 'nothing' }, 'amount'],
    ['a missing description', { amount: 5 }, 'description'],
  ])('rejects %s with 422', async (_label, body, field) => {
    const user = await newUser({ balance: 1 });
    const res = await adjust(user.id, body);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty(field);
    expect(await balanceOf(user)).toBe(1);
  });

  it('answers 404 NOT_FOUND for an unknown user', async () => {
    expectError(await adjust(await unknownId('users'), { amount: 5, description: 'ghost' }), 404, 'NOT_FOUND');
    expectError(await adjust(await unknownId('users'), { amount: -5, description: 'ghost' }), 404, 'NOT_FOUND');
  });
});

describe('POST /admin/products', () => {
  it('creates a product and returns it in full', async () => {
    const sku = unique('SKU');
    const category = unique('cat');
    const res = await createProduct({ name: 'Steam card', sku, category, price: 19.99, allowed_quantities: [1, 5, 10] });
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    const data = res.json.data;
    expect(data).toEqual({
      id: expect.any(Number),
      name: 'Steam card',
      sku,
      category,
      price: 19.99,
      allowed_quantities: [1, 5, 10],
      volume_prices: null,
      active: true,
      cancellable: true,
      stock_count: 0,
      created_at: expect.stringMatching(ISO_UTC),
      updated_at: expect.stringMatching(ISO_UTC),
      description: null,
      image_url: null,
      warranty_hours: 0,
      referral_percent: null,
    });
    const row = await env.DB.prepare('SELECT price_cents, active FROM products WHERE id = ?').bind(data.id).first();
    expect(row).toEqual({ price_cents: 1999, active: 1 });
  });

  it('defaults category and allowed_quantities to null', async () => {
    const res = await createProduct(validProduct());
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({ category: null, allowed_quantities: null, active: true });
  });

  it('creates an inactive product that public stock does not show', async () => {
    const res = await createProduct({ ...validProduct(), active: false });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.active).toBe(false);
    expectError(await call(`/stock/${res.json.data.id}`), 404, 'NOT_FOUND');
  });

  it('rejects a duplicate sku with 422 errors.sku', async () => {
    const body = validProduct();
    expect((await createProduct(body)).status).toBe(201);
    const res = await createProduct({ ...body, name: 'Another' });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('sku');
  });

  it.each([
    ['0', 0],
    ['negative', -1],
    ['3 decimals', 1.999],
    ['a string', '9.99'],
    ['null', null],
  ])('rejects a price that is %s with 422 errors.price', async (_label, price) => {
    const body = { ...validProduct(), price };
    const res = await createProduct(body);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toHaveProperty('price');
    const row = await env.DB.prepare('SELECT count(*) AS n FROM products WHERE sku = ?').bind(body.sku).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it.each([
    ['a missing name', { sku: 'x', price: 1 }, 'name'],
    ['a missing sku', { name: 'x', price: 1 }, 'sku'],
    ['a string active', { name: 'x', sku: 'x', price: 1, active: 'yes' }, 'active'],
    ['empty allowed_quantities', { name: 'x', sku: 'x', price: 1, allowed_quantities: [] }, 'allowed_quantities'],
    ['fractional allowed_quantities', { name: 'x', sku: 'x', price: 1, allowed_quantities: [1.5] }, 'allowed_quantities'],
  ])('rejects %s with 422', async (_label, body, field) => {
    const res = await createProduct(body);
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(Object.keys(res.json.errors).some((k) => k === field || k.startsWith(`${field}.`))).toBe(true);
  });
});

describe('PATCH /admin/products/{id}', () => {
  it('changes the price, visible in the product and in public stock', async () => {
    const product = await newProduct({ price: 5, stock: 1 });
    const res = await patchProduct(product.id, { price: 7.25, name: 'Renamed' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ id: product.id, price: 7.25, name: 'Renamed', sku: product.sku, stock_count: 1, active: true });
    const stock = await call(`/stock/${product.id}`);
    expect(stock.json.data).toMatchObject({ price: 7.25, product_name: 'Renamed' });
  });

  it('leaves fields that are not sent untouched', async () => {
    const category = unique('keep');
    const product = await newProduct({ price: 3, category, allowedQuantities: [2, 4] });
    const res = await patchProduct(product.id, { name: 'Only the name' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ name: 'Only the name', price: 3, category, allowed_quantities: [2, 4], active: true });
  });

  it('hides a deactivated product from public stock, and shows it again when reactivated', async () => {
    const product = await newProduct({ stock: 2 });
    const off = await patchProduct(product.id, { active: false });
    expect(off.status, off.text).toBe(200);
    expect(off.json.data.active).toBe(false);
    expectError(await call(`/stock/${product.id}`), 404, 'NOT_FOUND');
    const list = await call('/stock');
    expect(list.json.data.map((e: { product_id: number }) => e.product_id)).not.toContain(product.id);

    expect((await patchProduct(product.id, { active: true })).status).toBe(200);
    expect((await call(`/stock/${product.id}`)).json.data).toMatchObject({ product_id: product.id, stock_count: 2 });
  });

  it('answers 404 NOT_FOUND for an unknown product', async () => {
    expectError(await patchProduct(await unknownId('products'), { price: 1 }), 404, 'NOT_FOUND');
  });

  it('rejects a taken sku and invalid fields with 422, changing nothing', async () => {
    const a = await newProduct({ price: 2 });
    const b = await newProduct({ price: 3 });
    const taken = await patchProduct(b.id, { sku: a.sku });
    expectError(taken, 422, 'VALIDATION_FAILED');
    expect(taken.json.errors).toHaveProperty('sku');
    const badPrice = await patchProduct(b.id, { price: 0 });
    expectError(badPrice, 422, 'VALIDATION_FAILED');
    expect(badPrice.json.errors).toHaveProperty('price');
    expect((await call(`/stock/${b.id}`)).json.data).toMatchObject({ sku: b.sku, price: 3 });
  });
});

describe('POST /admin/products/{id}/stock', () => {
  it('adds JSON items and answers 201 with added, skipped and stock_count', async () => {
    const product = await newProduct();
    const res = await addItems(product.id, ['CODE-A', 'CODE-B', 'CODE-C']);
    expect(res.status, res.text).toBe(201);
    expect(res.json.success).toBe(true);
    expect(res.json.data).toEqual({ added: 3, skipped: 0, stock_count: 3 });
    expect(await itemsOf(product.id)).toEqual(['CODE-A', 'CODE-B', 'CODE-C']);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(3);
  });

  it('skips duplicates within the call and items that already exist', async () => {
    const product = await newProduct();
    const first = await addItems(product.id, ['A', 'B', 'A', 'C', 'B']);
    expect(first.status, first.text).toBe(201);
    expect(first.json.data).toEqual({ added: 3, skipped: 2, stock_count: 3 });

    const second = await addItems(product.id, ['C', 'D', 'A']);
    expect(second.status, second.text).toBe(201);
    expect(second.json.data).toEqual({ added: 1, skipped: 2, stock_count: 4 });
    expect(await itemsOf(product.id)).toEqual(['A', 'B', 'C', 'D']);
  });

  it('does not treat the same item of another product as a duplicate', async () => {
    const one = await newProduct();
    const two = await newProduct();
    const shared = unique('SHARED');
    expect((await addItems(one.id, [shared])).json.data).toEqual({ added: 1, skipped: 0, stock_count: 1 });
    expect((await addItems(two.id, [shared])).json.data).toEqual({ added: 1, skipped: 0, stock_count: 1 });
  });

  it('trims surrounding whitespace and ignores blank items', async () => {
    const product = await newProduct();
    const res = await addItems(product.id, ['  padded  ', '\tTAB\t', '', '   ', 'inner  space', 'padded']);
    expect(res.status, res.text).toBe(201);
    // 'padded' repeats the trimmed '  padded  ': skipped; blanks are ignored, not counted as skipped
    expect(res.json.data).toEqual({ added: 3, skipped: 1, stock_count: 3 });
    expect(await itemsOf(product.id)).toEqual(['padded', 'TAB', 'inner  space']);
  });

  it('accepts a text/plain body with one item per line', async () => {
    const product = await newProduct();
    const res = await addText(product.id, 'LINE-1\nLINE-2\r\n\n   \n  LINE-3  \nLINE-1\n');
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toEqual({ added: 3, skipped: 1, stock_count: 3 });
    expect(await itemsOf(product.id)).toEqual(['LINE-1', 'LINE-2', 'LINE-3']);
  });

  it('accepts exactly 10,000 items in one call', async () => {
    const product = await newProduct();
    const items = Array.from({ length: 10_000 }, (_, i) => `BULK-${product.id}-${i}`);
    const res = await addItems(product.id, items);
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toEqual({ added: 10_000, skipped: 0, stock_count: 10_000 });
    const row = await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'")
      .bind(product.id)
      .first<{ n: number }>();
    expect(row!.n).toBe(10_000);
    expect((await call(`/stock/${product.id}`)).json.data).toMatchObject({ stock_count: 10_000, in_stock: true });
  });

  it('rejects 10,001 items with 422 and adds none (JSON and text)', async () => {
    const product = await newProduct();
    const items = Array.from({ length: 10_001 }, (_, i) => `OVER-${i}`);
    const json = await addItems(product.id, items);
    expectError(json, 422, 'VALIDATION_FAILED');
    expect(json.json.errors).toHaveProperty('items');
    const text = await addText(product.id, items.join('\n'));
    expectError(text, 422, 'VALIDATION_FAILED');
    expect(text.json.errors).toHaveProperty('items');
    expect(await itemsOf(product.id)).toEqual([]);
  });

  it('answers 404 NOT_FOUND for an unknown product, adding nothing', async () => {
    const id = await unknownId('products');
    expectError(await addItems(id, ['ghost']), 404, 'NOT_FOUND');
    expectError(await addText(id, 'ghost'), 404, 'NOT_FOUND');
    const row = await env.DB.prepare('SELECT count(*) AS n FROM stock_items WHERE product_id = ?').bind(id).first<{ n: number }>();
    expect(row!.n).toBe(0);
  });

  it.each([
    ['a missing items field', {}],
    ['items that is not an array', { items: 'CODE' }],
    ['a non-string item', { items: ['ok', 5] }],
  ])('rejects %s with 422 errors.items', async (_label, body) => {
    const product = await newProduct();
    const res = await call(`/admin/products/${product.id}/stock`, { admin: true, body });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(Object.keys(res.json.errors).some((k) => k.startsWith('items'))).toBe(true);
  });
});

// Emoji without a zero-width joiner: human text refuses U+200D like every invisible character (docs/security.md).
describe('hostile and non-ASCII text is stored and returned verbatim', () => {
  const HOSTILE = ["'; DROP TABLE users; --", 'Robert"); DELETE FROM stock_items; --', 'Ünïcødé 日本語 Ελληνικά', 'emoji 🎟️🔥👩💻', "back\\slash % _ ' \""];

  it('in product names, skus and categories', async () => {
    for (const [i, name] of HOSTILE.entries()) {
      const sku = `${name} ${unique('sku')}`;
      const category = `${name} ${unique('cat')}`;
      const created = await createProduct({ name, sku, category, price: 1 + i });
      expect(created.status, created.text).toBe(201);
      expect(created.json.data).toMatchObject({ name, sku, category });

      const stock = await call(`/stock/${created.json.data.id}`);
      expect(stock.json.data).toMatchObject({ product_name: name, sku });
      const categories = await call('/stock/categories');
      expect(categories.json.data.map((c: { category: string }) => c.category)).toContain(category);
    }
    const tables = await env.DB.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'products', 'stock_items')").first<{ n: number }>();
    expect(tables!.n).toBe(3);
  });

  it('in stock items, through upload, purchase and export', async () => {
    const product = await newProduct({ name: "'; DROP TABLE users; -- 🎟️", price: 1 });
    const added = await addItems(product.id, HOSTILE);
    expect(added.status, added.text).toBe(201);
    expect(added.json.data).toEqual({ added: HOSTILE.length, skipped: 0, stock_count: HOSTILE.length });
    expect(await itemsOf(product.id)).toEqual(HOSTILE);

    const user = await newUser({ balance: 100 });
    const order = await buy(user, product.id, HOSTILE.length);
    expect(order.status, order.text).toBe(201);
    expect([...order.json.data.stock_items].sort()).toEqual([...HOSTILE].sort());

    const detail = await call(`/orders/${order.json.data.id}`, { key: user.key });
    expect(detail.json.data.product_name).toBe("'; DROP TABLE users; -- 🎟️");
    expect([...detail.json.data.stock_items].sort()).toEqual([...HOSTILE].sort());

    const exported = await call(`/orders/${order.json.data.id}/export?format=txt`, { key: user.key });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.text.split('\n').filter((line) => line !== '').sort()).toEqual([...HOSTILE].sort());
  });

  it('in user names and adjustment descriptions', async () => {
    const name = "O'Brien; DROP TABLE users; -- 👩💻";
    const res = await createUser({ name, email: `${unique('hostile')}@example.com`, password: 'password123' });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.name).toBe(name);
    const tx = await fund({ id: res.json.data.id }, 1);
    expect(tx.type).toBe('adjustment');
    const description = "refund'); UPDATE users SET balance_cents = 999999; -- 💸";
    const adj = await adjust(res.json.data.id, { amount: 2, description });
    expect(adj.status, adj.text).toBe(201);
    expect(adj.json.data.description).toBe(description);
    const profile = await call('/user/profile', { key: res.json.data.api_key });
    expect(profile.json.data).toMatchObject({ name, balance: 3 });
  });
});
