import { describe, expect, it } from 'vitest';
import { buy, call, newProduct, newUser, restock, type TestUser } from '../helpers';
import { measure, type Measured } from '../measure';

// A bigger shop must not make each request slower (issue #50). D1 says how many rows each statement read
// (`meta.rows_read`, its billing unit and the primary's work): a purchase through a key with a daily spend limit, and
// every list with its total, must read the same rows whatever the history of the user, the key family and the shop,
// because what they used to count is kept (migrations/0030_counts_kept.sql). Only the page answered may cost rows.

const PAGE = 5;
/** Rows a request may read more on the grown shop (a B-tree one level deeper, a sibling page of an index). */
const SLACK = 3;

async function newKey(makerKey: string, spendLimit: number): Promise<string> {
  const res = await call('/api-keys', { key: makerKey, body: { name: 'limited', spend_limit_per_day: spendLimit } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key;
}

async function deposit(user: TestUser) {
  const res = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } });
  expect(res.status, res.text).toBe(200);
}

const LISTS = ['/orders', '/wallet/transactions', '/wallet/deposits'].map((path) => `${path}?per_page=${PAGE}`).concat(['/api-keys', '/user/dashboard']);

async function readsOf(user: TestUser): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  for (const path of LISTS) {
    const res = await measure(path, { key: user.key });
    expect(res.status, path).toBe(200);
    expect(res.trips.length, path).toBe(1);
    rows[path] = res.rowsRead;
  }
  return rows;
}

async function purchaseThrough(key: string, productId: number): Promise<Measured> {
  const res = await measure('/orders', { key, body: { product_id: productId, quantity: 1 } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res;
}

describe('rows read per request do not grow with history', () => {
  it('a limited key family\'s purchase and the lists read the same rows on a small shop and after it grew', { timeout: 120_000 }, async () => {
    const user = await newUser({ balance: 400 });
    const product = await newProduct({ price: 1, stock: 130 });
    // A limited key, and a key made by it with a lower limit: a purchase through the child is checked against both.
    const parent = await newKey(user.key, 1000);
    const child = await newKey(parent, 500);

    await purchaseThrough(child, product.id);
    const afterOne = await purchaseThrough(child, product.id);
    for (let i = 0; i < PAGE; i++) await purchaseThrough(child, product.id);
    for (let i = 0; i < PAGE; i++) await deposit(user);
    const small = await readsOf(user);

    // The shop grows: 100 more purchases through the family today, more deposits, a cancel, other buyers and items.
    for (let round = 0; round < 20; round++) {
      await Promise.all(Array.from({ length: 5 }, () => purchaseThrough(child, product.id)));
    }
    for (let i = 0; i < 20; i++) await deposit(user);
    const orders = (await call('/orders?per_page=1', { key: user.key })).json.data;
    expect((await call(`/orders/${orders[0].id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    const other = await newUser({ balance: 50 });
    const otherProduct = await newProduct({ price: 0.5, stock: 40 });
    await restock(otherProduct.id, 2000);
    for (let i = 0; i < 30; i++) expect((await buy(other, otherProduct.id)).status).toBe(201);

    const afterHundred = await purchaseThrough(child, product.id);
    const grown = await readsOf(user);

    expect(afterOne.rowsRead).toBeGreaterThan(0);
    expect(afterHundred.rowsRead, `a purchase after 1 read ${afterOne.rowsRead} rows, after 107 ${afterHundred.rowsRead}`).toBeLessThanOrEqual(afterOne.rowsRead);
    for (const path of LISTS) {
      expect(grown[path], `${path}: ${small[path]} rows on the small shop, ${grown[path]} after it grew`).toBeLessThanOrEqual(small[path] + SLACK);
    }
    // The kept totals are the history's (the ledger audit checks every user; here what the lists answer).
    const list = await call('/orders?per_page=1', { key: user.key });
    expect(list.json.meta.total).toBe(108);
    const dashboard = (await call('/user/dashboard', { key: user.key })).json.data;
    expect([dashboard.total_orders, dashboard.pending_orders, dashboard.total_spent]).toEqual([108, 107, 107]);
  });
});
