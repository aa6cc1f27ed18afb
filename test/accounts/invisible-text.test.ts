import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { newEmail, PASSWORD, signedInUser, visit } from '../dashboard-helpers';
import { buy, call, expectError, newProduct, newUser, unique } from '../helpers';

// Invisible text (contract: "Human text", and "A revoked key buys nothing..."): human text also refuses U+200B-U+200D,
// U+2060, U+FEFF, U+2028 and U+2029, and a text made only of spaces and such characters is blank (422 where the field
// is required). One validator (src/lib/validation.ts), so the API, the dashboard and the console agree.

const INVISIBLE = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u2028', '\u2029'];
const INSIDE = INVISIBLE.map((ch) => `Ada${ch}Lovelace`);
const ONLY = ['\u200b', '\u200b\u200b \u2060', ' \ufeff ', '\u2028'];

const fieldRefused = (res: { status: number; json: any }, field: string, label: string) => {
  expectError(res, 422, 'VALIDATION_FAILED');
  expect(Object.keys(res.json.errors ?? {}), label).toEqual([field]);
};

describe('the API', () => {
  it('names, reasons and notes with an invisible character inside, or made only of them: 422 on the field, nothing stored', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 3 });
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 72 } })).status).toBe(200);
    const order = (await buy(user, product.id, 1)).json.data;
    for (const text of [...INSIDE, ...ONLY]) {
      const label = JSON.stringify(text);
      fieldRefused(await call('/admin/users', { admin: true, body: { name: text, email: newEmail(), password: PASSWORD } }), 'name', label);
      fieldRefused(await call('/user/profile', { key: user.key, method: 'PUT', body: { name: text } }), 'name', label);
      fieldRefused(await call('/api-keys', { key: user.key, body: { name: text } }), 'name', label);
      fieldRefused(await call('/admin/products', { admin: true, body: { name: text, sku: unique('SKU'), price: 1 } }), 'name', label);
      fieldRefused(await call(`/orders/${order.id}/items/0/report`, { key: user.key, body: { reason: text } }), 'reason', label);
      fieldRefused(await call(`/admin/orders/${order.id}/refund`, { admin: true, body: { amount: 0.5, reason: text } }), 'reason', label);
      fieldRefused(await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: text } }), 'reason', label);
      fieldRefused(await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { description: text } }), 'description', label);
    }
    const row = await env.DB.prepare('SELECT name, held_at, (SELECT count(*) FROM claims WHERE order_id = ?2) AS claims, (SELECT refunded_amount_cents FROM orders WHERE id = ?2) AS refunded FROM users WHERE id = ?1')
      .bind(user.id, order.id)
      .first();
    expect(row).toEqual({ name: 'Test User', held_at: null, claims: 0, refunded: 0 });
    // A visible name with ordinary spaces and accents is still taken.
    expect((await call('/user/profile', { key: user.key, method: 'PUT', body: { name: ' Zoë Ångström ' } })).json.data.name).toBe('Zoë Ångström');
  });

  it('a text made only of invisible characters is called blank', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: '\u200b\u200b' } });
    expect(res.json.errors.name).toContain('name may not be blank');
  });
});

describe('the dashboard and the console', () => {
  it('profile name, key name and a console product name refuse them', async () => {
    const user = await signedInUser();
    const operator = await newOperator();
    for (const text of ['\u200b', 'Ada\u2028Lovelace', 'Ada\ufeff']) {
      expect((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: text, email: user.email } })).status).toBe(422);
      const form = { name: text, sku: unique('SKU'), price: '1', idempotency_key: crypto.randomUUID() };
      expect((await visit('/dashboard/console/products', { cookie: operator.cookie, form })).status).toBe(422);
      expect(await env.DB.prepare('SELECT 1 FROM products WHERE sku = ?').bind(form.sku).first()).toBeNull();
    }
    expect((await env.DB.prepare('SELECT name FROM users WHERE id = ?').bind(user.id).first<{ name: string }>())!.name).not.toMatch(/[\u200b\u2028\ufeff]/);
  });
});
