import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WEBHOOK_URL } from '../../src/lib/webhook-url';
import { createCheckedApp, SELF } from '../contract';
import { ORIGIN, PASSWORD, signedInUser, visit } from '../dashboard-helpers';
import { ADMIN_TOKEN, balanceOf, BASE, call, expectError, deliverWebhook, newDeposit, newProduct, newUser, type TestUser } from '../helpers';
import { changedTables, snapshot } from '../snapshot';

// The probes of an adversarial review (issue 27), one rule each: per-user limits on password checks and email
// changes, webhook URLs with a DNS host only, amounts read as written, the local checkout under frame protection and
// the same-origin rule for every content type, `nosniff` on every answer, and no `api_key` in a redirect.

afterEach(() => vi.restoreAllMocks());

const passwordChange = (current: string) => ({ current_password: current, new_password: 'a brand new secret', new_password_confirmation: 'a brand new secret' });

/** A second API key of the same user: a per-key limit would give it a fresh budget. */
async function secondKey(user: TestUser): Promise<string> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'second' } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key;
}

describe('current-password checks: 5 a minute per user, the API and the dashboard together', () => {
  it('answers the 6th with 429 RATE_LIMITED and Retry-After, before any password hashing, and changes nothing', async () => {
    const user = await signedInUser();
    const other = await secondKey(user);
    const statuses: number[] = [];
    for (const key of [user.key, other, user.key]) statuses.push((await call('/user/password', { key, body: passwordChange('wrong guess') })).status);
    for (let i = 0; i < 2; i++) {
      const form = { current_password: 'wrong guess', new_password: 'pwned-password', new_password_confirmation: 'pwned-password' };
      statuses.push((await visit('/dashboard/password', { cookie: user.cookie, form })).status);
    }
    expect(statuses).toEqual([422, 422, 422, 422, 422]);

    const pbkdf2 = vi.spyOn(crypto.subtle, 'deriveBits');
    const before = await snapshot();
    // The right password, from the other key: still refused, so the limit is no oracle either.
    const limited = await call('/user/password', { key: other, body: passwordChange(PASSWORD) });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('Retry-After')).toBe('60');
    const page = await visit('/dashboard/password', { cookie: user.cookie, form: passwordChange(PASSWORD) });
    expect(page.status).toBe(429);
    expect(page.headers.get('Retry-After')).toBe('60');
    expect(pbkdf2).not.toHaveBeenCalled();
    expect(changedTables(before, await snapshot())).toEqual([]);

    // Another user has a budget of their own.
    const stranger = await newUser();
    expect((await call('/user/password', { key: stranger.key, body: passwordChange(PASSWORD) })).status).toBe(200);
  });
});

describe('email changes: 5 a minute per user, the API and the dashboard together', () => {
  it('answers the 6th change with 429 whether the address is taken or free; saving the same address is not counted', async () => {
    const user = await signedInUser();
    const other = await secondKey(user);
    const taken = (await newUser()).email;
    const free = (n: number) => `free-${n}-${user.email}`;
    const statuses: number[] = [];
    statuses.push((await call('/user/profile', { key: user.key, method: 'PUT', body: { email: taken } })).status);
    statuses.push((await call('/user/profile', { key: other, method: 'PUT', body: { email: free(1) } })).status);
    statuses.push((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Ada', email: free(2), current_password: PASSWORD } })).status);
    statuses.push((await call('/user/profile', { key: user.key, method: 'PUT', body: { email: taken } })).status);
    // The current address again (the dashboard form always sends it), in any letter case: no change, no count.
    for (let i = 0; i < 3; i++) statuses.push((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: `Ada ${i}`, email: free(2).toUpperCase(), current_password: '' } })).status);
    statuses.push((await call('/user/profile', { key: other, method: 'PUT', body: { email: free(3) } })).status);
    expect(statuses).toEqual([422, 200, 303, 422, 303, 303, 303, 200]);

    const before = await snapshot();
    for (const email of [taken, free(4)]) {
      const limited = await call('/user/profile', { key: user.key, method: 'PUT', body: { email } });
      expectError(limited, 429, 'RATE_LIMITED');
      expect(limited.headers.get('Retry-After')).toBe('60');
    }
    expect((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Ada', email: taken, current_password: PASSWORD } })).status).toBe(429);
    expect(changedTables(before, await snapshot())).toEqual([]);
    // A rename alone is no email change.
    expect((await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'Still Ada' } })).status).toBe(200);
  });
});

