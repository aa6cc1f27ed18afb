import { describe, expect, it } from 'vitest';
import { newEmail, PASSWORD, visit } from '../dashboard-helpers';
import { call, expectError, newProduct, newUser } from '../helpers';

// Errors that tell a client what to do: the address an API key was refused from, a missing field said to be missing
// (not only the type it should have had), and a non-boolean email_receipts in the house style.

describe('IP_NOT_ALLOWED', () => {
  it('names the address seen in errors.ip', async () => {
    const user = await newUser();
    const made = await call('/api-keys', { key: user.key, body: { name: 'office', allowed_ips: ['10.0.0.0/8'] } });
    expect(made.status, made.text).toBe(201);
    for (const ip of ['11.0.0.1', '2001:db8::7']) {
      const res = await call('/wallet/balance', { key: made.json.data.key, headers: { 'CF-Connecting-IP': ip } });
      expectError(res, 403, 'IP_NOT_ALLOWED');
      expect(res.json.errors).toEqual({ ip: [ip] });
    }
    expect((await call('/wallet/balance', { key: made.json.data.key, headers: { 'CF-Connecting-IP': '10.1.2.3' } })).status).toBe(200);
  });
});

describe('a missing required field', () => {
  it('says "<field> is required" on the API, whatever type the field has', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const cases: Array<[string, unknown, string]> = [
      ['/orders', { product_id: product.id }, 'quantity'],
      ['/orders', { quantity: 1 }, 'product_id'],
      ['/wallet/deposit', { gateway: 'gateway_one' }, 'amount'],
      ['/wallet/deposit', { amount: 10 }, 'gateway'],
      ['/api-keys', {}, 'name'],
    ];
    for (const [path, body, field] of cases) {
      const res = await call(path, { key: user.key, body });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors, `${path} ${JSON.stringify(body)}`).toEqual({ [field]: [`${field} is required`] });
    }
    const admin = await call('/admin/users', { admin: true, body: { email: newEmail(), password: PASSWORD } });
    expect(admin.json.errors).toEqual({ name: ['name is required'] });
    const product2 = await call('/admin/products', { admin: true, body: { name: 'P', sku: `SKU-${Date.now()}` } });
    expect(product2.json.errors).toEqual({ price: ['price is required'] });
    const tier = await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { volume_prices: [{ min_quantity: 2 }] } });
    expect(tier.json.errors).toEqual({ 'volume_prices.0.price': ['volume_prices.0.price is required'] });
  });

  it('a field sent with the wrong type keeps its type message', async () => {
    const user = await newUser();
    const res = await call('/orders', { key: user.key, body: { product_id: 1, quantity: '2' } });
    expect(res.json.errors).toEqual({ quantity: ['quantity must be an integer'] });
    const nullQuantity = await call('/orders', { key: user.key, body: { product_id: 1, quantity: null } });
    expect(nullQuantity.json.errors).toEqual({ quantity: ['quantity must be an integer'] });
  });

  it('says so on the dashboard too (a form without the field)', async () => {
    const res = await visit('/dashboard/sign-up', { form: { email: newEmail(), password: PASSWORD, password_confirmation: PASSWORD } });
    expect(res.status).toBe(422);
    expect(res.text).toContain('name is required');
  });
});

describe('email_receipts that is not a boolean', () => {
  it('is a 422 on errors.email_receipts in the house style', async () => {
    const user = await newUser();
    for (const value of ['yes', 1, null]) {
      const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { email_receipts: value } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors).toEqual({ email_receipts: ['email_receipts must be a boolean'] });
    }
  });
});
