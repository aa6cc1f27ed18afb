import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { idempotencyKeyIn, signedInUser, visit } from '../../dashboard-helpers';
import { balanceOf, buy, call, newProduct, unique } from '../../helpers';

// After the sale in the pages: the buyer's "Report a problem", the console's Claims (with the open count in the nav)
// and Blocklist pages, Refund on an order and holds on a user (through confirmations), each form landing on a page
// with its one-line notice; new products start as final sale.

const notice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];

async function follow(res: { status: number; location: string | null; text: string }, cookie: string) {
  expect(res.status, res.text.slice(0, 300)).toBe(303);
  return visit(res.location!, { cookie });
}

describe('Report a problem, and the console resolving it', () => {
  it('the buyer reports an item, the operator replaces it from Claims, the buyer sees the new item', async () => {
    const buyer = await signedInUser({ balance: 10 });
    const operator = await newOperator();
    const product = await newProduct({ price: 1, stock: 2 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 72 } });
    const order = (await buy(buyer, product.id, 1)).json.data;

    const before = await visit(`/dashboard/orders/${order.id}`, { cookie: buyer.cookie });
    expect(before.text).toContain('Report a problem');
    const reported = await visit(`/dashboard/orders/${order.id}/items/0/report`, { cookie: buyer.cookie, form: { reason: 'Already redeemed' } });
    const landed = await follow(reported, buyer.cookie);
    expect(notice(landed.text)).toContain('Problem reported');
    expect(landed.text).toContain('the shop is looking at it');
    expect(landed.text).not.toContain('<summary>Report a problem</summary>');

    const claims = await visit('/dashboard/console/claims', { cookie: operator.cookie });
    expect(claims.text).toMatch(/Claims<span class="count" aria-label="\d+ open">/);
    expect(claims.text).toContain('Already redeemed');
    const claimId = (await env.DB.prepare('SELECT id FROM claims WHERE order_id = ?').bind(order.id).first<{ id: number }>())!.id;
    const replaced = await follow(await visit(`/dashboard/console/claims/${claimId}/replace`, { cookie: operator.cookie, form: {} }), operator.cookie);
    expect(notice(replaced.text)).toContain('Item replaced');
    const again = await visit(`/dashboard/console/claims/${claimId}/refund`, { cookie: operator.cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(again.status).toBe(409);
    expect(again.text).toContain('already resolved');

    const after = await visit(`/dashboard/orders/${order.id}`, { cookie: buyer.cookie });
    expect(after.text).not.toContain(order.stock_items[0]);
    const [item] = (await call(`/orders/${order.id}`, { key: buyer.key })).json.data.stock_items;
    expect(after.text).toContain(item);
    expect(after.text).toContain('Replaced: the item above is the new one.');
  });

  it('no warranty: no "Report a problem"; a forged report answers the order page with the refusal', async () => {
    const buyer = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const order = (await buy(buyer, product.id, 1)).json.data;
    expect((await visit(`/dashboard/orders/${order.id}`, { cookie: buyer.cookie })).text).not.toContain('Report a problem');
    const forged = await visit(`/dashboard/orders/${order.id}/items/0/report`, { cookie: buyer.cookie, form: { reason: 'x' } });
    expect(forged.status).toBe(422);
    expect(forged.text).toContain('no replacement warranty');
  });

  it('Reject with a note; the note is on the buyer\'s page', async () => {
    const buyer = await signedInUser({ balance: 10 });
    const operator = await newOperator();
    const product = await newProduct({ price: 1, stock: 1 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 1 } });
    const order = (await buy(buyer, product.id, 1)).json.data;
    const claim = (await call(`/orders/${order.id}/items/0/report`, { key: buyer.key, body: { reason: 'broken' } })).json.data;
    const rejected = await follow(await visit(`/dashboard/console/claims/${claim.id}/reject`, { cookie: operator.cookie, form: { note: 'Used on 2026-11-20' } }), operator.cookie);
    expect(notice(rejected.text)).toContain('Claim rejected');
    expect((await visit(`/dashboard/orders/${order.id}`, { cookie: buyer.cookie })).text).toContain('Report not accepted: Used on 2026-11-20');
  });
});

