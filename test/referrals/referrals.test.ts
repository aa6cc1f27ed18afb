import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { normalisedEmail } from '../../src/services/referrals/codes';
import { balanceOf, buy, call, expectError, newProduct, newUser, unique, type TestUser } from '../helpers';

// Referrals (docs/referrals.md): settings, codes and attribution, earnings in the purchase's batch, the same share
// taken back by every refund, and transfers into the wallet, with their races.

const PAST = '2020-01-01T00:00:00.000Z';

async function settings(body: Record<string, unknown>) {
  const res = await call('/admin/settings/referrals', { admin: true, method: 'PUT', body });
  expect(res.status, res.text).toBe(200);
  return res.json.data;
}

async function referral(user: TestUser) {
  const res = await call('/user/referral', { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data as { code: string; link: string; percent: number; pending: number; available: number; transferred: number };
}

async function earnings(user: TestUser) {
  const res = await call('/user/referral/earnings?per_page=100', { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json as { data: { id: number; order_id: number; kind: string; earned: number; amount: number; status: string; available_at: string; created_at: string }[]; meta: { total: number } };
}

/** A buyer created by the operator with `referrer`'s code, with money to spend. */
async function referredBuyer(referrer: TestUser, balance = 100): Promise<TestUser> {
  const email = `${unique('buyer')}@example.com`;
  const res = await call('/admin/users', { admin: true, body: { name: 'Buyer', email, password: 'correct horse battery', referral_code: (await referral(referrer)).code } });
  expect(res.status, res.text).toBe(201);
  const buyer = { id: res.json.data.id as number, key: res.json.data.api_key as string, email };
  await call(`/admin/users/${buyer.id}/balance-adjustments`, { admin: true, body: { amount: balance, description: 'funding' } });
  return buyer;
}

/** The hold over, as the clock and the scheduled job would make it: the order completed, its earning available. */
async function holdOver(orderId: number) {
  await env.DB.prepare(`UPDATE orders SET status = 'completed' WHERE id = ? AND status = 'pending'`).bind(orderId).run();
  await env.DB.prepare(`UPDATE referral_earnings SET available_at = ? WHERE order_id = ? AND status = 'pending'`).bind(PAST, orderId).run();
}

const refund = (orderId: number, amount: number) => call(`/admin/orders/${orderId}/refund`, { admin: true, body: { amount, reason: 'test' } });
const transfer = (user: TestUser, headers: Record<string, string> = {}) => call('/user/referral/transfer', { key: user.key, method: 'POST', headers });

beforeAll(async () => {
  await settings({ percent: 10, hold_days: 14, min_transfer: 0.5 });
});

describe('settings', () => {
  it('reads and changes the programme, refusing values out of range, and audits the change', async () => {
    const res = await call('/admin/settings/referrals', { admin: true });
    expect(res.json.data).toEqual({ percent: 10, hold_days: 14, min_transfer: 0.5 });
    for (const body of [{ percent: 51 }, { percent: -1 }, { hold_days: 366 }, { min_transfer: 10.005 }, { min_transfer: 0 }, { percent: '5' }]) {
      expectError(await call('/admin/settings/referrals', { admin: true, method: 'PUT', body }), 422, 'VALIDATION_FAILED');
    }
    expect((await call('/admin/settings/referrals', { admin: true })).json.data).toEqual({ percent: 10, hold_days: 14, min_transfer: 0.5 });
    expect(await settings({ hold_days: 14 })).toEqual({ percent: 10, hold_days: 14, min_transfer: 0.5 });
    const audit = await env.DB.prepare(`SELECT count(*) AS n FROM audit_log WHERE action = 'referrals.settings_changed'`).first<{ n: number }>();
    expect(audit!.n).toBeGreaterThanOrEqual(2);
    expectError(await call('/admin/settings/referrals'), 401, 'UNAUTHORIZED');
  });
});

describe('codes and attribution', () => {
  it('gives every user a code and a link', async () => {
    const user = await newUser();
    const mine = await referral(user);
    expect(mine.code).toMatch(/^[0-9A-F]{16}$/);
    expect(mine).toEqual({ code: mine.code, link: `http://localhost/r/${mine.code}`, percent: 10, pending: 0, available: 0, transferred: 0 });
    expect((await referral(await newUser())).code).not.toBe(mine.code);
  });

  it('records the referrer of a user the operator creates with a code, shown in the profile and the admin answers', async () => {
    const referrer = await newUser();
    const { code } = await referral(referrer);
    const buyer = await referredBuyer(referrer);
    expect((await call('/user/profile', { key: buyer.key })).json.data.referred_by).toBe(code);
    expect((await call(`/admin/users/${buyer.id}`, { admin: true })).json.data.referred_by).toBe(code);
    expect((await call('/user/profile', { key: referrer.key })).json.data.referred_by).toBeNull();
    // A code typed in lower case is the same code.
    const email = `${unique('lower')}@example.com`;
    const lower = await call('/admin/users', { admin: true, body: { name: 'L', email, password: 'correct horse battery', referral_code: code.toLowerCase() } });
    expect(lower.status, lower.text).toBe(201);
    expect(lower.json.data.referred_by).toBe(code);
  });

  it('refuses a code nobody has with 422 errors.referral_code, creating nothing', async () => {
    const email = `${unique('nobody')}@example.com`;
    for (const referral_code of ['0000000000000000', 'not-a-code', 12]) {
      const res = await call('/admin/users', { admin: true, body: { name: 'N', email, password: 'correct horse battery', referral_code } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.json.errors)).toEqual(['referral_code']);
    }
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first()).toEqual({ n: 0 });
  });

  it('normalises emails as one mailbox: letter case, dots and +tag of the local part', () => {
    expect(normalisedEmail('A.n+shop@Ex.com')).toBe('an@ex.com');
    expect(normalisedEmail('an@ex.com')).toBe('an@ex.com');
    expect(normalisedEmail('a.n@e.x.com')).toBe('an@e.x.com');
  });

  it("records no referral for a new account whose email is the referrer's own once normalised", async () => {
    const local = unique('self').replaceAll('-', '');
    const referrer = await call('/admin/users', { admin: true, body: { name: 'R', email: `${local}@example.com`, password: 'correct horse battery' } });
    const { code } = await referral({ id: referrer.json.data.id, key: referrer.json.data.api_key, email: '' });
    // The same mailbox: letter case, dots in the local part, a +tag.
    const dotted = `${local.slice(0, 3)}.${local.slice(3)}`.toUpperCase();
    for (const email of [`${dotted}@example.com`, `${local}+shop@Example.COM`]) {
      const res = await call('/admin/users', { admin: true, body: { name: 'S', email, password: 'correct horse battery', referral_code: code } });
      expect(res.status, res.text).toBe(201);
      expect(res.json.data.referred_by).toBeNull();
    }
    // Another mailbox at the same domain is referred.
    const other = await call('/admin/users', { admin: true, body: { name: 'O', email: `${local}x@example.com`, password: 'correct horse battery', referral_code: code } });
    expect(other.json.data.referred_by).toBe(code);
  });
});

describe('earnings', () => {
  let referrer: TestUser;
  let buyer: TestUser;

  beforeAll(async () => {
    referrer = await newUser();
    buyer = await referredBuyer(referrer);
  });

  it("earn round_half_down(total x percent / 100) in the purchase's batch, available after the longest hold", async () => {
    const product = await newProduct({ price: 1.25, stock: 3 });
    const order = (await buy(buyer, product.id, 3)).json.data;
    const { data, meta } = await earnings(referrer);
    expect(meta.total).toBe(1);
    // 375 x 10 / 100 = 37.5 -> 37 (half down).
    expect(data[0]).toMatchObject({ order_id: order.id, order_number: order.order_number, kind: 'earning', earned: 0.37, amount: 0.37, status: 'pending' });
    expect(data[0].available_at).toBe(new Date(Date.parse(order.created_at) + 14 * 24 * 3600_000).toISOString());
    expect(await referral(referrer)).toMatchObject({ pending: 0.37, available: 0, transferred: 0 });
    // The buyer earns nothing from the referrer's side.
    expect((await earnings(buyer)).meta.total).toBe(0);
  });

  it("earn in a deposit's credit that buys an order, like any purchase", async () => {
    const product = await newProduct({ price: 7, stock: 1 });
    const deposit = await call('/wallet/deposit', { key: buyer.key, body: { amount: 10, gateway: 'gateway_one', order: { product_id: product.id, quantity: 1, expected_total: 7 } } });
    expect(deposit.status, deposit.text).toBe(200);
    expect((await call(`/admin/deposits/${deposit.json.data.deposit_id}/mark-paid`, { admin: true, method: 'POST' })).status).toBe(200);
    const orderId = (await call(`/wallet/deposits/${deposit.json.data.deposit_id}/status`, { key: buyer.key })).json.data.order_id;
    expect(orderId).toEqual(expect.any(Number));
    expect((await earnings(referrer)).data.find((e) => e.order_id === orderId)).toMatchObject({ earned: 0.7, status: 'pending' });
  });

  it("use the product's referral_percent (0 = none), and the longest of hold days, warranty and the order's hold", async () => {
    const product = await newProduct({ price: 2, stock: 4 });
    let res = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { referral_percent: 25, warranty_hours: 24 * 30 } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.referral_percent).toBe(25);
    const order = (await buy(buyer, product.id, 1)).json.data;
    const [earning] = (await earnings(referrer)).data;
    expect(earning).toMatchObject({ order_id: order.id, earned: 0.5 });
    expect(earning.available_at).toBe(new Date(Date.parse(order.created_at) + 30 * 24 * 3600_000).toISOString());

    res = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { referral_percent: 0 } });
    expect(res.json.data.referral_percent).toBe(0);
    const none = (await buy(buyer, product.id, 1)).json.data;
    expect((await earnings(referrer)).data.some((e) => e.order_id === none.id)).toBe(false);
    expectError(await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { referral_percent: 51 } }), 422, 'VALIDATION_FAILED');
    res = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { referral_percent: null } });
    expect(res.json.data.referral_percent).toBeNull();
  });

  it('write no earning of 0, none for a buyer nobody referred, none while the programme is off', async () => {
    const cheap = await newProduct({ price: 0.04, stock: 3 });
    const before = (await earnings(referrer)).meta.total;
    await buy(buyer, cheap.id, 1); // 4 x 10 / 100 = 0.4 -> 0
    await buy(await newUser({ balance: 5 }), cheap.id, 1);
    await settings({ percent: 0 });
    const product = await newProduct({ price: 5, stock: 1 });
    expect((await buy(buyer, product.id, 1)).status).toBe(201);
    await settings({ percent: 10 });
    expect((await earnings(referrer)).meta.total).toBe(before);
  });

  it("earn nothing while the shop's percent is 0, even on a product with its own percent (0 turns the programme off)", async () => {
    const product = await newProduct({ price: 5, stock: 1 });
    expect((await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { referral_percent: 20 } })).status).toBe(200);
    await settings({ percent: 0 });
    try {
      const order = (await buy(buyer, product.id, 1)).json.data;
      expect((await earnings(referrer)).data.some((e) => e.order_id === order.id)).toBe(false);
    } finally {
      await settings({ percent: 10 });
    }
  });

  it('take back the same share of each partial refund, and all of it when the order is refunded in full', async () => {
    const product = await newProduct({ price: 1.25, stock: 3 });
    const order = (await buy(buyer, product.id, 3)).json.data;
    expect((await refund(order.id, 1.25)).status).toBe(200);
    // 37 x 125 / 375 = 12.33 -> 12 taken back.
    let earning = (await earnings(referrer)).data.find((e) => e.order_id === order.id)!;
    expect(earning).toMatchObject({ earned: 0.37, amount: 0.25, status: 'pending' });
    expect((await call(`/orders/${order.id}/cancel`, { key: buyer.key, method: 'POST' })).status).toBe(200);
    earning = (await earnings(referrer)).data.find((e) => e.order_id === order.id)!;
    expect(earning).toMatchObject({ earned: 0.37, amount: 0, status: 'reversed' });
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it("take back a warranty claim's refund share", async () => {
    const product = await newProduct({ price: 3, stock: 2 });
    await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { warranty_hours: 24 } });
    const order = (await buy(buyer, product.id, 2)).json.data;
    const claim = await call(`/orders/${order.id}/items/0/report`, { key: buyer.key, body: { reason: 'does not work' } });
    expect(claim.status, claim.text).toBe(201);
    expect((await call(`/admin/claims/${claim.json.data.id}/refund`, { admin: true, method: 'POST' })).status).toBe(200);
    // Earned 60; one unit (300 of 600) refunded: 30 back.
    expect((await earnings(referrer)).data.find((e) => e.order_id === order.id)).toMatchObject({ earned: 0.6, amount: 0.3, status: 'pending' });
  });

  it('stop for a referrer the operator switched off (pending earnings reversed), and resume when switched on', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 10, stock: 3 });
    const held = (await buy(b, product.id, 1)).json.data;
    await env.DB.prepare(`UPDATE users SET referrals_off_at = ? WHERE id = ?`).bind(new Date().toISOString(), r.id).run();
    const off = (await buy(b, product.id, 1)).json.data;
    const list = (await earnings(r)).data;
    expect(list.map((e) => e.order_id)).toEqual([held.id]);
    await env.DB.prepare(`UPDATE users SET referrals_off_at = NULL WHERE id = ?`).bind(r.id).run();
    const on = (await buy(b, product.id, 1)).json.data;
    expect((await earnings(r)).data.map((e) => e.order_id)).toEqual([on.id, held.id]);
    expect(off.id).toBeLessThan(on.id);
  });
});

