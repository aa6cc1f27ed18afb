import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import { balanceOf, BASE, call, expectError, newProduct, newUser, unique, type TestUser } from '../helpers';
import { newEmail, signedInUser, visit } from '../dashboard-helpers';

// A blocked buyer stays blocked (contract: "A revoked key buys nothing, a blocked buyer stays blocked"): an email
// change cannot lift a block, and the rules match what they mean: +tags and letter case, sub-domains, Tor, an
// unreadable client address while ip rules exist; no rule may close the shop, no rule value hides characters.

const rules: number[] = [];
afterEach(async () => {
  // An ip rule left behind would refuse every later request of this file that sends no address.
  while (rules.length) await call(`/admin/blocklist/${rules.pop()}`, { method: 'DELETE', admin: true });
});

async function addRule(type: string, value: string) {
  const res = await call('/admin/blocklist', { admin: true, body: { type, value } });
  expect(res.status, res.text).toBe(201);
  rules.push(res.json.data.id);
  return res.json.data as { id: number; value: string };
}

/** A user with an address of our choosing (the admin API makes it), $5 in the wallet. */
async function userWithEmail(email: string): Promise<TestUser> {
  const created = await call('/admin/users', { admin: true, body: { name: 'Buyer', email, password: 'correct horse battery' } });
  expect(created.status, created.text).toBe(201);
  const user = { id: created.json.data.id, key: created.json.data.api_key, email };
  await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 5, description: 'seed' } });
  return user;
}

