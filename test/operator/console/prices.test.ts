import { describe, expect, it } from 'vitest';
import { idempotencyKeyIn, visit } from '../../dashboard-helpers';
import { call, newProduct, newUser, unique } from '../../helpers';
import { newOperator } from '../../console-helpers';

// The console's side of prices: the coupons page (list, "Create coupon", edit), the product form's "Volume prices"
// and a user's "Discount %", each through the admin API's service functions (audited).

const lastAudit = async () => (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];

describe('console: coupons', () => {
  it('creates a coupon from the form, lists it, edits it; a refused form shows its message and creates nothing', async () => {
    const operator = await newOperator();
    const code = unique('spring').replace(/[^A-Za-z0-9-]/g, '').slice(-30);
    const form = await visit('/dashboard/console/coupons', { cookie: operator.cookie });
    expect(form.status).toBe(200);
    expect(form.text).toContain('Create coupon');
    const created = await visit('/dashboard/console/coupons', {
      cookie: operator.cookie,
      form: { code, percent_off: '20', amount_off: '', min_total: '5', starts_at: '', expires_at: '', max_redemptions: '50', max_per_user: '2', product_ids: '', active: 'on', idempotency_key: idempotencyKeyIn(form.text) },
    });
    expect(created.status, created.text.slice(0, 300)).toBe(303);
    expect(created.location).toMatch(/^\/dashboard\/console\/coupons\/\d+\?done=coupon_created$/);
    const id = Number(/coupons\/(\d+)/.exec(created.location!)![1]);
    const coupon = (await call(`/admin/coupons/${id}`, { admin: true })).json.data;
    expect(coupon).toMatchObject({ code: code.toUpperCase(), percent_off: 20, amount_off: null, min_total: 5, max_redemptions: 50, max_per_user: 2, product_ids: null, active: true });
    expect(await lastAudit()).toMatchObject({ actor: `user:${operator.id}`, action: 'coupon.created', target: `coupon:${id}` });
    expect((await visit('/dashboard/console/coupons', { cookie: operator.cookie })).text).toContain(code.toUpperCase());

    const page = await visit(`/dashboard/console/coupons/${id}`, { cookie: operator.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('Save coupon');
    const saved = await visit(`/dashboard/console/coupons/${id}`, {
      cookie: operator.cookie,
      form: { percent_off: '', amount_off: '3.50', min_total: '', starts_at: '', expires_at: '2031-01-01T00:00:00Z', max_redemptions: '', max_per_user: '', product_ids: '' },
    });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    expect((await call(`/admin/coupons/${id}`, { admin: true })).json.data).toMatchObject({
      percent_off: null,
      amount_off: 3.5,
      min_total: null,
      expires_at: '2031-01-01T00:00:00.000Z',
      max_redemptions: null,
      max_per_user: null,
      active: false,
    });
    expect(await lastAudit()).toMatchObject({ action: 'coupon.updated', target: `coupon:${id}` });

    const before = (await call('/admin/coupons', { admin: true })).json.meta.total;
    const refused = await visit('/dashboard/console/coupons', {
      cookie: operator.cookie,
      form: { code: 'x', percent_off: '10', amount_off: '1', active: 'on', idempotency_key: crypto.randomUUID() },
    });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('Code must be 3 to 32 characters');
    expect((await call('/admin/coupons', { admin: true })).json.meta.total).toBe(before);
  });
});

describe('console: volume prices and a discount', () => {
  it('the product form takes "Volume prices", one min_quantity=price a line, and shows them again', async () => {
    const operator = await newOperator();
    const product = await newProduct({ price: 5 });
    const page = await visit(`/dashboard/console/products/${product.id}`, { cookie: operator.cookie });
    expect(page.text).toContain('Volume prices');
    const saved = await visit(`/dashboard/console/products/${product.id}`, {
      cookie: operator.cookie,
      form: { name: 'Tiered', sku: product.sku, price: '5', volume_prices: '10=4.50\r\n 50 = 4\n', active: 'on' },
    });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    expect((await call(`/stock/${product.id}`)).json.data.volume_prices).toEqual([
      { min_quantity: 10, price: 4.5 },
      { min_quantity: 50, price: 4 },
    ]);
    expect((await visit(`/dashboard/console/products/${product.id}`, { cookie: operator.cookie })).text).toContain('10=4.50\n50=4.00');
    const refused = await visit(`/dashboard/console/products/${product.id}`, {
      cookie: operator.cookie,
      form: { name: 'Tiered', sku: product.sku, price: '5', volume_prices: '10 for 4.50', active: 'on' },
    });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('is not min_quantity=price');
  });

  it('the user page sets "Discount %" (audited as user.updated)', async () => {
    const operator = await newOperator();
    const user = await newUser();
    expect((await visit(`/dashboard/console/users/${user.id}`, { cookie: operator.cookie })).text).toContain('Discount %');
    const saved = await visit(`/dashboard/console/users/${user.id}/discount`, { cookie: operator.cookie, form: { discount_percent: '25' } });
    expect(saved.status).toBe(303);
    expect((await call('/user/profile', { key: user.key })).json.data.discount_percent).toBe(25);
    expect(await lastAudit()).toMatchObject({ action: 'user.updated', target: `user:${user.id}`, details: { discount_percent: 25 } });
    const refused = await visit(`/dashboard/console/users/${user.id}/discount`, { cookie: operator.cookie, form: { discount_percent: '95' } });
    expect(refused.status).toBe(422);
    expect((await call('/user/profile', { key: user.key })).json.data.discount_percent).toBe(25);
  });
});

describe('orders show their prices', () => {
  it('the order.created event, the buyer\'s and the console\'s order pages show list price, discount and coupon', async () => {
    const operator = await newOperator();
    const product = await newProduct({ price: 4, stock: 2 });
    const user = await newUser({ balance: 10 });
    const code = unique('evt').replace(/[^A-Za-z0-9-]/g, '').slice(-30).toUpperCase();
    expect((await call('/admin/coupons', { admin: true, body: { code, amount_off: 1.25 } })).status).toBe(201);
    const bought = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1, coupon: code } });
    expect(bought.status, bought.text).toBe(201);
    const events = (await call('/events?type=order.created', { key: user.key })).json.data;
    expect(events[0].data.object).toMatchObject({ list_unit_price: 4, unit_price: 4, discount_amount: 1.25, coupon: code, total_amount: 2.75 });
    const consolePage = await visit(`/dashboard/console/orders/${bought.json.data.id}`, { cookie: operator.cookie });
    expect(consolePage.text).toContain('List price');
    expect(consolePage.text).toContain(`<dt>Coupon ${code}</dt>`);
    expect(consolePage.text).toContain('$1.25');
    // ... and the orders export, in its last three columns.
    const today = new Date().toISOString().slice(0, 10);
    const csv = await visit(`/dashboard/console/exports/orders.csv?from=${today}&to=${today}`, { cookie: operator.cookie });
    const line = csv.text.split('\r\n').find((l) => l.startsWith(`${bought.json.data.order_number},`));
    expect(line?.split(',').slice(-5)).toEqual(['2.75', 'false', '4.00', '1.25', code]);
  });
});
