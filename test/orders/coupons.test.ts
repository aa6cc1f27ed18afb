import { describe, expect, it } from 'vitest';
import { call, expectError, newProduct, newUser, unique } from '../helpers';

// The operator's side of prices: coupons (admin API), volume prices on products, a user's discount; each write on the
// audit log in its own batch.

const newCode = () => unique('c').toUpperCase().replace(/[^A-Z0-9-]/g, '').slice(-30);
const lastAudit = async () => (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];

describe('admin coupons', () => {
  it('creates a coupon (code stored upper case), lists it, reads it, changes it; each write audited', async () => {
    const code = newCode();
    const res = await call('/admin/coupons', { admin: true, body: { code: code.toLowerCase(), percent_off: 15, min_total: 10, max_redemptions: 100 } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data).toMatchObject({
      code,
      percent_off: 15,
      amount_off: null,
      min_total: 10,
      starts_at: null,
      expires_at: null,
      max_redemptions: 100,
      max_per_user: 1,
      product_ids: null,
      active: true,
      redemptions: 0,
    });
    const id = res.json.data.id;
    expect(await lastAudit()).toMatchObject({ actor: 'admin_token', action: 'coupon.created', target: `coupon:${id}`, details: { code, percent_off: 15, min_total: 10 } });

    const list = await call('/admin/coupons?per_page=100', { admin: true });
    expect(list.json.data.map((c: { id: number }) => c.id)).toContain(id);
    expect((await call(`/admin/coupons/${id}`, { admin: true })).json.data).toEqual(res.json.data);
    expectError(await call('/admin/coupons/999999999', { admin: true }), 404, 'NOT_FOUND');

    const patched = await call(`/admin/coupons/${id}`, {
      admin: true,
      method: 'PATCH',
      body: { amount_off: 2.5, active: false, expires_at: '2030-01-01T00:00:00Z', product_ids: [3, 1, 3] },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.data).toMatchObject({ code, percent_off: null, amount_off: 2.5, active: false, expires_at: '2030-01-01T00:00:00.000Z', product_ids: [1, 3] });
    expect(await lastAudit()).toMatchObject({ action: 'coupon.updated', target: `coupon:${id}`, details: { amount_off: 2.5, active: false } });
    expectError(await call('/admin/coupons/999999999', { admin: true, method: 'PATCH', body: { active: true } }), 404, 'NOT_FOUND');
  });

  it('a PATCH cannot change the code (422 errors.code), nor put starts_at after the stored expires_at or back', async () => {
    const code = unique('fix').replace(/[^A-Za-z0-9-]/g, '').slice(-30).toUpperCase();
    const created = await call('/admin/coupons', { admin: true, body: { code, percent_off: 10, starts_at: '2030-01-01T00:00:00Z', expires_at: '2030-02-01T00:00:00Z' } });
    expect(created.status, created.text).toBe(201);
    const { id } = created.json.data;
    const patch = (body: Record<string, unknown>) => call(`/admin/coupons/${id}`, { admin: true, method: 'PATCH', body });

    const renamed = await patch({ code: 'OTHER-CODE', active: false });
    expectError(renamed, 422, 'VALIDATION_FAILED');
    expect(Object.keys(renamed.json.errors)).toEqual(['code']);
    const late = await patch({ starts_at: '2030-03-01T00:00:00Z' });
    expectError(late, 422, 'VALIDATION_FAILED');
    expect(late.json.errors).toEqual({ starts_at: ['starts_at must be before expires_at'] });
    const early = await patch({ expires_at: '2029-12-31T00:00:00Z' });
    expectError(early, 422, 'VALIDATION_FAILED');
    expect(early.json.errors).toEqual({ expires_at: ['expires_at must be after starts_at'] });
    expect((await call(`/admin/coupons/${id}`, { admin: true })).json.data).toEqual(created.json.data);

    expect((await patch({ starts_at: '2030-01-15T00:00:00Z' })).status).toBe(200);
    expect((await patch({ expires_at: null })).status).toBe(200);
    expect((await patch({ starts_at: '2031-01-01T00:00:00Z' })).status).toBe(200);
  });

  it('a code is unique whatever its case (422 errors.code)', async () => {
    const code = newCode();
    expect((await call('/admin/coupons', { admin: true, body: { code, amount_off: 1 } })).status).toBe(201);
    const again = await call('/admin/coupons', { admin: true, body: { code: code.toLowerCase(), amount_off: 1 } });
    expectError(again, 422, 'VALIDATION_FAILED');
    expect(again.json.errors.code).toEqual(['The code has already been taken.']);
  });

  it('refuses invalid coupons with 422 on the field, creating nothing', async () => {
    const before = (await call('/admin/coupons', { admin: true })).json.meta.total;
    const cases: [Record<string, unknown>, string][] = [
      [{ code: newCode() }, 'percent_off'],
      [{ code: newCode(), percent_off: 10, amount_off: 1 }, 'percent_off'],
      [{ code: newCode(), percent_off: 0 }, 'percent_off'],
      [{ code: newCode(), percent_off: 101 }, 'percent_off'],
      [{ code: newCode(), percent_off: 10.5 }, 'percent_off'],
      [{ code: newCode(), amount_off: 0 }, 'amount_off'],
      [{ code: newCode(), amount_off: 1.005 }, 'amount_off'],
      [{ code: 'AB', percent_off: 10 }, 'code'],
      [{ code: 'NO SPACES', percent_off: 10 }, 'code'],
      [{ code: 'X'.repeat(33), percent_off: 10 }, 'code'],
      [{ code: newCode(), percent_off: 10, max_per_user: 0 }, 'max_per_user'],
      [{ code: newCode(), percent_off: 10, max_redemptions: 1.5 }, 'max_redemptions'],
      [{ code: newCode(), percent_off: 10, product_ids: [] }, 'product_ids'],
      [{ code: newCode(), percent_off: 10, starts_at: 'tomorrow' }, 'starts_at'],
      [{ code: newCode(), percent_off: 10, starts_at: '2030-01-02T00:00:00Z', expires_at: '2030-01-01T00:00:00Z' }, 'expires_at'],
    ];
    for (const [body, field] of cases) {
      const res = await call('/admin/coupons', { admin: true, body });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.json.errors), JSON.stringify(body)).toContain(field);
    }
    expect((await call('/admin/coupons', { admin: true })).json.meta.total).toBe(before);
  });

  it('redemptions count the orders bought with it', async () => {
    const code = newCode();
    const coupon = (await call('/admin/coupons', { admin: true, body: { code, percent_off: 50, max_per_user: null } })).json.data;
    const product = await newProduct({ price: 2, stock: 3 });
    const user = await newUser({ balance: 10 });
    for (let i = 0; i < 2; i++) expect((await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1, coupon: code } })).status).toBe(201);
    expect((await call(`/admin/coupons/${coupon.id}`, { admin: true })).json.data.redemptions).toBe(2);
  });
});

