import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { SELF } from '../contract';
import { balanceOf, BASE, buy, call, expectError, newDeposit, newProduct, newUser, restock, unique, type TestUser } from '../helpers';
import { visit, newEmail, signedInUser, idempotencyKeyIn } from '../dashboard-helpers';
import { gatewayEventsOf, notify, stripeSignature, vendorDeposit, vendorSays } from '../vendors';

// After the sale (contract, "After the sale"): warranty claims and their resolutions, operator refunds, holds set by
// reversed payments and by the operator, and the blocklist. Every money movement is one guarded batch: the races
// below must each have exactly one effect, and the ledger audit must stay clean.

const HOUR = 3_600_000;

async function warrantied({ price = 2, stock = 5, hours = 48 }: { price?: number; stock?: number; hours?: number } = {}) {
  const product = await newProduct({ price, stock });
  const res = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: hours } });
  expect(res.status, res.text).toBe(200);
  expect(res.json.data.warranty_hours).toBe(hours);
  return product;
}

async function order(user: TestUser, productId: number, quantity = 1) {
  const res = await buy(user, productId, quantity);
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; total_amount: number; stock_items: string[]; refunded_amount: number };
}

const report = (user: TestUser, orderId: number, index: number, reason = 'The code was already redeemed.') =>
  call(`/orders/${orderId}/items/${index}/report`, { key: user.key, body: { reason } });

async function openClaim(user: TestUser, orderId: number, index = 0) {
  const res = await report(user, orderId, index);
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number };
}

const resolve = (claimId: number, action: 'replace' | 'refund' | 'reject', note = 'Redeemed on our records by you.') =>
  call(`/admin/claims/${claimId}/${action}`, { admin: true, method: 'POST', ...(action === 'reject' ? { body: { note } } : {}) });

const refund = (orderId: number, amount: number, reason = 'goodwill') => call(`/admin/orders/${orderId}/refund`, { admin: true, body: { amount, reason } });

const getOrder = async (user: TestUser, orderId: number) => (await call(`/orders/${orderId}`, { key: user.key })).json.data;

const expectAuditClean = async () => expect(await auditLedger(env.DB)).toEqual([]);

const refundRows = async (orderId: number) =>
  (await env.DB.prepare("SELECT amount_cents FROM wallet_transactions WHERE order_id = ? AND type = 'refund' ORDER BY id").bind(orderId).all<{ amount_cents: number }>())
    .results.map((r) => r.amount_cents);

