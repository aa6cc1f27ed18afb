import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { buy, call, expectError, newProduct, newUser, type TestUser } from '../helpers';
import { emailsTo } from '../email-helpers';
import { newOperator } from '../console-helpers';
import { signedInUser, visit } from '../dashboard-helpers';

// The owner's bad day (contract, "fourth pass"): an operator's refund is told (event and email), an order keeps the
// warranty its product had when it was bought.

async function order(user: TestUser, productId: number, quantity = 1) {
  const res = await buy(user, productId, quantity);
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; order_number: string; total_amount: number };
}

const setWarranty = async (productId: number, hours: number) =>
  expect((await call(`/admin/products/${productId}`, { method: 'PATCH', admin: true, body: { warranty_hours: hours } })).status).toBe(200);

const report = (user: TestUser, orderId: number, index = 0) =>
  call(`/orders/${orderId}/items/${index}/report`, { key: user.key, body: { reason: 'The code was already redeemed.' } });

describe('an operator\'s refund is told', () => {
  it('writes order.refunded per refund (the order, amount, reason) and emails the buyer order_refunded', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 3, stock: 2 });
    const placed = await order(user, product.id);
    for (const [amount, reason] of [[1.25, 'late delivery'], [0.75, 'goodwill']] as const) {
      const res = await call(`/admin/orders/${placed.id}/refund`, { admin: true, body: { amount, reason } });
      expect(res.status, res.text).toBe(200);
    }
    const events = await call('/events?type=order.refunded', { key: user.key });
    expect(events.status, events.text).toBe(200);
    const data = events.json.data.map((e: any) => e.data);
    expect(data).toEqual([
      expect.objectContaining({ amount: 0.75, reason: 'goodwill', object: expect.objectContaining({ id: placed.id, refunded_amount: 2 }) }),
      expect.objectContaining({ amount: 1.25, reason: 'late delivery', object: expect.objectContaining({ id: placed.id, refunded_amount: 1.25 }) }),
    ]);
    // Another event type's data stays { object } alone.
    const created = await call('/events?type=order.created', { key: user.key });
    expect(Object.keys(created.json.data[0].data)).toEqual(['object']);

    const mails = (await emailsTo(user.email)).filter((e) => e.template === 'order_refunded');
    expect(mails.map((m) => JSON.parse(m.data))).toEqual([
      expect.objectContaining({ order_number: placed.order_number, amount_cents: 125, reason: 'late delivery' }),
      expect.objectContaining({ order_number: placed.order_number, amount_cents: 75, reason: 'goodwill' }),
    ]);
  });

  it('a refused refund writes no event and no email', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const placed = await order(user, product.id);
    expectError(await call(`/admin/orders/${placed.id}/refund`, { admin: true, body: { amount: 2, reason: 'too much' } }), 422, 'VALIDATION_FAILED');
    expect((await call('/events?type=order.refunded', { key: user.key })).json.data).toEqual([]);
    expect((await emailsTo(user.email)).filter((e) => e.template === 'order_refunded')).toEqual([]);
  });
});

describe('warranty is the order\'s', () => {
  it('a warranty set after the sale does not reach back; one removed after it stays the order\'s', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 3 });
    const before = await order(user, product.id);
    await setWarranty(product.id, 48);
    const within = await order(user, product.id);
    await setWarranty(product.id, 0);
    const after = await order(user, product.id);

    const none = await report(user, before.id);
    expectError(none, 422, 'WARRANTY_EXPIRED');
    expect(none.json.error).toBe('This product has no replacement warranty');
    expect((await report(user, within.id)).status).toBe(201);
    expectError(await report(user, after.id), 422, 'WARRANTY_EXPIRED');
    const kept = await env.DB.prepare('SELECT warranty_hours AS hours FROM orders WHERE id IN (?, ?, ?) ORDER BY id').bind(before.id, within.id, after.id).all();
    expect(kept.results).toEqual([{ hours: 0 }, { hours: 48 }, { hours: 0 }]);
  });
});

describe('a hold is visible', () => {
  it('GET /user/profile says on_hold while the operator holds the account', async () => {
    const user = await newUser();
    expect((await call('/user/profile', { key: user.key })).json.data.on_hold).toBe(false);
    expect((await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: 'chargeback' } })).status).toBe(200);
    expect((await call('/user/profile', { key: user.key })).json.data.on_hold).toBe(true);
    expect((await call(`/admin/users/${user.id}/hold`, { admin: true, method: 'DELETE' })).status).toBe(200);
    expect((await call('/user/profile', { key: user.key })).json.data.on_hold).toBe(false);
  });
});