describe('webhook endpoint URLs: https:// with a DNS host name, one rule for the document and the code', () => {
  const refused = [
    'https://169.254.169.254/latest',
    'https://10.0.0.1/hook',
    'https://127.0.0.1/hook',
    'https://0x7f.1/hook',
    'https://2130706433/hook',
    'https://example.com.127.0.0.1/',
    'https://[::1]/hook',
    'https://[fd00::1]:8443/hook',
    'https://localhost/hook',
    'https://hooks.localhost/hook',
    'https://hooks.LocalHost/hook',
    'https://user:pass@example.com/hook',
    'https://user@example.com/hook',
    'https://example.com@169.254.169.254/',
    'https://example.com:99999/',
    ' https://example.com/hook',
    'https://exa mple.com/',
    'http://example.com/hook',
    'http://169.254.169.254/',
    'https://intranet/hook',
  ];
  const accepted = ['https://hooks.example.com/x?y=1', 'https://a.b.example.co.uk:8443/p/q#f', 'https://xn--bcher-kva.example/', 'https://192-168-1-1.example.com/', 'https://Hooks.Example.COM/x', 'http://localhost:8080/hook', 'http://127.0.0.1/'];

  it('refuses IP addresses in any form, localhost and user info with 422 errors.url, storing nothing', async () => {
    const user = await newUser();
    for (const url of refused) {
      const res = await call('/webhook-endpoints', { key: user.key, body: { url, events: ['*'] } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.url, url).toHaveLength(1);
    }
    expect((await call('/webhook-endpoints', { key: user.key })).json.data).toEqual([]);
    for (const url of accepted) {
      const res = await call('/webhook-endpoints', { key: user.key, body: { url, events: ['*'] } });
      expect(res.status, url).toBe(201);
      await call(`/webhook-endpoints/${res.json.data.id}`, { key: user.key, method: 'DELETE' });
    }
  });

  it('documents the very pattern the code checks', async () => {
    const doc = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as any;
    const body = doc.paths['/api/v2/webhook-endpoints'].post.requestBody.content['application/json'].schema;
    const { pattern } = (body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body).properties.url;
    expect(pattern).toBe(WEBHOOK_URL.source);
    const documented = new RegExp(pattern, 'u');
    for (const url of refused) expect(documented.test(url), url).toBe(false);
    for (const url of accepted) expect(documented.test(url), url).toBe(true);
  });
});

describe('amounts are read as written, never rounded', () => {
  const raw = (path: string, body: string, headers: Record<string, string> = {}) => call(path, { body, headers: { ...headers } });

  it('refuses 1.999999999999999999 and 10.005 wherever money comes in; 5.000 is five dollars', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 1 });
    const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
    const before = await snapshot();
    for (const amount of ['1.999999999999999999', '10.005', '2.0000000000000000001', '1e-3']) {
      const deposit = await raw('/wallet/deposit', `{"amount": ${amount}, "gateway": "gateway_one"}`, { 'X-API-Key': user.key });
      expectError(deposit, 422, 'VALIDATION_FAILED');
      expect(deposit.json.errors.amount, amount).toEqual(['amount must have at most 2 decimal places']);
      const adjustment = await raw(`/admin/users/${user.id}/balance-adjustments`, `{"amount": ${amount}, "description": "x"}`, admin);
      expect(adjustment.json.errors.amount, amount).toEqual(['amount must have at most 2 decimal places']);
      const created = await raw('/admin/products', `{"name": "p", "sku": "sku-${Math.random()}", "price": ${amount}}`, admin);
      expect(created.json.errors.price, amount).toEqual(['price must have at most 2 decimal places']);
      const patched = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: `{"price": ${amount}}` });
      expect(patched.json.errors.price, amount).toEqual(['price must have at most 2 decimal places']);
    }
    // An integer with more digits than a double holds is out of range, not rounded into it.
    expect((await raw('/wallet/deposit', '{"amount": 100000000000000000001, "gateway": "gateway_one"}', { 'X-API-Key': user.key })).json.errors.amount[0]).toMatch(/between/);
    // A float where an integer is required, however close to one.
    expect((await raw('/orders', `{"product_id": ${product.id}, "quantity": 1.0000000000000000001}`, { 'X-API-Key': user.key })).json.errors.quantity).toBeDefined();
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect(await balanceOf(user)).toBe(10);

    const exact = await raw('/wallet/deposit', '{"amount": 5.000, "gateway": "gateway_one"}', { 'X-API-Key': user.key });
    expect(exact.status, exact.text).toBe(200);
    expect(exact.json.data.amount).toBe(5);
  });

  it('the dashboard form and a gateway webhook read amounts as written too', async () => {
    const user = await signedInUser();
    const page = await visit('/dashboard/wallet', { cookie: user.cookie });
    // 17 significant digits: a plain Number() makes it 100.
    const form = await visit('/dashboard/wallet/deposit', { cookie: user.cookie, form: { amount: '99.999999999999999', gateway: 'gateway_one', crypto_currency: 'USDT' } });
    expect(form.status, page.status.toString()).toBe(422);
    expect(form.text).toContain('amount must have at most 2 decimal places');

    const deposit = await newDeposit(user, { amount: 2 });
    const body = `{"deposit_id": ${deposit.deposit_id}, "status": "paid", "amount": 1.999999999999999999, "transaction_id": "tx-${deposit.deposit_id}"}`;
    const webhook = await deliverWebhook('gateway_one', body);
    expect(webhook.status).toBe(422);
    expect(await balanceOf(user)).toBe(0);
  });
});

