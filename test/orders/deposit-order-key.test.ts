import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Bindings } from '../../src/env';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { balanceOf, call, deliverWebhook, newProduct, newUser, unique, type TestUser } from '../helpers';
import { apiUrl, fakeVendor, INVOICE_ENDPOINT, SLOT_OF, varsFor, vendorSays } from '../vendors';

// A deposit's order dies with its key and its deposit (contract: "A revoked key buys nothing"): the credit buys the
// order only for a live key (not revoked, not expired, user enabled) and a payment before the deposit's expires_at;
// otherwise the credit stands and order_error is UNAUTHORIZED or DEPOSIT_EXPIRED. Every credit path.

const MINUTE = 60_000;

async function keyOf(user: TestUser, body: Record<string, unknown> = {}) {
  const res = await call('/api-keys', { key: user.key, body: { name: 'buyer', ...body } });
  expect(res.status, res.text).toBe(201);
  return { key: res.json.data.key as string, id: res.json.data.id as number };
}

/** The case: a $1 deposit carrying a $12 order, $11 already in the wallet. */
async function orderDeposit(key: string, product: { id: number }, gateway = 'gateway_one', vars?: Record<string, string>) {
  const res = await call('/wallet/deposit', { key, body: { amount: 1, gateway, order: { product_id: product.id, quantity: 1, expected_total: 12 } }, vars });
  expect(res.status, res.text).toBe(200);
  return res.json.data.deposit_id as number;
}

const depositRow = (db: D1Database, id: number) =>
  db.prepare('SELECT status, order_id, order_error FROM deposits WHERE id = ?').bind(id).first<{ status: string; order_id: number | null; order_error: string | null }>();

const ordersOf = async (db: D1Database, userId: number) =>
  (await db.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(userId).first<{ n: number }>())!.n;