describe('a new claim is told to the operators', () => {
  it('each enabled operator gets claim_opened (buyer, "Item 2 of 3", reason; never the item); a refused report emails nobody', async () => {
    const operator = await newOperator();
    const buyer = await newUser({ balance: 10, name: 'Bea Buyer' });
    const product = await newProduct({ price: 1, stock: 3 });
    await setWarranty(product.id, 24);
    const placed = await order(buyer, product.id, 3);
    const res = await call(`/orders/${placed.id}/items/1/report`, { key: buyer.key, body: { reason: 'Says already redeemed' } });
    expect(res.status, res.text).toBe(201);
    const mails = (await emailsTo(operator.email)).filter((e) => e.template === 'claim_opened');
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toContain(placed.order_number);
    expect(JSON.parse(mails[0].data)).toMatchObject({
      buyer_name: 'Bea Buyer',
      buyer_email: buyer.email,
      order_number: placed.order_number,
      item: 2,
      items: 3,
      reason: 'Says already redeemed',
      claim_url: `http://localhost/dashboard/console/claims/${res.json.data.id}`,
    });
    expect((await call(`/orders/${placed.id}/items/1/report`, { key: buyer.key, body: { reason: 'again' } })).status).toBe(409);
    expect((await emailsTo(operator.email)).filter((e) => e.template === 'claim_opened')).toHaveLength(1);
  });
});

describe("a held buyer's dashboard", () => {
  it('shows a banner with SUPPORT_EMAIL while on hold, none otherwise', async () => {
    const user = await signedInUser();
    expect((await visit('/dashboard', { cookie: user.cookie })).text).not.toContain('Your account is on hold');
    expect((await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: 'chargeback' } })).status).toBe(200);
    const page = await visit('/dashboard', { cookie: user.cookie });
    expect(page.text).toContain('Your account is on hold.');
    expect(page.text).toContain('mailto:help@example.com');
  });
});

describe("the console's claim holds what the owner decides on", () => {
  it('list and page: buyer, "Item 2 of 3", the reported item, earlier claims, the refund; decisions go through a posted confirmation', async () => {
    const operator = await newOperator();
    const buyer = await newUser({ balance: 10, name: 'Cleo Claimant' });
    const product = await newProduct({ price: 3, stock: 3 });
    await setWarranty(product.id, 24);
    const placed = (await buy(buyer, product.id, 3)).json.data as { id: number; stock_items: string[] };
    await report(buyer, placed.id, 0);
    const res = await report(buyer, placed.id, 1);
    const claimId = res.json.data.id as number;

    const list = await visit('/dashboard/console/claims', { cookie: operator.cookie });
    expect(list.text).toContain('open (shown)');
    expect(list.text).toContain('Cleo Claimant');
    expect(list.text).toContain('Item 2 of 3');

    const one = await visit(`/dashboard/console/claims/${claimId}`, { cookie: operator.cookie });
    expect(one.status).toBe(200);
    for (const text of ['Cleo Claimant', buyer.email, 'Item 2 of 3', 'index 1)', placed.stock_items[1], '$3.00']) expect(one.text).toContain(text);
    expect(one.text).toMatch(/Earlier claims by this buyer<\/dt><dd>1<\/dd>/);

    const confirm = await visit(`/dashboard/console/claims/${claimId}/reject/confirm`, { cookie: operator.cookie, form: { note: 'Redeemed by you' } });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Confirm');
    expect(confirm.text).toContain(`action="/dashboard/console/claims/${claimId}/reject"`);
    expect(confirm.text).toContain('name="note" value="Redeemed by you"');
    expect(await env.DB.prepare('SELECT status FROM claims WHERE id = ?').bind(claimId).first('status')).toBe('open');
  });
});

describe("the console's users list tells a hold", () => {
  it('says "On hold" and filters by it', async () => {
    const operator = await newOperator();
    const held = await newUser({ name: 'Hal Held' });
    const free = await newUser({ name: 'Fay Free' });
    expect((await call(`/admin/users/${held.id}/hold`, { admin: true, body: { reason: 'chargeback' } })).status).toBe(200);
    const all = await visit('/dashboard/console/users', { cookie: operator.cookie });
    expect(all.text).toMatch(/Hal Held[^]*On hold/);
    const filtered = await visit('/dashboard/console/users?on_hold=1', { cookie: operator.cookie });
    expect(filtered.text).toContain('On hold (shown)');
    expect(filtered.text).toContain('Hal Held');
    expect(filtered.text).not.toContain(free.email);
  });
});

describe('order pages say when the warranty ends; the orders list has a Refunded column', () => {
  it('buyer and console order pages show the end; the list shows what was refunded', async () => {
    const operator = await newOperator();
    const buyer = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 1 });
    await setWarranty(product.id, 48);
    const placed = await order(buyer, product.id);
    const ends = new Date(Date.parse((await call(`/orders/${placed.id}`, { key: buyer.key })).json.data.created_at) + 48 * 3_600_000).toISOString();
    for (const [path, cookie] of [[`/dashboard/orders/${placed.id}`, buyer.cookie], [`/dashboard/console/orders/${placed.id}`, operator.cookie]]) {
      const text = (await visit(path, { cookie })).text;
      expect(text, path).toContain('Replacement warranty: 48 hours, until');
      expect(text, path).toContain(`datetime="${ends}"`);
    }
    expect((await call(`/admin/orders/${placed.id}/refund`, { admin: true, body: { amount: 0.5, reason: 'late' } })).status).toBe(200);
    const list = await visit(`/dashboard/console/orders?q=${placed.order_number}`, { cookie: operator.cookie });
    expect(list.text).toMatch(/>Refunded<\/th>/);
    expect(list.text).toContain('$0.50');
  });
});