describe('the local checkout page', () => {
  it('cannot be framed', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 3 });
    const page = await createCheckedApp().request(`/pay/${deposit.deposit_id}`, {}, env);
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('X-Frame-Options')).toBe('DENY');
    // its own inline script still runs: the policy names it by a nonce
    const nonce = /script-src 'nonce-([^']+)'/.exec(page.headers.get('Content-Security-Policy') ?? '')?.[1];
    expect(await page.text()).toContain(`<script nonce="${nonce}">`);
  });

  it('refuses a cross-origin post of any content type (JSON included) with 403, paying nothing', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 4 });
    const app = createCheckedApp();
    for (const type of ['application/json', 'application/octet-stream', 'text/html']) {
      for (const outcome of ['pay', 'fail']) {
        const res = await app.request(`/pay/${deposit.deposit_id}/${outcome}`, { method: 'POST', headers: { 'Content-Type': type, Origin: 'https://evil.example' }, body: '{}' }, env);
        expect(res.status, `${type} ${outcome}`).toBe(403);
      }
    }
    expect(await env.DB.prepare('SELECT status FROM deposits WHERE id = ?').bind(deposit.deposit_id).first('status')).toBe('pending');
    expect(await balanceOf(user)).toBe(0);
  });
});

describe('nosniff on every answer', () => {
  it('carries X-Content-Type-Options: nosniff on API successes, errors, documents, pages and the checkout', async () => {
    const user = await newUser();
    const answers = [
      await SELF.fetch(`${ORIGIN}/`),
      await SELF.fetch(`${BASE}/stock`),
      await SELF.fetch(`${BASE}/openapi.json`),
      await SELF.fetch(`${BASE}/user/profile`, { headers: { 'X-API-Key': user.key } }),
      await SELF.fetch(`${BASE}/user/profile`),
      await SELF.fetch(`${BASE}/no-such-route`),
      await SELF.fetch(`${BASE}/wallet/deposit`, { method: 'POST', headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' }, body: '{' }),
      await SELF.fetch(`${ORIGIN}/pay/999999`),
      await SELF.fetch(`${ORIGIN}/dashboard/sign-in`),
    ];
    for (const res of answers) expect(res.headers.get('X-Content-Type-Options'), `${res.status} ${res.url}`).toBe('nosniff');
  });
});

describe('no api_key in a redirect', () => {
  it('drops a pasted api_key from the sign-in redirect and from where sign-in sends the browser next', async () => {
    const user = await newUser();
    const page = await visit(`/dashboard/orders?api_key=${user.key}&page=2`);
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent('/dashboard/orders?page=2')}`);
    const signedIn = await visit(`/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/orders?api_key=${user.key}&page=2`)}`, {
      form: { email: user.email, password: PASSWORD },
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/dashboard/orders?page=2');
  });
});
