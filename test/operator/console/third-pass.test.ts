import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { idempotencyKeyIn, visit } from '../../dashboard-helpers';
import { PASSWORD } from '../../dashboard-helpers';
import { buy, call, newProduct, newUser, restock, unique } from '../../helpers';

// The console, third pass: every form ends on a notice, the coupon form reads what people type, the orders page's
// one filter with totals, the audit log's links, an operator's landing, a product's unsold items (Delete), the
// sign-in page after a reset, and the line break after every JSON answer.

const notice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const follow = async (res: { location: string | null }, cookie?: string) => {
  expect(res.location).not.toBeNull();
  return visit(res.location!, { cookie });
};
const lastAudit = async () => (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
const couponCode = () => unique('C').replace(/[^A-Za-z0-9-]/g, '').slice(-20);
// A tiny valid PNG (1x1).
const PNG = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='), (ch) => ch.charCodeAt(0));

describe('every console form that changes something ends on a notice', () => {
  it('Create coupon, Save coupon, Save discount, Upload image and Remove image', async () => {
    const { cookie } = await newOperator();
    const form = await visit('/dashboard/console/coupons', { cookie });
    const created = await visit('/dashboard/console/coupons', { cookie, form: { code: couponCode(), percent_off: '10', max_per_user: '1', active: 'on', idempotency_key: idempotencyKeyIn(form.text) } });
    expect(created.status, created.text.slice(0, 300)).toBe(303);
    expect(notice((await follow(created, cookie)).text)).toBe('Coupon created: buyers can use it now if it is active and within its dates.');
    const saved = await visit(created.location!.split('?')[0], { cookie, form: { percent_off: '15', active: 'on' } });
    expect(notice((await follow(saved, cookie)).text)).toBe('Coupon saved.');

    const buyer = await newUser();
    const discount = await visit(`/dashboard/console/users/${buyer.id}/discount`, { cookie, form: { discount_percent: '5' } });
    expect(notice((await follow(discount, cookie)).text)).toBe('Discount saved: it applies to this user&#39;s next purchases.');

    const product = await newProduct();
    const body = new FormData();
    body.append('image', new File([PNG], 'one.png', { type: 'image/png' }));
    const { SELF } = await import('cloudflare:test');
    const uploaded = await SELF.fetch(`http://localhost/dashboard/console/products/${product.id}/image`, {
      method: 'POST',
      body,
      headers: { Cookie: `dashboard_session=${cookie}`, Origin: 'http://localhost' },
      redirect: 'manual',
    });
    expect(uploaded.status, await uploaded.clone().text()).toBe(303);
    expect(notice((await follow({ location: uploaded.headers.get('Location') }, cookie)).text)).toBe('Image uploaded: the shop and the product card show it now.');
    const removed = await visit(`/dashboard/console/products/${product.id}/image/remove`, { cookie, form: {} });
    expect(notice((await follow(removed, cookie)).text)).toBe('Image removed: the shop shows a neutral placeholder.');
  });

  it('after a password reset, the sign-in page says the new password is set', async () => {
    const user = await newUser();
    const link = (await call(`/admin/users/${user.id}/password-reset`, { admin: true, method: 'POST' })).json.data.url as string;
    const used = await visit(new URL(link).pathname, { form: { new_password: 'a new password 42', new_password_confirmation: 'a new password 42' } });
    expect(used.location).toBe('/dashboard/sign-in?done=password_reset');
    expect(notice((await follow(used)).text)).toBe('Your new password is set and your other sessions were signed out: sign in with it.');
  });
});

describe('the coupon form reads what people type', () => {
  it('10% and $5, date inputs, products by name, Max per user shown; errors use the labels', async () => {
    const { cookie } = await newOperator();
    const [first, second] = [await newProduct({ name: `Apple ${unique('n')}` }), await newProduct({ name: `Banana ${unique('n')}` })];
    const page = await visit('/dashboard/console/coupons', { cookie });
    expect(page.text).toContain(`<option value="${first.id}">${first.name}</option>`);
    expect(page.text).toMatch(/<input id="field-max_per_user" name="max_per_user" type="text" value="1"/);
    expect(page.text).toMatch(/id="field-starts_at" name="starts_at" type="date"/);

    // product_ids posted twice, as a multiple select sends them
    const post = (fields: Array<[string, string]>) => fieldsPost(cookie, fields);
    const percent = await post([['code', couponCode()], ['percent_off', '10%'], ['starts_at', '2030-01-01'], ['expires_at', '2030-01-31'], ['max_per_user', '2'], ['product_ids', String(first.id)], ['product_ids', String(second.id)], ['active', 'on'], ['idempotency_key', crypto.randomUUID()]]);
    expect(percent.status, percent.text.slice(0, 400)).toBe(303);
    const id = Number(/coupons\/(\d+)/.exec(percent.location!)![1]);
    expect((await call(`/admin/coupons/${id}`, { admin: true })).json.data).toMatchObject({
      percent_off: 10,
      starts_at: '2030-01-01T00:00:00.000Z',
      expires_at: '2030-02-01T00:00:00.000Z',
      max_per_user: 2,
      product_ids: [first.id, second.id],
    });
    // the edit form shows the days as entered and the products picked
    const edit = await visit(`/dashboard/console/coupons/${id}`, { cookie });
    expect(edit.text).toContain('value="2030-01-01"');
    expect(edit.text).toContain('value="2030-01-31"');
    expect(edit.text).toContain(`<option value="${second.id}" selected="">`);

    const amount = await post([['code', couponCode()], ['amount_off', '$5'], ['min_total', '$20'], ['active', 'on'], ['idempotency_key', crypto.randomUUID()]]);
    expect(amount.status, amount.text.slice(0, 400)).toBe(303);
    const amountId = Number(/coupons\/(\d+)/.exec(amount.location!)![1]);
    expect((await call(`/admin/coupons/${amountId}`, { admin: true })).json.data).toMatchObject({ amount_off: 5, min_total: 20, product_ids: null, max_per_user: 1 });

    const before = (await call('/admin/coupons', { admin: true })).json.meta.total;
    const refused = await post([['code', couponCode()], ['percent_off', 'ten'], ['active', 'on'], ['idempotency_key', crypto.randomUUID()]]);
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('Percent off must be');
    expect(refused.text).not.toContain('percent_off must');
    expect((await call('/admin/coupons', { admin: true })).json.meta.total).toBe(before);
  });
});

/** A form post with repeated fields (URLSearchParams keeps every value). */
async function fieldsPost(cookie: string, fields: Array<[string, string]>) {
  const { SELF } = await import('cloudflare:test');
  const res = await SELF.fetch('http://localhost/dashboard/console/coupons', {
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { Cookie: `dashboard_session=${cookie}`, Origin: 'http://localhost', 'Content-Type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
  });
  return { status: res.status, text: await res.text(), location: res.headers.get('Location') };
}

describe('the orders page: one filter form with its count and revenue', () => {
  it('search, from, to and status apply together; the totals are the filtered orders\' (cancelled excluded)', async () => {
    const { cookie } = await newOperator();
    const buyer = await newUser({ balance: 100 });
    const product = await newProduct({ price: 2.5, stock: 5, name: `Filtered ${unique('p')}` });
    for (let i = 0; i < 3; i++) expect((await buy(buyer, product.id, 1)).status).toBe(201);
    const orders = (await call(`/admin/orders?user_id=${buyer.id}`, { admin: true })).json.data as Array<{ id: number }>;
    expect((await call(`/orders/${orders[0].id}/cancel`, { key: buyer.key, method: 'POST' })).status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const q = encodeURIComponent(buyer.email);
    const page = await visit(`/dashboard/console/orders?q=${q}&from=${today}&to=${today}&status=`, { cookie });
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.text).toMatch(/3 orders match, revenue <span class="money">\$5\.00<\/span>/);
    expect(page.text).toContain('>Apply</button>');
    expect(page.text.match(/<form method="get" action="\/dashboard\/console\/orders"/g)).toHaveLength(1);
    const pending = await visit(`/dashboard/console/orders?q=${q}&from=${today}&to=${today}&status=cancelled`, { cookie });
    expect(pending.text).toMatch(/1 order match, revenue <span class="money">\$0\.00<\/span>/);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const none = await visit(`/dashboard/console/orders?q=${q}&from=${yesterday}&to=${yesterday}`, { cookie });
    expect(none.text).toMatch(/0 orders match, revenue <span class="money">\$0\.00<\/span>/);
  });
});

describe('the audit log', () => {
  it('links order and coupon targets and wraps long details in their cell', async () => {
    const { cookie } = await newOperator();
    const code = couponCode();
    const created = await call('/admin/coupons', { admin: true, body: { code, percent_off: 5 } });
    const buyer = await newUser({ balance: 10 });
    const product = await newProduct({ stock: 1 });
    const order = (await buy(buyer, product.id, 1)).json.data;
    const confirm = await visit(`/dashboard/console/orders/${order.id}/cancel/confirm`, { cookie });
    expect((await visit(`/dashboard/console/orders/${order.id}/cancel`, { cookie, form: { idempotency_key: idempotencyKeyIn(confirm.text) } })).status).toBe(303);
    const page = await visit('/dashboard/console/audit?per_page=100', { cookie });
    expect(page.text).toContain(`<a href="/dashboard/console/orders/${order.id}">order:${order.id}</a>`);
    expect(page.text).toContain(`<a href="/dashboard/console/coupons/${created.json.data.id}">coupon:${created.json.data.id}</a>`);
    expect(page.text).toMatch(/<td role="cell" class="wrap" data-label="Details">/);
  });
});

describe('an operator who signs in lands on the console', () => {
  it('the console for an operator, the dashboard for a buyer; a `next` still wins', async () => {
    const operator = await newOperator();
    const landing = await visit('/dashboard/sign-in', { form: { email: operator.email, password: PASSWORD } });
    expect(landing.location).toBe('/dashboard/console');
    const next = await visit(`/dashboard/sign-in?next=${encodeURIComponent('/dashboard/keys')}`, { form: { email: operator.email, password: PASSWORD } });
    expect(next.location).toBe('/dashboard/keys');
    const buyer = await newUser();
    expect((await visit('/dashboard/sign-in', { form: { email: buyer.email, password: PASSWORD } })).location).toBe('/dashboard');
  });
});

describe("a product's unsold items", () => {
  it('lists only unsold items (search, 50 a page) and deletes one through a confirmation: audited, stock_count follows', async () => {
    const { cookie, id: operatorId } = await newOperator();
    const product = await newProduct({ stock: 0 });
    const prefix = unique('CODE');
    const items = await restock(product.id, 55, prefix);
    const buyer = await newUser({ balance: 10 });
    const sold = (await buy(buyer, product.id, 1)).json.data.stock_items[0] as string;
    expect(sold).toBe(items[0]);

    const page = await visit(`/dashboard/console/products/${product.id}`, { cookie });
    expect(page.text).toContain('54 in stock');
    expect(page.text).not.toContain(`<code>${sold}</code>`);
    expect(page.text.match(/<code>/g)).toHaveLength(50);
    expect(page.text).toContain('Page 1 of 2');
    const found = await visit(`/dashboard/console/products/${product.id}?q=${encodeURIComponent(`${prefix}-17`.toLowerCase())}`, { cookie });
    expect(found.text).toContain('1 matching');
    const itemId = Number(/items\/(\d+)\/delete\/confirm/.exec(found.text)![1]);
    // a sold item is not found by the search either
    expect((await visit(`/dashboard/console/products/${product.id}?q=${encodeURIComponent(sold)}`, { cookie })).text).toContain('No unsold item matches.');

    const confirm = await visit(`/dashboard/console/products/${product.id}/items/${itemId}/delete/confirm`, { cookie });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<code>${prefix}-17</code>`);
    expect(confirm.text).toContain('its stock goes from 54 to 53');
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(54); // showing it changed nothing

    const deleted = await visit(`/dashboard/console/products/${product.id}/items/${itemId}/delete`, { cookie, form: { idempotency_key: idempotencyKeyIn(confirm.text) } });
    expect(deleted.location).toBe(`/dashboard/console/products/${product.id}?done=item_deleted#items`);
    expect(notice((await follow(deleted, cookie)).text)).toBe('Item deleted: it is no longer in stock and can never be sold.');
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(53);
    const row = await env.DB.prepare('SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = ?').bind(product.id, 'available').first<{ n: number }>();
    expect(row!.n).toBe(53);
    const entry = await lastAudit();
    expect(entry).toMatchObject({ actor: `user:${operatorId}`, action: 'stock.item_deleted', target: `product:${product.id}`, details: { item_id: itemId } });
    expect(JSON.stringify(entry)).not.toContain(prefix); // never the item itself

    // again: nothing more is deleted, and the page says so
    const again = await visit(`/dashboard/console/products/${product.id}/items/${itemId}/delete`, { cookie, form: {} });
    expect(again.location).toBe(`/dashboard/console/products/${product.id}?done=item_not_deleted#items`);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(53);
  });

  it('a sold item cannot be deleted: nothing changes (the purchase that claimed it first wins)', async () => {
    const { cookie } = await newOperator();
    const product = await newProduct({ stock: 2 });
    const buyer = await newUser({ balance: 10 });
    expect((await buy(buyer, product.id, 1)).status).toBe(201);
    const soldId = (await env.DB.prepare("SELECT id FROM stock_items WHERE product_id = ? AND status = 'sold'").bind(product.id).first<{ id: number }>())!.id;
    const auditBefore = (await lastAudit()).id;
    expect((await visit(`/dashboard/console/products/${product.id}/items/${soldId}/delete/confirm`, { cookie })).location).toBe(`/dashboard/console/products/${product.id}?done=item_not_deleted`);
    const refused = await visit(`/dashboard/console/products/${product.id}/items/${soldId}/delete`, { cookie, form: {} });
    expect(refused.location).toContain('done=item_not_deleted');
    expect((await env.DB.prepare('SELECT status FROM stock_items WHERE id = ?').bind(soldId).first<{ status: string }>())!.status).toBe('sold');
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(1);
    expect((await lastAudit()).id).toBe(auditBefore);
    // another product's item through this product's path: nothing
    const other = await newProduct({ stock: 1 });
    const otherId = (await env.DB.prepare('SELECT id FROM stock_items WHERE product_id = ?').bind(other.id).first<{ id: number }>())!.id;
    expect((await visit(`/dashboard/console/products/${product.id}/items/${otherId}/delete`, { cookie, form: {} })).location).toContain('done=item_not_deleted');
    expect((await call(`/stock/${other.id}`)).json.data.stock_count).toBe(1);
  });

  it('racing purchases and deletes of the last items: every item is sold or deleted once, stock_count never lies', async () => {
    const { cookie } = await newOperator();
    const product = await newProduct({ stock: 4, price: 1 });
    const ids = (await env.DB.prepare('SELECT id FROM stock_items WHERE product_id = ? ORDER BY id').bind(product.id).all<{ id: number }>()).results.map((r) => r.id);
    const buyers = await Promise.all([1, 2, 3, 4].map(() => newUser({ balance: 5 })));
    const outcomes = await Promise.all([
      ...buyers.map((b) => buy(b, product.id, 1)),
      ...ids.map((id) => visit(`/dashboard/console/products/${product.id}/items/${id}/delete`, { cookie, form: {} })),
    ]);
    const bought = outcomes.slice(0, 4).filter((r) => r.status === 201).length;
    const deleted = outcomes.slice(4).filter((r) => (r as { location: string | null }).location?.includes('done=item_deleted')).length;
    expect(bought + deleted).toBe(4);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'").bind(product.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(0);
  });
});

describe('JSON answers end with a line break', () => {
  it('success, error, replay and cached stock answers alike; the JSON itself is unchanged', async () => {
    for (const path of ['/', '/stock', '/stock', '/nope']) {
      const res = await call(path);
      expect(res.text.endsWith('}\n'), `${path}: ${res.text.slice(-20)}`).toBe(true);
      expect(res.text.endsWith('}\n\n')).toBe(false);
    }
  });
});
