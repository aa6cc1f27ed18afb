import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { idempotencyKeyIn, newEmail, PASSWORD, signedInUser, visit } from '../dashboard-helpers';
import { call, expectError, newProduct, newUser, unique } from '../helpers';

// One validator for every text a person types (names, category, sku, key name, coupon code, notes, stock items):
// control characters (NUL, escape, CR, LF, tab, C1) and the bidirectional controls (U+202E displays a name reversed
// in the console and in spreadsheets) are a 422 on the field, through the API, the dashboard and the console alike.
// A description keeps its line feeds (CR LF stored as LF) and nothing else of those.

const REFUSED: Record<string, string> = {
  nul: 'Ada\u0000Lovelace',
  escape: 'Ada \u001b[31mLovelace',
  cr: 'Ada\rLovelace',
  lf: 'Ada\nLovelace',
  crlf: 'Ada\r\nLovelace',
  tab: 'Ada\tLovelace',
  del: 'Ada\u007fLovelace',
  c1: 'Ada\u0085Lovelace',
  rlo: 'Ada \u202eecalevoL',
  isolate: 'Ada \u2066Lovelace\u2069',
};
const ACCEPTED = ['Zoë Ångström', '李小龍', 'José 🚀 Núñez', 'Ольга-Мария', "O'Brien & Sons"];

const oneField = (res: { json: any }, field: string) => expect(Object.keys(res.json.errors ?? {})).toEqual([field]);
const stored = async (sql: string, value: string) => (await env.DB.prepare(sql).bind(value).first()) !== null;

describe('the API refuses control characters in every one-line text a person types', () => {
  for (const [name, text] of Object.entries(REFUSED)) {
    it(`(${name}) user, product, key, coupon and adjustment fields: 422 on the field, nothing stored`, async () => {
      const created = await call('/admin/users', { admin: true, body: { name: text, email: newEmail(), password: PASSWORD } });
      expectError(created, 422, 'VALIDATION_FAILED');
      oneField(created, 'name');
      const user = await newUser();
      const patched = await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { name: text } });
      expectError(patched, 422, 'VALIDATION_FAILED');
      oneField(patched, 'name');
      const profile = await call('/user/profile', { key: user.key, method: 'PUT', body: { name: text } });
      expectError(profile, 422, 'VALIDATION_FAILED');
      oneField(profile, 'name');
      const key = await call('/api-keys', { key: user.key, body: { name: text } });
      expectError(key, 422, 'VALIDATION_FAILED');
      oneField(key, 'name');
      for (const field of ['name', 'sku', 'category']) {
        const product = await call('/admin/products', { admin: true, body: { name: 'Fine', sku: unique('SKU'), price: 1, [field]: text } });
        expectError(product, 422, 'VALIDATION_FAILED');
        oneField(product, field);
      }
      const existing = await newProduct({ price: 1 });
      const renamed = await call(`/admin/products/${existing.id}`, { admin: true, method: 'PATCH', body: { name: text } });
      expectError(renamed, 422, 'VALIDATION_FAILED');
      oneField(renamed, 'name');
      const coupon = await call('/admin/coupons', { admin: true, body: { code: `OK${text}X`, percent_off: 5 } });
      expectError(coupon, 422, 'VALIDATION_FAILED');
      oneField(coupon, 'code');
      const adjustment = await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 1, description: text } });
      expectError(adjustment, 422, 'VALIDATION_FAILED');
      oneField(adjustment, 'description');
      expect(await stored('SELECT 1 FROM users WHERE name = ?', text)).toBe(false);
      expect(await stored('SELECT 1 FROM products WHERE name = ? OR category = ?1 OR sku = ?1', text)).toBe(false);
      expect(await stored('SELECT 1 FROM api_keys WHERE name = ?', text)).toBe(false);
    });
  }

  it('accepts names in any script, stored trimmed', async () => {
    for (const name of ACCEPTED) {
      const created = await call('/admin/users', { admin: true, body: { name: `  ${name} `, email: newEmail(), password: PASSWORD } });
      expect(created.status, created.text).toBe(201);
      expect(created.json.data.name).toBe(name);
      const key = await call('/api-keys', { key: created.json.data.api_key, body: { name } });
      expect(key.status, key.text).toBe(201);
      const product = await call('/admin/products', { admin: true, body: { name, sku: unique('SKU'), category: name, price: 1 } });
      expect(product.status, product.text).toBe(201);
      expect(product.json.data).toMatchObject({ name, category: name });
    }
  });
});