const revoke = async (user: TestUser, keyId: number) => expect((await call(`/api-keys/${keyId}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
const expireKey = (db: D1Database, keyId: number) => db.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').bind(new Date(Date.now() - MINUTE).toISOString(), keyId).run();
const expireDeposit = (db: D1Database, id: number) => db.prepare('UPDATE deposits SET expires_at = ? WHERE id = ?').bind(new Date(Date.now() - MINUTE).toISOString(), id).run();

const paidWebhook = (depositId: number) => deliverWebhook('gateway_one', { deposit_id: depositId, status: 'paid', amount: 1, transaction_id: unique('tx') });
const markPaid = (depositId: number) => call(`/admin/deposits/${depositId}/mark-paid`, { method: 'POST', admin: true, body: {} });

type Spoil = (ctx: { user: TestUser; keyId: number; depositId: number; db: D1Database }) => Promise<unknown>;
const SPOILS: Array<[string, string, Spoil]> = [
  ['the key revoked', 'UNAUTHORIZED', ({ user, keyId }) => revoke(user, keyId)],
  ['the key expired', 'UNAUTHORIZED', ({ keyId, db }) => expireKey(db, keyId)],
  ['paid after the deposit expired', 'DEPOSIT_EXPIRED', ({ depositId, db }) => expireDeposit(db, depositId)],
];

async function expectRefused(db: D1Database, user: TestUser, depositId: number, code: string) {
  expect(await depositRow(db, depositId)).toEqual({ status: 'paid', order_id: null, order_error: code });
  expect(await ordersOf(db, user.id)).toBe(0);
}

describe('a notification or "Mark paid": the credit stands, the order is not bought', () => {
  for (const [label, code, spoil] of SPOILS) {
    for (const [path, credit] of [
      ['notification', paidWebhook],
      ['mark paid', markPaid],
    ] as const) {
      it(`${label} (${path}) → order_error ${code}, $1 credited, $11 untouched`, async () => {
        const user = await newUser({ balance: 11 });
        const product = await newProduct({ price: 12, stock: 2 });
        const { key, id: keyId } = await keyOf(user);
        const depositId = await orderDeposit(key, product);
        await spoil({ user, keyId, depositId, db: env.DB });
        const res = await credit(depositId);
        expect(res.status, res.text).toBe(200);
        await expectRefused(env.DB, user, depositId, code);
        expect(await balanceOf(user)).toBe(12);
      });
    }
  }

  it('a live key and a payment in time still buy (control)', async () => {
    const user = await newUser({ balance: 11 });
    const product = await newProduct({ price: 12, stock: 2 });
    const { key } = await keyOf(user);
    const depositId = await orderDeposit(key, product);
    expect((await paidWebhook(depositId)).status).toBe(200);
    expect(await depositRow(env.DB, depositId)).toMatchObject({ status: 'paid', order_error: null, order_id: expect.any(Number) });
    expect(await balanceOf(user)).toBe(0);
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});

describe("a vendor's refresh and the scheduled lookup", () => {
  async function vendorDepositOfKey(key: string, product: { id: number }) {
    const invoiceId = `inv_${crypto.randomUUID().slice(0, 8)}`;
    const { path, answer } = INVOICE_ENDPOINT.stripe;
    fakeVendor('post', `${apiUrl('stripe')}${path}`, answer(`https://pay.stripe.test/${invoiceId}`, invoiceId));
    const id = await orderDeposit(key, product, SLOT_OF.stripe, varsFor('stripe'));
    const row = (await env.DB.prepare('SELECT reference, amount_cents FROM deposits WHERE id = ?').bind(id).first<{ reference: string }>())!;
    vendorSays('stripe', { reference: row.reference, invoiceId, amount: 1 }, 'paid');
    return id;
  }

  it('refresh with the key revoked → UNAUTHORIZED; the lookup of a deposit paid late → DEPOSIT_EXPIRED', async () => {
    const product = await newProduct({ price: 12, stock: 2 });
    const revoked = await newUser({ balance: 11 });
    const revokedKey = await keyOf(revoked);
    const first = await vendorDepositOfKey(revokedKey.key, product);
    await revoke(revoked, revokedKey.id);
    const refreshed = await call(`/admin/deposits/${first}/refresh`, { method: 'POST', admin: true, vars: varsFor('stripe') });
    expect(refreshed.status, refreshed.text).toBe(200);
    await expectRefused(env.DB, revoked, first, 'UNAUTHORIZED');

    await env.DB.prepare('UPDATE deposits SET last_checked_at = ? WHERE provider = ?').bind(new Date(Date.now() + 6 * MINUTE).toISOString(), 'stripe').run();
    const late = await newUser({ balance: 11 });
    const lateId = await vendorDepositOfKey((await keyOf(late)).key, product);
    await expireDeposit(env.DB, lateId);
    await runScheduledJobs({ ...env, ...varsFor('stripe') } as Bindings, Date.now() + 6 * MINUTE);
    await expectRefused(env.DB, late, lateId, 'DEPOSIT_EXPIRED');
    expect(await balanceOf(late)).toBe(12);
  });
});

describe('the sandbox twin (test gateway)', () => {
  const sandbox = () => env.SANDBOX_DB!;
  for (const [label, code, spoil] of SPOILS) {
    it(`${label} → order_error ${code} in the sandbox`, async () => {
      const live = await newUser();
      const product = await newProduct({ price: 12, stock: 2 });
      const payer = await keyOf(live, { mode: 'test' });
      const maker = await keyOf({ ...live, key: payer.key }, { mode: 'test' });
      const testUser = { ...live, key: payer.key };
      const made = await call('/wallet/deposit', { key: maker.key, body: { amount: 1, gateway: 'gateway_one', order: { product_id: product.id, quantity: 1, expected_total: 12 } } });
      expect(made.status, made.text).toBe(200);
      const depositId = made.json.data.deposit_id as number;
      const sandboxUser = (await sandbox().prepare('SELECT user_id FROM deposits WHERE id = ?').bind(depositId).first<{ user_id: number }>())!.user_id;
      await spoil({ user: testUser, keyId: maker.id, depositId, db: sandbox() });
      const paid = await call(`/test/deposits/${depositId}/pay`, { key: payer.key, method: 'POST' });
      expect(paid.status, paid.text).toBe(200);
      expect(paid.json.data).toMatchObject({ status: 'paid', order_id: null, order_error: code });
      expect(await ordersOf(sandbox(), sandboxUser)).toBe(0);
      expect((await call('/wallet/balance', { key: payer.key })).json.data.balance).toBe(1001);
    });
  }
});