describe('warranty: reporting an item', () => {
  it('opens a claim within the warranty; the order shows it; a second report is ALREADY_REPORTED', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied();
    const placed = await order(user, product.id, 2);
    const res = await report(user, placed.id, 1, '  Does not work  ');
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({ order_id: placed.id, item_index: 1, status: 'open', reason: 'Does not work', resolution: null, resolved_at: null });
    expectError(await report(user, placed.id, 1), 409, 'ALREADY_REPORTED');
    expect((await report(user, placed.id, 0)).status).toBe(201);
    const shown = await getOrder(user, placed.id);
    expect(shown.claims.map((c: any) => [c.item_index, c.status])).toEqual([[1, 'open'], [0, 'open']]);
  });

  it('WARRANTY_EXPIRED without warranty, past it, or for a cancelled order; 422 outside the order; 404 for another buyer', async () => {
    const user = await newUser({ balance: 20 });
    const none = await newProduct({ price: 1, stock: 2 });
    expectError(await report(user, (await order(user, none.id)).id, 0), 422, 'WARRANTY_EXPIRED');

    const product = await warrantied({ hours: 24 });
    const old = await order(user, product.id);
    await env.DB.prepare('UPDATE orders SET created_at = ? WHERE id = ?').bind(new Date(Date.now() - 24 * HOUR - 1000).toISOString(), old.id).run();
    expectError(await report(user, old.id, 0), 422, 'WARRANTY_EXPIRED');
    await env.DB.prepare('UPDATE orders SET created_at = ? WHERE id = ?').bind(new Date(Date.now() - 23 * HOUR).toISOString(), old.id).run();
    expect((await report(user, old.id, 0)).status).toBe(201);

    const cancelled = await order(user, product.id);
    expect((await call(`/orders/${cancelled.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    expectError(await report(user, cancelled.id, 0), 422, 'WARRANTY_EXPIRED');

    const fresh = await order(user, product.id);
    const outside = await report(user, fresh.id, 1);
    expectError(outside, 422, 'VALIDATION_FAILED');
    expect(outside.json.errors.index).toBeDefined();
    expectError(await report(await newUser(), fresh.id, 0), 404, 'NOT_FOUND');
    expectError(await call(`/orders/${fresh.id}/items/0/report`, { key: user.key, body: { reason: '   ' } }), 422, 'VALIDATION_FAILED');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM claims WHERE order_id = ?').bind(fresh.id).first('n')).toBe(0);
  });

  it('a cancellation closes the order\'s open claims: they can no longer be resolved', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied();
    const placed = await order(user, product.id);
    const claim = await openClaim(user, placed.id);
    expect((await call(`/orders/${placed.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    expectError(await resolve(claim.id, 'refund'), 409, 'CLAIM_RESOLVED');
    expect((await getOrder(user, placed.id)).claims[0].status).toBe('rejected');
    await expectAuditClean();
  });
});

describe('resolving a claim', () => {
  it('replace: a fresh item takes the reported one\'s place; the old one is listed as replaced; event, email, audit', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied({ stock: 3 });
    const placed = await order(user, product.id, 2);
    const claim = await openClaim(user, placed.id, 0);
    const res = await resolve(claim.id, 'replace');
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ id: claim.id, status: 'replaced' });
    const after = await getOrder(user, placed.id);
    expect(after.stock_items).toHaveLength(2);
    expect(after.stock_items[1]).toBe(placed.stock_items[1]);
    expect(after.stock_items[0]).not.toBe(placed.stock_items[0]);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(0);
    const revoked = await call(`/admin/revoked-items?per_page=100`, { admin: true });
    expect(revoked.json.data.filter((r: any) => r.order_id === placed.id)).toEqual([
      expect.objectContaining({ item: placed.stock_items[0], reason: 'replaced' }),
    ]);
    // the replacement can be reported again; the old item cannot
    expect((await report(user, placed.id, 0)).status).toBe(201);

    const event = await env.DB.prepare("SELECT snapshot FROM events WHERE type = 'order.item_replaced' AND object_id = ?").bind(claim.id).first<{ snapshot: string }>();
    expect(JSON.parse(event!.snapshot)).toMatchObject({ status: 'replaced', orderId: placed.id });
    const audit = await env.DB.prepare("SELECT actor FROM audit_log WHERE action = 'claim.replaced' AND target = ?").bind(`claim:${claim.id}`).all();
    expect(audit.results).toEqual([{ actor: 'admin_token' }]);
    expectError(await resolve(claim.id, 'reject'), 409, 'CLAIM_RESOLVED');
    await expectAuditClean();
  });

  it('replace without an available item: 400 INSUFFICIENT_STOCK and nothing changes', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied({ stock: 1 });
    const placed = await order(user, product.id);
    const claim = await openClaim(user, placed.id);
    const res = await resolve(claim.id, 'replace');
    expectError(res, 400, 'INSUFFICIENT_STOCK');
    expect(res.json.errors).toMatchObject({ requested: 1, available: 0 });
    expect((await getOrder(user, placed.id)).stock_items).toEqual(placed.stock_items);
    expect((await getOrder(user, placed.id)).claims[0].status).toBe('open');
    expect(await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE target = ?").bind(`claim:${claim.id}`).first('n')).toBe(0);
    await restock(product.id, 1);
    expect((await resolve(claim.id, 'replace')).status).toBe(200);
  });

  it("refund: one unit's share rounded down to the cent, tied to the order; reject: the note", async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied({ price: 1, stock: 5 });
    await call(`/admin/users/${user.id}`, { method: 'PATCH', admin: true, body: { discount_percent: 33 } });
    const placed = await order(user, product.id, 3); // unit 0.67, total 2.01 → share 0.67
    const before = await balanceOf(user);
    const claim = await openClaim(user, placed.id, 2);
    const res = await resolve(claim.id, 'refund');
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ status: 'refunded', refund_amount: 0.67 });
    expect(await balanceOf(user)).toBeCloseTo(before + 0.67, 2);
    expect((await getOrder(user, placed.id)).refunded_amount).toBe(0.67);
    expect(await refundRows(placed.id)).toEqual([67]);

    const other = await openClaim(user, placed.id, 1);
    const rejected = await resolve(other.id, 'reject', 'The code was redeemed from your account.');
    expect(rejected.json.data).toMatchObject({ status: 'rejected', resolution: 'The code was redeemed from your account.' });
    const emails = await env.DB.prepare("SELECT count(*) AS n FROM emails WHERE template = 'claim_resolved' AND user_id = ?").bind(user.id).first('n');
    expect(emails === 0 || emails === 2).toBe(true); // recorded only when mail is configured
    await expectAuditClean();
  });

  it('10 parallel resolutions of one claim: exactly one effect', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied({ price: 1, stock: 12 });
    const placed = await order(user, product.id, 2);
    const claim = await openClaim(user, placed.id);
    const balance = await balanceOf(user);
    const actions = ['replace', 'refund', 'reject', 'replace', 'refund', 'reject', 'replace', 'refund', 'replace', 'refund'] as const;
    const results = await Promise.all(actions.map((action) => resolve(claim.id, action)));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 409, 'CLAIM_RESOLVED');
    const status = won[0].json.data.status;
    expect(await refundRows(placed.id)).toEqual(status === 'refunded' ? [100] : []);
    expect(await balanceOf(user)).toBe(status === 'refunded' ? balance + 1 : balance);
    const items = await env.DB.prepare('SELECT count(*) AS n FROM stock_items WHERE order_id = ?').bind(placed.id).first('n');
    expect(items).toBe(status === 'replaced' ? 3 : 2);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE target = ?").bind(`claim:${claim.id}`).first('n')).toBe(1);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events WHERE type LIKE 'order.%' AND object_id = ? AND type IN ('order.item_replaced','order.item_refunded','order.claim_rejected')").bind(claim.id).first('n')).toBe(1);
    await expectAuditClean();
  });

  it('a replacement racing a purchase of the last item: exactly one gets it, nothing sold twice', async () => {
    const user = await newUser({ balance: 10 });
    const buyer = await newUser({ balance: 10 });
    const product = await warrantied({ price: 1, stock: 1 });
    const placed = await order(user, product.id);
    const claim = await openClaim(user, placed.id);
    await restock(product.id, 1);
    const [replaced, bought] = await Promise.all([resolve(claim.id, 'replace'), buy(buyer, product.id, 1)]);
    expect([replaced.status, bought.status].sort()).toEqual([200, 400]);
    if (replaced.status !== 200) expectError(replaced, 400, 'INSUFFICIENT_STOCK');
    else expectError(bought, 400, 'INSUFFICIENT_STOCK');
    const sold = await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'").bind(product.id).first('n');
    expect(sold).toBe(0);
    await expectAuditClean();
  });

  it('GET /admin/claims lists by status, with the order\'s names', async () => {
    const user = await newUser({ balance: 10 });
    const product = await warrantied();
    const placed = await order(user, product.id);
    const claim = await openClaim(user, placed.id);
    const open = await call('/admin/claims?status=open&per_page=100', { admin: true });
    expect(open.json.data.find((c: any) => c.id === claim.id)).toMatchObject({ user_id: user.id, order_id: placed.id, product_id: product.id, status: 'open' });
    await resolve(claim.id, 'reject');
    const rejected = await call('/admin/claims?status=rejected&per_page=100', { admin: true });
    expect(rejected.json.data.some((c: any) => c.id === claim.id)).toBe(true);
    expectError(await call('/admin/claims?status=lost', { admin: true }), 422, 'VALIDATION_FAILED');
    expectError(await resolve(999_999_999, 'refund'), 404, 'NOT_FOUND');
  });
});