describe('console: refunds, holds, blocklist, final sale', () => {
  it('Refund through its confirmation, once; more than what is left is refused on the order page', async () => {
    const operator = await newOperator();
    const buyer = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 4, stock: 1 });
    const order = (await buy(buyer, product.id, 1)).json.data;
    const confirm = await visit(`/dashboard/console/orders/${order.id}/refund/confirm?amount=1.5&reason=late`, { cookie: operator.cookie });
    expect(confirm.text).toContain('This refunds ');
    expect(confirm.text).toContain('1.50');
    const form = { amount: '1.5', reason: 'late', idempotency_key: idempotencyKeyIn(confirm.text) };
    const done = await follow(await visit(`/dashboard/console/orders/${order.id}/refund`, { cookie: operator.cookie, form }), operator.cookie);
    expect(notice(done.text)).toContain('Refund made');
    expect((await visit(`/dashboard/console/orders/${order.id}/refund`, { cookie: operator.cookie, form })).status).toBe(303); // the same key: once
    expect(await balanceOf(buyer)).toBe(7.5);
    const over = await visit(`/dashboard/console/orders/${order.id}/refund`, { cookie: operator.cookie, form: { amount: '3', reason: 'x', idempotency_key: crypto.randomUUID() } });
    expect(over.status).toBe(422);
    expect(over.text).toContain('left to refund');
    expect((await visit(`/dashboard/orders/${order.id}`, { cookie: buyer.cookie })).text).toContain('Refunded by the shop: $1.50');
  });

  it('Put on hold and Lift hold through confirmations, each with its notice', async () => {
    const operator = await newOperator();
    const buyer = await signedInUser({ balance: 10 });
    const confirm = await visit(`/dashboard/console/users/${buyer.id}/hold/confirm?reason=${encodeURIComponent('Disputed card')}`, { cookie: operator.cookie });
    expect(confirm.text).toContain('are refused until you lift the hold');
    const held = await follow(await visit(`/dashboard/console/users/${buyer.id}/hold`, { cookie: operator.cookie, form: { reason: 'Disputed card' } }), operator.cookie);
    expect(notice(held.text)).toContain('Account on hold');
    expect(held.text).toContain('Disputed card');
    const product = await newProduct({ price: 1, stock: 1 });
    expect((await buy(buyer, product.id, 1)).json.code).toBe('ACCOUNT_ON_HOLD');
    const lifted = await follow(await visit(`/dashboard/console/users/${buyer.id}/hold/lift`, { cookie: operator.cookie, form: {} }), operator.cookie);
    expect(notice(lifted.text)).toContain('Hold lifted');
    expect((await buy(buyer, product.id, 1)).status).toBe(201);
  });

  it('Blocklist: add a rule, see its hits, remove it; a bad value is shown on the form', async () => {
    const operator = await newOperator();
    const buyer = await signedInUser({ balance: 10 });
    const added = await follow(await visit('/dashboard/console/blocklist', { cookie: operator.cookie, form: { type: 'email', value: buyer.email, note: 'fraud' } }), operator.cookie);
    expect(notice(added.text)).toContain('Rule added');
    const product = await newProduct({ price: 1, stock: 1 });
    expect((await buy(buyer, product.id, 1)).json.code).toBe('BLOCKED');
    const listed = await visit('/dashboard/console/blocklist', { cookie: operator.cookie });
    expect(listed.text).toContain(buyer.email.toLowerCase());
    const ruleId = (await env.DB.prepare("SELECT id FROM blocklist WHERE type = 'email' AND value = ?").bind(buyer.email.toLowerCase()).first<{ id: number }>())!.id;
    const removed = await follow(await visit(`/dashboard/console/blocklist/${ruleId}/remove`, { cookie: operator.cookie, form: {} }), operator.cookie);
    expect(notice(removed.text)).toContain('Rule removed');
    const bad = await visit('/dashboard/console/blocklist', { cookie: operator.cookie, form: { type: 'ip', value: '999.1.1.1' } });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('CIDR');
  });

  it('the new-product form starts as final sale, with the reason; the API default stays cancellable', async () => {
    const operator = await newOperator();
    const form = await visit('/dashboard/console/products', { cookie: operator.cookie });
    expect(form.text).toMatch(/name="final_sale"[^>]*checked/);
    expect(form.text).toContain('cannot be taken back');
    const sku = unique('FS');
    const created = await visit('/dashboard/console/products', {
      cookie: operator.cookie,
      form: { name: 'Gift card', sku, price: '10', active: 'on', final_sale: 'on', warranty_hours: '48', idempotency_key: idempotencyKeyIn(form.text) },
    });
    expect(created.status, created.text.slice(0, 300)).toBe(303);
    const product = (await call('/admin/products', { admin: true })).json.data.find((p: any) => p.sku === sku);
    expect(product).toMatchObject({ cancellable: false, warranty_hours: 48 });
    const viaApi = await call('/admin/products', { admin: true, body: { name: 'API', sku: unique('API'), price: 1 } });
    expect(viaApi.json.data).toMatchObject({ cancellable: true, warranty_hours: 0 });
  });
});