describe('a description', () => {
  it('keeps line feeds, stores CR LF as LF, and refuses every other control character', async () => {
    const product = await call('/admin/products', { admin: true, body: { name: 'Described', sku: unique('SKU'), price: 1, description: 'Line one\r\nLine two\n\nLine four' } });
    expect(product.status, product.text).toBe(201);
    expect(product.json.data.description).toBe('Line one\nLine two\n\nLine four');
    for (const [name, text] of Object.entries(REFUSED).filter(([name]) => !['lf', 'crlf'].includes(name))) {
      const res = await call(`/admin/products/${product.json.data.id}`, { admin: true, method: 'PATCH', body: { description: text } });
      expect(res.status, name).toBe(422);
      oneField(res, 'description');
    }
  });
});

describe('the dashboard and the console use the same rule', () => {
  it('sign-up, profile and key names refuse NUL, ESC, CR/LF and U+202E; a unicode name is taken', async () => {
    const user = await signedInUser();
    for (const text of [REFUSED.nul, REFUSED.escape, REFUSED.lf, REFUSED.crlf, REFUSED.rlo]) {
      const email = newEmail();
      const signUp = await visit('/dashboard/sign-up', { form: { name: text, email, password: PASSWORD, password_confirmation: PASSWORD } });
      expect(signUp.status).toBe(422);
      expect(signUp.text).toContain('name may not contain control characters');
      expect(await stored('SELECT 1 FROM users WHERE email = ?', email)).toBe(false);
      const profile = await visit('/dashboard/profile', { cookie: user.cookie, form: { name: text, email: user.email } });
      expect(profile.status).toBe(422);
      const page = await visit('/dashboard/keys', { cookie: user.cookie });
      const key = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: text, idempotency_key: idempotencyKeyIn(page.text) } });
      expect(key.status).toBe(422);
    }
    expect(await stored('SELECT 1 FROM api_keys WHERE user_id = ? GROUP BY user_id HAVING count(*) > 1', String(user.id))).toBe(false);
    const email = newEmail();
    const fine = await visit('/dashboard/sign-up', { form: { name: ACCEPTED[0], email, password: PASSWORD, password_confirmation: PASSWORD } });
    expect(fine.status).toBe(303);
    expect(await stored('SELECT 1 FROM users WHERE name = ?', ACCEPTED[0])).toBe(true);
  });

  it('the console refuses them in a product, a coupon code and a stock item', async () => {
    const operator = await newOperator();
    for (const text of [REFUSED.nul, REFUSED.escape, REFUSED.cr, REFUSED.rlo]) {
      for (const field of ['name', 'category']) {
        const form = { name: 'Console product', sku: unique('SKU'), price: '1', idempotency_key: crypto.randomUUID(), [field]: text };
        const res = await visit('/dashboard/console/products', { cookie: operator.cookie, form });
        expect(res.status, field).toBe(422);
        expect(await stored('SELECT 1 FROM products WHERE sku = ?', form.sku)).toBe(false);
      }
      const coupon = await visit('/dashboard/console/coupons', { cookie: operator.cookie, form: { code: `OK${text}X`, percent_off: '5', idempotency_key: crypto.randomUUID() } });
      expect(coupon.status).toBe(422);
    }
    const product = await newProduct({ price: 1 });
    for (const item of ['CODE-\u202e-1', 'CODE-\u2067-1']) {
      const api = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: [item] } });
      expectError(api, 422, 'VALIDATION_FAILED');
      oneField(api, 'items');
      const typed = await visit(`/dashboard/console/products/${product.id}/stock`, { cookie: operator.cookie, form: { items: item, idempotency_key: crypto.randomUUID() } });
      expect(typed.status).toBe(422);
    }
    expect((await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: ['login:password', 'Ключ-1'] } })).status).toBe(201);
  });
});