describe('refunds by the operator', () => {
  it('part of an order, then the rest; never more than the total; items stay; cancelled order refused', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 3, stock: 3, cancellable: false });
    const placed = await order(user, product.id);
    const part = await refund(placed.id, 1.25, 'late delivery');
    expect(part.status, part.text).toBe(200);
    expect(part.json.data).toMatchObject({ refunded_amount: 1.25, order: { refunded_amount: 1.25, status: 'pending' } });
    const over = await refund(placed.id, 1.76);
    expectError(over, 422, 'VALIDATION_FAILED');
    expect(over.json.errors.amount).toBeDefined();
    expectError(await refund(placed.id, 0), 422, 'VALIDATION_FAILED');
    expect((await refund(placed.id, 1.75)).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    const shown = await getOrder(user, placed.id);
    expect(shown).toMatchObject({ refunded_amount: 3, stock_items: placed.stock_items });
    expectError(await refund(placed.id, 0.01), 422, 'VALIDATION_FAILED');
    expectError(await refund(999_999_999, 1), 404, 'NOT_FOUND');
    const audit = await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'order.refunded' AND target = ?").bind(`order:${placed.id}`).first('n');
    expect(audit).toBe(2);
    await expectAuditClean();
  });

  it('a cancel after a partial refund refunds only the rest', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 4, stock: 1 });
    const placed = await order(user, product.id);
    expect((await refund(placed.id, 1.5)).status).toBe(200);
    const cancelled = await call(`/orders/${placed.id}/cancel`, { key: user.key, method: 'POST' });
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json.data).toMatchObject({ refunded_amount: 2.5, order: { status: 'cancelled', refunded_amount: 4 } });
    expect(await refundRows(placed.id)).toEqual([150, 250]);
    expect(await balanceOf(user)).toBe(10);
    expectError(await refund(placed.id, 0.5), 422, 'VALIDATION_FAILED');
    await expectAuditClean();
  });

  it('10 parallel refunds that together exceed the remainder: never more than the total', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 5, stock: 1 });
    const placed = await order(user, product.id);
    const results = await Promise.all(Array.from({ length: 10 }, () => refund(placed.id, 1.5)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 422, 'VALIDATION_FAILED');
    expect(await refundRows(placed.id)).toEqual([150, 150, 150]);
    expect((await getOrder(user, placed.id)).refunded_amount).toBe(4.5);
    expect(await balanceOf(user)).toBe(9.5);
    await expectAuditClean();
  });

  it('a cancel racing refunds: the total is refunded exactly once, whatever the order', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await newUser({ balance: 10 });
      const product = await newProduct({ price: 3, stock: 1 });
      const placed = await order(user, product.id);
      const [cancel, ...refunds] = await Promise.all([
        call(`/orders/${placed.id}/cancel`, { key: user.key, method: 'POST' }),
        refund(placed.id, 1),
        refund(placed.id, 1),
      ]);
      expect(cancel.status, cancel.text).toBe(200);
      const rows = await refundRows(placed.id);
      expect(rows.reduce((a, b) => a + b, 0)).toBe(300);
      expect(rows.length).toBe(1 + refunds.filter((r) => r.status === 200).length);
      expect(await balanceOf(user)).toBe(10);
    }
    await expectAuditClean();
  });

  it('an Idempotency-Key replays the first refund, never refunds twice', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 5, stock: 1 });
    const placed = await order(user, product.id);
    const options = { admin: true, body: { amount: 1, reason: 'sorry' }, headers: { 'Idempotency-Key': unique('refund') } };
    const first = await call(`/admin/orders/${placed.id}/refund`, options);
    const again = await call(`/admin/orders/${placed.id}/refund`, options);
    expect(first.status, first.text).toBe(200);
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.json.data.refunded_amount).toBe(1);
    expect(await refundRows(placed.id)).toEqual([100]);
  });
});