describe("a user's discount", () => {
  it('PATCH /admin/users/{id} sets discount_percent (audited as user.updated); the profile and admin views show it', async () => {
    const user = await newUser();
    expect((await call('/user/profile', { key: user.key })).json.data.discount_percent).toBe(0);
    const res = await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { discount_percent: 12 } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.discount_percent).toBe(12);
    expect(await lastAudit()).toMatchObject({ action: 'user.updated', target: `user:${user.id}`, details: { discount_percent: 12 } });
    expect((await call('/user/profile', { key: user.key })).json.data.discount_percent).toBe(12);
    expect((await call(`/admin/users?email=${encodeURIComponent(user.email)}`, { admin: true })).json.data[0].discount_percent).toBe(12);
    for (const discount_percent of [-1, 91, 5.5, '5']) {
      expectError(await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { discount_percent } }), 422, 'VALIDATION_FAILED');
    }
    expect((await call(`/admin/users/${user.id}`, { admin: true })).json.data.discount_percent).toBe(12);
  });
});

describe('volume prices on products', () => {
  it('POST/PATCH /admin/products take volume_prices; the product, /stock and /stock/{id} show them', async () => {
    const tiers = [
      { min_quantity: 5, price: 9.5 },
      { min_quantity: 10, price: 9 },
    ];
    const product = await newProduct({ price: 10, stock: 2 });
    const set = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { volume_prices: tiers } });
    expect(set.status, set.text).toBe(200);
    expect(set.json.data.volume_prices).toEqual(tiers);
    expect(await lastAudit()).toMatchObject({ action: 'product.updated', details: { volume_prices: tiers } });
    expect((await call(`/stock/${product.id}`)).json.data.volume_prices).toEqual(tiers);
    const listed = (await call('/stock')).json.data.find((s: { product_id: number }) => s.product_id === product.id);
    expect(listed.volume_prices).toEqual(tiers);

    const cleared = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { volume_prices: [] } });
    expect(cleared.json.data.volume_prices).toBeNull();
    expect((await call(`/stock/${product.id}`)).json.data.volume_prices).toBeNull();

    const sku = unique('SKU');
    const created = await call('/admin/products', { admin: true, body: { name: 'Tiered', sku, price: 3, volume_prices: [{ min_quantity: 2, price: 2.99 }] } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.volume_prices).toEqual([{ min_quantity: 2, price: 2.99 }]);
  });

  it('a PATCH of the tiers alone or the price alone is checked against the stored other, changing nothing when refused', async () => {
    const subscriber = await newUser();
    const hook = await call('/webhook-endpoints', { key: subscriber.key, body: { url: 'https://hooks.example.com/prices', events: ['product.price_changed'] } });
    expect(hook.status, hook.text).toBe(201);
    const product = await newProduct({ price: 10, stock: 1 });
    const patch = (body: Record<string, unknown>) => call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body });

    const tiersAtPrice = await patch({ volume_prices: [{ min_quantity: 2, price: 10 }] });
    expectError(tiersAtPrice, 422, 'VALIDATION_FAILED');
    expect(tiersAtPrice.json.errors).toEqual({ volume_prices: ["each volume price must be below the product's price"] });
    expect((await patch({ volume_prices: [{ min_quantity: 2, price: 9 }, { min_quantity: 5, price: 8 }] })).status).toBe(200);

    const priceAtTier = await patch({ price: 9 });
    expectError(priceAtTier, 422, 'VALIDATION_FAILED');
    expect(priceAtTier.json.errors).toEqual({ price: ['price must be above every volume price of the product'] });
    const stock = (await call(`/stock/${product.id}`)).json.data;
    expect(stock).toMatchObject({ price: 10, volume_prices: [{ min_quantity: 2, price: 9 }, { min_quantity: 5, price: 8 }] });
    // The refused changes wrote no event and no audit entry.
    const events = (await call('/events?type=product.price_changed&per_page=100', { key: subscriber.key })).json.data.filter(
      (e: { data: { object: { product_id: number } } }) => e.data.object.product_id === product.id,
    );
    expect(events).toHaveLength(1);
    expect(await lastAudit()).toMatchObject({ action: 'product.updated', details: { volume_prices: [{ min_quantity: 2, price: 9 }, { min_quantity: 5, price: 8 }] } });

    expect((await patch({ price: 9.01 })).status).toBe(200);
    expect((await patch({ volume_prices: null })).status).toBe(200);
    expect((await patch({ price: 1 })).status).toBe(200);
    expectError(await call('/admin/products/999999999', { admin: true, method: 'PATCH', body: { price: 3 } }), 404, 'NOT_FOUND');
  });

  it('refuses tiers that do not rise in quantity and fall in price, start below 2, exceed 10, or reach the price', async () => {
    const product = await newProduct({ price: 10 });
    const bad = [
      [{ min_quantity: 1, price: 9 }],
      [{ min_quantity: 5, price: 9 }, { min_quantity: 5, price: 8 }],
      [{ min_quantity: 5, price: 9 }, { min_quantity: 10, price: 9 }],
      [{ min_quantity: 5, price: 9.001 }],
      Array.from({ length: 11 }, (_, i) => ({ min_quantity: i + 2, price: 9 - i * 0.1 })),
      [{ min_quantity: 5, price: 10 }],
      'tiers',
    ];
    for (const volume_prices of bad) {
      const res = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { price: 10, volume_prices } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.json.errors).some((field) => field.startsWith('volume_prices')), JSON.stringify(res.json.errors)).toBe(true);
    }
  });
});