/** A request from an address and a Cloudflare country (request.cf), as the edge would send it. */
async function from(path: string, { key, body, ip, country, method = 'POST' }: { key: string; body: unknown; ip?: string; country?: string; method?: string }) {
  const headers: Record<string, string> = { 'X-API-Key': key, 'Content-Type': 'application/json' };
  if (ip !== undefined) headers['CF-Connecting-IP'] = ip;
  const request = new Request(`${BASE}${path}`, { method, headers, body: JSON.stringify(body), cf: country ? { country } : {} } as RequestInit);
  const res = await SELF.fetch(request);
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const purchase = async (user: TestUser, place: { ip?: string; country?: string } = { ip: '192.0.2.10' }) => {
  const product = await newProduct({ price: 1, stock: 1 });
  return from('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 }, ...place });
};
const emailOf = async (id: number) => (await env.DB.prepare('SELECT email, name FROM users WHERE id = ?').bind(id).first<{ email: string; name: string }>())!;

describe('an email change cannot lift a block', () => {
  it('PUT /user/profile away from a blocked address, or to one: 403 BLOCKED, nothing changes (name included)', async () => {
    const blockedUser = await newUser({ balance: 5 });
    await addRule('email', blockedUser.email);
    expectError(await purchase(blockedUser), 403, 'BLOCKED');
    const away = await from('/user/profile', { key: blockedUser.key, method: 'PUT', body: { name: 'Someone Else', email: newEmail() }, ip: '192.0.2.10' });
    expectError(away, 403, 'BLOCKED');
    expect(await emailOf(blockedUser.id)).toEqual({ email: blockedUser.email, name: 'Test User' });
    expectError(await purchase(blockedUser), 403, 'BLOCKED');
    // Renaming alone, the same address sent back (as the dashboard's form does), is not an email change.
    const renamed = await from('/user/profile', { key: blockedUser.key, method: 'PUT', body: { name: 'Renamed', email: blockedUser.email.toUpperCase() }, ip: '192.0.2.10' });
    expect(renamed.status).toBe(200);

    const domain = `${unique('to').toLowerCase()}.example`;
    await addRule('email_domain', domain);
    const user = await newUser({ balance: 5 });
    expectError(await from('/user/profile', { key: user.key, method: 'PUT', body: { email: `me@${domain}` }, ip: '192.0.2.10' }), 403, 'BLOCKED');
    expect((await emailOf(user.id)).email).toBe(user.email);
    expect((await purchase(user)).status).toBe(201);
  });

  it("the dashboard's profile form: 403 with the neutral sentence, the address stays", async () => {
    const user = await signedInUser({ balance: 5 });
    await addRule('email', user.email);
    const res = await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Test User', email: newEmail(), current_password: 'correct horse battery' } });
    expect(res.status).toBe(403);
    expect(res.text).toContain('This cannot be done from this account or place.');
    expect((await emailOf(user.id)).email).toBe(user.email);
  });
});

describe('matching', () => {
  it('an email rule ignores letter case and a +tag, on the rule and on the account', async () => {
    const local = unique('tag').toLowerCase();
    const rule = await addRule('email', `${local.toUpperCase()}+anything@Example.COM`);
    expect(rule.value).toBe(`${local}@example.com`);
    for (const email of [`${local}+shop@example.com`, `${local.toUpperCase()}@EXAMPLE.com`]) {
      const user = await userWithEmail(email);
      expectError(await purchase(user), 403, 'BLOCKED');
    }
    expect((await purchase(await userWithEmail(`${local}x@example.com`))).status).toBe(201);
  });

  it('*.example.com matches every sub-domain and the domain itself, nothing else', async () => {
    const domain = `${unique('wild').toLowerCase()}.example`;
    await addRule('email_domain', `*.${domain}`);
    for (const email of [`a@${domain}`, `b@mail.${domain}`, `c@x.y.${domain.toUpperCase()}`]) {
      expectError(await purchase(await userWithEmail(email)), 403, 'BLOCKED');
    }
    for (const email of [`d@not${domain}`, `e@${domain}.org`]) expect((await purchase(await userWithEmail(email))).status, email).toBe(201);
  });

  it('country takes T1 (Tor) and XX, and matches them', async () => {
    await addRule('country', 'T1');
    await addRule('country', 'xx');
    const user = await newUser({ balance: 5 });
    expectError(await purchase(user, { ip: '192.0.2.10', country: 'T1' }), 403, 'BLOCKED');
    expectError(await purchase(user, { ip: '192.0.2.10', country: 'XX' }), 403, 'BLOCKED');
    expect((await purchase(user, { ip: '192.0.2.10', country: 'BE' })).status).toBe(201);
  });

  it('while an ip rule exists, an unreadable client address is refused (purchase, deposit, sign-up, email change); with none, it is not', async () => {
    const user = await newUser({ balance: 5 });
    const unreadable = ['198.051.100.007', '[2001:db8::1]', 'fe80::1%eth0', '192.0.2.1, 192.0.2.2', '3221225985', ''];
    expect((await purchase(user, { ip: unreadable[0] })).status).toBe(201);
    await addRule('ip', '203.0.113.0/24');
    for (const ip of unreadable) expectError(await purchase(user, { ip }), 403, 'BLOCKED');
    expectError(await from('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' }, ip: unreadable[0] }), 403, 'BLOCKED');
    expectError(await from('/user/profile', { key: user.key, method: 'PUT', body: { email: newEmail() }, ip: unreadable[1] }), 403, 'BLOCKED');
    expect((await emailOf(user.id)).email).toBe(user.email);
    const email = newEmail();
    const signUp = await visit('/dashboard/sign-up', {
      ip: unreadable[0],
      vars: { DASHBOARD_SIGNUP: 'open' },
      form: { name: 'New', email, password: 'correct horse battery', password_confirmation: 'correct horse battery' },
    });
    expect(signUp.status).toBe(403);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM users WHERE email = ?').bind(email).first('n')).toBe(0);
    // A readable address outside the rule goes through.
    expect((await purchase(user, { ip: '2001:db8::1' })).status).toBe(201);
    expect(await balanceOf(user)).toBe(3);
  });
});

describe('rule values', () => {
  it('an ip rule wider than /8 (IPv4) or /16 (IPv6) is 422 errors.value; /8 and /16 are fine', async () => {
    for (const value of ['0.0.0.0/0', '10.0.0.0/7', '::/0', '2001::/15', '::ffff:0.0.0.0/96', '::ffff:10.0.0.0/103']) {
      const res = await call('/admin/blocklist', { admin: true, body: { type: 'ip', value } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.value, value).toBeDefined();
    }
    await addRule('ip', '10.0.0.0/8');
    await addRule('ip', '2001:db8::/16');
  });

  it('an email rule is checked as an account email: no NUL, bidi, invisible or control character', async () => {
    for (const value of ['a\u0000b@example.com', 'a\u202eb@example.com', 'a\u200bb@example.com', 'ab@example.com\u2028', 'a b@example.com']) {
      const res = await call('/admin/blocklist', { admin: true, body: { type: 'email', value } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors.value, JSON.stringify(value)).toBeDefined();
    }
  });
});