/** A request from a place: address (CF-Connecting-IP) and Cloudflare's country and network (request.cf). */
async function fromPlace(path: string, { key, body, ip, country, asn }: { key: string; body: unknown; ip?: string; country?: string; asn?: number }) {
  const headers: Record<string, string> = { 'X-API-Key': key, 'Content-Type': 'application/json' };
  if (ip) headers['CF-Connecting-IP'] = ip;
  const cf = { ...(country ? { country } : {}), ...(asn ? { asn } : {}) };
  const request = new Request(`${BASE}${path}`, { method: 'POST', headers, body: JSON.stringify(body), cf } as RequestInit);
  const res = await SELF.fetch(request);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const addRule = async (type: string, value: string, note?: string) => {
  const res = await call('/admin/blocklist', { admin: true, body: { type, value, note } });
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; value: string };
};

const hitsOf = async (ruleId: number) =>
  env.DB.prepare('SELECT hits, last_hit_at AS lastHitAt FROM blocklist WHERE id = ?').bind(ruleId).first<{ hits: number; lastHitAt: string | null }>();

describe('the blocklist', () => {
  it('each rule type refuses a purchase and a deposit with 403 BLOCKED, changes nothing, and counts its hits', async () => {
    const domain = `${unique('bad').toLowerCase()}.example`;
    const cases: Array<[string, (u: TestUser) => string, { ip?: string; country?: string; asn?: number }]> = [
      ['email', (u) => u.email.toUpperCase(), {}],
      ['email_domain', () => domain, {}],
      ['ip', () => '198.51.100.0/24', { ip: '198.51.100.77' }],
      ['ip', () => '2001:db8:abcd::/48', { ip: '2001:db8:abcd:12::1' }],
      ['ip', () => '203.0.113.9', { ip: '203.0.113.9' }],
      ['country', () => 'kp', { country: 'KP' }],
      ['asn', () => 'AS64512', { asn: 64512 }],
    ];
    for (const [type, value, place] of cases) {
      let user = await newUser({ balance: 5 });
      if (type === 'email_domain') {
        const email = `someone-${unique('x')}@${domain}`;
        const created = await call('/admin/users', { admin: true, body: { name: 'Blocked', email, password: 'correct horse battery' } });
        await call(`/admin/users/${created.json.data.id}/balance-adjustments`, { admin: true, body: { amount: 5, description: 'seed' } });
        user = { id: created.json.data.id, key: created.json.data.api_key, email };
      }
      const product = await newProduct({ price: 1, stock: 1 });
      const rule = await addRule(type, value(user));
      const bought = await fromPlace('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, ...place });
      expect(bought.status, `${type} ${JSON.stringify(bought.json)}`).toBe(403);
      expect(bought.json).toMatchObject({ code: 'BLOCKED', error: 'This cannot be done from this account or place. Contact the shop.' });
      const deposited = await fromPlace('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' }, ...place });
      expect(deposited.json?.code, type).toBe('BLOCKED');
      expect(await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first('n')).toBe(0);
      expect(await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(user.id).first('n')).toBe(0);
      expect(await balanceOf(user)).toBe(5);
      const hits = await hitsOf(rule.id);
      expect(hits?.hits, type).toBe(2);
      expect(hits?.lastHitAt).toMatch(/Z$/);
      // reads still work; another place is not blocked by a place rule
      expect((await call('/orders', { key: user.key })).status).toBe(200);
      if (Object.keys(place).length > 0) expect((await fromPlace('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, ip: '192.0.2.1' })).status).toBe(201);
      expect((await call(`/admin/blocklist/${rule.id}`, { method: 'DELETE', admin: true })).status).toBe(200);
    }
  });

  it('a dashboard sign-up from a blocked email domain is refused: no account, no session', async () => {
    const domain = `${unique('signup').toLowerCase()}.example`;
    const rule = await addRule('email_domain', `@${domain}`);
    expect(rule.value).toBe(domain);
    const email = `new@${domain}`;
    const page = await visit('/dashboard/sign-up');
    const res = await visit('/dashboard/sign-up', {
      form: { name: 'New', email, password: 'correct horse battery', password_confirmation: 'correct horse battery', ...hiddenKey(page.text) },
      vars: { DASHBOARD_SIGNUP: 'open' },
    });
    expect(res.status).toBe(403);
    expect(res.text).toContain('This cannot be done from this account or place.');
    expect(res.headers.get('Set-Cookie') ?? '').not.toContain('session');
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first('n')).toBe(0);
    expect((await hitsOf(rule.id))?.hits).toBe(1);
    const fine = await visit('/dashboard/sign-up', {
      form: { name: 'New', email: newEmail(), password: 'correct horse battery', password_confirmation: 'correct horse battery' },
      vars: { DASHBOARD_SIGNUP: 'open' },
    });
    expect(fine.status).toBe(303);
  });

  it('dashboard Buy is refused by an ip rule too', async () => {
    const user = await signedInUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 1 });
    const rule = await addRule('ip', '100.64.0.0/10');
    const page = await visit('/dashboard/shop', { cookie: user.cookie, ip: '100.64.1.2' });
    const res = await visit('/dashboard/shop', {
      cookie: user.cookie,
      ip: '100.64.1.2',
      form: { product_id: String(product.id), quantity: '1', idempotency_key: idempotencyKeyIn(page.text) },
    });
    expect(res.text).toContain('This cannot be done from this account or place.');
    expect(res.status).toBe(403);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first('n')).toBe(0);
    expect((await hitsOf(rule.id))?.hits).toBe(1);
    await call(`/admin/blocklist/${rule.id}`, { method: 'DELETE', admin: true });
  });

  it('invalid values and duplicates are 422 errors.value; rules list and delete (audited)', async () => {
    for (const [type, value] of [['email', 'nope'], ['email_domain', 'no_domain'], ['ip', '300.1.1.1'], ['ip', '10.0.0.0/33'], ['country', 'BEL'], ['asn', 'x1']]) {
      const res = await call('/admin/blocklist', { admin: true, body: { type, value } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.value, `${type} ${value}`).toBeDefined();
    }
    expectError(await call('/admin/blocklist', { admin: true, body: { type: 'phone', value: '1' } }), 422, 'VALIDATION_FAILED');
    const value = `${unique('dup')}@example.com`;
    const rule = await addRule('email', value, 'chargebacks');
    expectError(await call('/admin/blocklist', { admin: true, body: { type: 'email', value: value.toUpperCase() } }), 422, 'VALIDATION_FAILED');
    const listed = await call('/admin/blocklist?per_page=100', { admin: true });
    expect(listed.json.data.find((r: any) => r.id === rule.id)).toMatchObject({ type: 'email', value, note: 'chargebacks', hits: 0, last_hit_at: null });
    expect((await call(`/admin/blocklist/${rule.id}`, { method: 'DELETE', admin: true })).status).toBe(200);
    expectError(await call(`/admin/blocklist/${rule.id}`, { method: 'DELETE', admin: true }), 404, 'NOT_FOUND');
    // Rule ids may be reused after a deletion: the entries of this rule are the ones naming its value.
    const audit = await env.DB.prepare("SELECT action FROM audit_log WHERE target = ? AND json_extract(details, '$.value') = ? ORDER BY id").bind(`blocklist:${rule.id}`, value).all();
    expect(audit.results).toEqual([{ action: 'blocklist.added' }, { action: 'blocklist.removed' }]);
  });
});