describe('transfers', () => {
  it('move everything available into the wallet as one commission transaction, at least min_transfer', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 4, stock: 3 });
    const first = (await buy(b, product.id, 1)).json.data; // earns 0.40
    expectError(await transfer(r), 400, 'TRANSFER_TOO_SMALL');
    await holdOver(first.id);
    expect(await referral(r)).toMatchObject({ pending: 0, available: 0.4 });
    // 0.40 is below 0.50.
    const small = await transfer(r);
    expectError(small, 400, 'TRANSFER_TOO_SMALL');
    const second = (await buy(b, product.id, 2)).json.data; // earns 0.80
    await holdOver(second.id);
    const res = await transfer(r);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toEqual({ amount: 1.2, transaction_id: expect.any(Number), balance: 1.2 });
    expect(await balanceOf(r)).toBe(1.2);
    const tx = (await call('/wallet/transactions', { key: r.key })).json.data[0];
    expect(tx).toMatchObject({ id: res.json.data.transaction_id, type: 'commission', amount: 1.2, balance_after: 1.2 });
    expect(await referral(r)).toMatchObject({ pending: 0, available: 0, transferred: 1.2 });
    expect((await earnings(r)).data.map((e) => e.status)).toEqual(['transferred', 'transferred']);
    expectError(await transfer(r), 400, 'TRANSFER_TOO_SMALL');
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('move nothing of an order while a warranty claim on it is open (the claim may still be refunded)', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 10, stock: 1 });
    await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { warranty_hours: 24 } });
    const order = (await buy(b, product.id, 1)).json.data; // earns 1.00
    await holdOver(order.id);
    const claim = await call(`/orders/${order.id}/items/0/report`, { key: b.key, body: { reason: 'does not work' } });
    expect(claim.status, claim.text).toBe(201);
    expect(await referral(r)).toMatchObject({ pending: 1, available: 0 });
    expectError(await transfer(r), 400, 'TRANSFER_TOO_SMALL');
    expect((await call(`/admin/claims/${claim.json.data.id}/reject`, { admin: true, method: 'POST', body: { note: 'works here' } })).status).toBe(200);
    expect(await referral(r)).toMatchObject({ pending: 0, available: 1 });
    expect((await transfer(r)).status).toBe(200);
  });

  it('need the deposits scope, and replay the first answer under the same Idempotency-Key', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 9, stock: 1 });
    await holdOver((await buy(b, product.id, 1)).json.data.id);
    const readOnly = await call('/api-keys', { key: r.key, body: { name: 'read only', scopes: ['read'] } });
    expect(readOnly.status, readOnly.text).toBe(201);
    expectError(await transfer({ ...r, key: readOnly.json.data.key }), 403, 'INSUFFICIENT_SCOPE');
    const first = await transfer(r, { 'Idempotency-Key': 'move-1' });
    expect(first.status, first.text).toBe(200);
    const again = await transfer(r, { 'Idempotency-Key': 'move-1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    expect(await balanceOf(r)).toBe(0.9);
  });

  it('race: 10 parallel transfers move the money once', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 10, stock: 3 });
    for (let i = 0; i < 3; i++) await holdOver((await buy(b, product.id, 1)).json.data.id);
    const results = await Promise.all(Array.from({ length: 10 }, () => transfer(r)));
    expect(results.filter((res) => res.status === 200)).toHaveLength(1);
    for (const res of results.filter((res) => res.status !== 200)) expectError(res, 400, 'TRANSFER_TOO_SMALL');
    expect(await balanceOf(r)).toBe(3);
    const { results: commissions } = await env.DB.prepare(`SELECT amount_cents FROM wallet_transactions WHERE user_id = ? AND type = 'commission'`).bind(r.id).all();
    expect(commissions).toEqual([{ amount_cents: 300 }]);
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('a refund of an earning already moved is taken from the next earnings (the balance may go negative)', async () => {
    const r = await newUser();
    const b = await referredBuyer(r);
    const product = await newProduct({ price: 10, stock: 5 });
    const order = (await buy(b, product.id, 2)).json.data; // earns 2.00
    await holdOver(order.id);
    expect((await transfer(r)).json.data.amount).toBe(2);
    expect((await refund(order.id, 20)).status).toBe(200); // refunded in full
    const offset = (await earnings(r)).data[0];
    expect(offset).toMatchObject({ order_id: order.id, kind: 'offset', amount: -2, earned: -2, status: 'available' });
    expect(await referral(r)).toMatchObject({ available: -2, transferred: 2 });
    expectError(await transfer(r), 400, 'TRANSFER_TOO_SMALL');
    const next = (await buy(b, product.id, 3)).json.data; // earns 3.00
    await holdOver(next.id);
    const res = await transfer(r);
    expect(res.json.data.amount).toBe(1);
    expect(await referral(r)).toMatchObject({ available: 0, transferred: 3 });
    // The earning moved keeps its status; the order it came from keeps none of it.
    expect((await earnings(r)).data.find((e) => e.order_id === order.id && e.kind === 'earning')!.status).toBe('transferred');
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('race: a refund and a transfer at once either reverse the earning or move it and offset it, never both kept', async () => {
    for (let round = 0; round < 4; round++) {
      const r = await newUser();
      const b = await referredBuyer(r);
      const product = await newProduct({ price: 10, stock: 1 });
      const order = (await buy(b, product.id, 1)).json.data; // earns 1.00
      await holdOver(order.id);
      const [refunded, moved] = await Promise.all([refund(order.id, 10), transfer(r)]);
      expect(refunded.status).toBe(200);
      const rows = (await earnings(r)).data;
      if (moved.status === 200) {
        expect(moved.json.data.amount).toBe(1);
        expect(rows.map((e) => [e.kind, e.amount, e.status])).toEqual([['offset', -1, 'available'], ['earning', 1, 'transferred']]);
      } else {
        expectError(moved, 400, 'TRANSFER_TOO_SMALL');
        expect(rows.map((e) => [e.kind, e.amount, e.status])).toEqual([['earning', 0, 'reversed']]);
      }
      const kept = (await referral(r)).available + (await referral(r)).transferred;
      expect(kept).toBe(0);
    }
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});
