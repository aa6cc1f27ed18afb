import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { visit } from '../dashboard-helpers';
import { call, expectError, newProduct, newUser, type TestUser } from '../helpers';

// Test mode, tighter (contract: "A revoked key buys nothing, a blocked buyer stays blocked"): the sandbox's email is
// the live one's and read-only, a user always gets a sandbox account, a user disabled live is refused in the sandbox
// from their next request, and only an operator's change that succeeded refreshes the sandbox's catalogue.

const sandbox = () => env.SANDBOX_DB!;

async function testKeyFor(user: TestUser) {
  const res = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test' } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key as string;
}

const sandboxEmail = async (id: number) => (await sandbox().prepare('SELECT email FROM users WHERE id = ?').bind(id).first<{ email: string }>())?.email;

describe("the sandbox's email is the live one's, read-only", () => {
  it('PUT /user/profile with a test key that changes the email: 422 errors.email, nothing changes; the same address and a name pass', async () => {
    const live = await newUser();
    const victim = await newUser();
    const testKey = await testKeyFor(live);
    const res = await call('/user/profile', { key: testKey, method: 'PUT', body: { email: victim.email } });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors).toEqual({ email: ['Change your email with a live key.'] });
    expect(await sandboxEmail(live.id)).toBe(live.email);
    const renamed = await call('/user/profile', { key: testKey, method: 'PUT', body: { name: 'Tester', email: live.email.toUpperCase() } });
    expect(renamed.status, renamed.text).toBe(200);
    // The victim's first test key is made.
    await testKeyFor(victim);
  });

  it('a user gets a sandbox account whatever another sandbox account holds (its address as it was before this rule)', async () => {
    const squatter = await newUser();
    await testKeyFor(squatter);
    const victim = await newUser();
    // What a test key could do before: the sandbox account took the victim's address.
    await sandbox().prepare('UPDATE users SET email = ? WHERE id = ?').bind(victim.email, squatter.id).run();
    const first = await call('/api-keys', { key: victim.key, body: { name: 'sandbox', mode: 'test' } });
    expect(first.status, first.text).toBe(201);
    expect(await sandboxEmail(victim.id)).toBe(victim.email);
    expect(await sandboxEmail(squatter.id)).not.toBe(victim.email);
    // The squatter's next test key takes its own live address back.
    await testKeyFor(squatter);
    expect(await sandboxEmail(squatter.id)).toBe(squatter.email);
    expect((await call('/wallet/balance', { key: first.json.data.key })).json.data.balance).toBe(1000);
  });
});

describe('a user disabled live is refused in the sandbox from their next request', () => {
  it('the admin API and the console: 401 at once, and back when enabled', async () => {
    const operator = await newOperator();
    for (const via of ['api', 'console'] as const) {
      const live = await newUser();
      const testKey = await testKeyFor(live);
      expect((await call('/wallet/balance', { key: testKey })).status).toBe(200);
      const disable = via === 'api'
        ? await call(`/admin/users/${live.id}`, { method: 'PATCH', admin: true, body: { disabled: true } })
        : await visit(`/dashboard/console/users/${live.id}/disable`, { cookie: operator.cookie, form: {} });
      expect([200, 303]).toContain(disable.status);
      expectError(await call('/wallet/balance', { key: testKey }), 401, 'UNAUTHORIZED');
      const enable = via === 'api'
        ? await call(`/admin/users/${live.id}`, { method: 'PATCH', admin: true, body: { disabled: false } })
        : await visit(`/dashboard/console/users/${live.id}/enable`, { cookie: operator.cookie, form: {} });
      expect([200, 303]).toContain(enable.status);
      expect((await call('/wallet/balance', { key: testKey })).status).toBe(200);
    }
  });
});

describe("the sandbox's catalogue is refreshed only after an operator's change that succeeded", () => {
  it('an anonymous post (303 to sign-in) and a refused one refresh nothing; a saved one does', async () => {
    const live = await newUser();
    const testKey = await testKeyFor(live);
    const product = await newProduct({ price: 5, stock: 1 });
    const sandboxPrice = async () => {
      const res = await call(`/stock/${product.id}`, { key: testKey });
      expect(res.status, res.text).toBe(200);
      return res.json.data.price;
    };
    expect(await sandboxPrice()).toBe(5);
    // A live change the mirror has not seen yet (no operator request made it).
    await env.DB.prepare('UPDATE products SET price_cents = 700 WHERE id = ?').bind(product.id).run();
    const form = { name: 'Renamed', sku: product.sku, price: '7', active: 'on' };
    const anonymous = await visit(`/dashboard/console/products/${product.id}`, { form });
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toContain('/dashboard/sign-in');
    expect(await sandboxPrice()).toBe(5);
    const operator = await newOperator();
    const refused = await visit(`/dashboard/console/products/${product.id}`, { cookie: operator.cookie, form: { ...form, price: 'abc' } });
    expect(refused.status).toBe(422);
    const buyer = await visit(`/dashboard/console/products/${product.id}`, { cookie: (await newOperatorLessUser()).cookie, form });
    expect(buyer.status).toBe(404);
    expect(await sandboxPrice()).toBe(5);
    const saved = await visit(`/dashboard/console/products/${product.id}`, { cookie: operator.cookie, form });
    expect(saved.status).toBe(303);
    expect(await sandboxPrice()).toBe(7);
  });
});

async function newOperatorLessUser() {
  const { signedInUser } = await import('../dashboard-helpers');
  return signedInUser();
}