function hiddenKey(html: string): Record<string, string> {
  const match = /name="idempotency_key" value="([^"]+)"/.exec(html);
  return match ? { idempotency_key: match[1] } : {};
}

describe('holds', () => {
  it('the operator puts and lifts a hold: deposits and purchases 403 ACCOUNT_ON_HOLD, reads work; audited', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 2 });
    const held = await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: 'Chargeback on card' } });
    expect(held.status, held.text).toBe(200);
    expect(held.json.data).toMatchObject({ user_id: user.id, on_hold: true, hold_reason: 'Chargeback on card' });
    expectError(await buy(user, product.id, 1), 403, 'ACCOUNT_ON_HOLD');
    expectError(await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } }), 403, 'ACCOUNT_ON_HOLD');
    expect((await call('/wallet/balance', { key: user.key })).status).toBe(200);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM deposits WHERE user_id = ?').bind(user.id).first('n')).toBe(0);
    const shown = await call(`/admin/users/${user.id}`, { admin: true });
    expect(shown.json.data).toMatchObject({ on_hold: true, hold_reason: 'Chargeback on card' });
    const lifted = await call(`/admin/users/${user.id}/hold`, { method: 'DELETE', admin: true });
    expect(lifted.json.data).toMatchObject({ on_hold: false, hold_reason: null });
    expect((await buy(user, product.id, 1)).status).toBe(201);
    const audit = await env.DB.prepare("SELECT action FROM audit_log WHERE target = ? AND action LIKE 'user.%' ORDER BY id").bind(`user:${user.id}`).all();
    expect(audit.results.map((r) => r.action)).toEqual(expect.arrayContaining(['user.held', 'user.released']));
    expectError(await call('/admin/users/999999999/hold', { admin: true, body: { reason: 'x' } }), 404, 'NOT_FOUND');
  });

  it('a Stripe refund or dispute of a credited deposit puts its user on hold in the batch that records it', async () => {
    for (const type of ['charge.refunded', 'charge.dispute.created']) {
      const user = await newUser();
      const deposit = await vendorDeposit('stripe', user);
      vendorSays('stripe', deposit, 'paid');
      const session = { id: 'cs_test_1', object: 'checkout.session', client_reference_id: deposit.reference, amount_total: 1000, currency: 'usd', payment_intent: `pi_${deposit.reference}`, payment_status: 'paid', status: 'complete' };
      const send = async (eventType: string, object: unknown) => {
        const body = JSON.stringify({ id: `evt_${crypto.randomUUID().slice(0, 12)}`, object: 'event', type: eventType, data: { object } });
        return notify('stripe', body, { 'Stripe-Signature': await stripeSignature(body) });
      };
      await send('checkout.session.completed', session);
      expect(await balanceOf(user)).toBe(10);
      const product = await newProduct({ price: 1, stock: 1 });
      const reversed = await send(type, { id: 'ch_1', object: 'charge', payment_intent: `pi_${deposit.reference}`, amount: 1000, amount_refunded: 1000, charge: 'ch_1' });
      expect(reversed.status).toBe(200);
      expect((await gatewayEventsOf(deposit.id)).some((e) => e.outcome === 'reversed')).toBe(true);
      expectError(await buy(user, product.id, 1), 403, 'ACCOUNT_ON_HOLD');
      const shown = await call(`/admin/users/${user.id}`, { admin: true });
      expect(shown.json.data.on_hold, type).toBe(true);
      expect(shown.json.data.hold_reason).toContain(`deposit #${deposit.id}`);
    }
  });

  it('a pending order on hold can still be cancelled and refunded (holds stop money coming in and going out to goods only)', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 1 });
    const placed = await order(user, product.id);
    await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: 'look' } });
    expect((await call(`/orders/${placed.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    await expectAuditClean();
  });
});

describe('new deposits are unaffected for users not on hold', () => {
  it('creates a deposit', async () => {
    const user = await newUser();
    expect((await newDeposit(user)).deposit_id).toBeGreaterThan(0);
  });
});
