import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { idempotencyKeyIn, signedInUser, visit } from '../dashboard-helpers';
import { balanceOf, buy, call, expectError, newProduct, newUser, type CallOptions, type TestUser } from '../helpers';

// API keys narrowed to a job: scopes, a daily spend limit, allowed client addresses and an expiry.

/** A second key of `user`, made by the user's full key with these limits. */
async function narrowKey(user: TestUser, limits: Record<string, unknown>): Promise<string> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'narrow', ...limits } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key;
}

const from = (ip: string): CallOptions['headers'] => ({ 'CF-Connecting-IP': ip });

async function ordersOf(user: TestUser): Promise<number> {
  const row = await env.DB.prepare('SELECT count(*) AS n FROM orders WHERE user_id = ?').bind(user.id).first<{ n: number }>();
  return row!.n;
}

type Request = (key: string, productId: number) => [string, CallOptions];

/** For each scope, a route it allows (with the status it answers) and one it does not (a route of another scope). */
const SCOPE_CASES: Array<{ scope: string; allowed: Request; status: number; refused: Request; needs: string }> = [
  { scope: 'read', allowed: (key) => ['/wallet/balance', { key }], status: 200, refused: (key, p) => ['/orders', { key, body: { product_id: p, quantity: 1 } }], needs: 'orders' },
  { scope: 'orders', allowed: (key, p) => ['/orders', { key, body: { product_id: p, quantity: 1 } }], status: 201, refused: (key) => ['/orders', { key }], needs: 'read' },
  { scope: 'deposits', allowed: (key) => ['/wallet/deposit', { key, body: { amount: 10, gateway: 'gateway_one' } }], status: 200, refused: (key) => ['/user/profile', { key, method: 'PUT', body: { name: 'X' } }], needs: 'account' },
  { scope: 'account', allowed: (key) => ['/user/profile', { key, method: 'PUT', body: { name: 'Renamed' } }], status: 200, refused: (key) => ['/wallet/deposit', { key, body: { amount: 10, gateway: 'gateway_one' } }], needs: 'deposits' },
  { scope: 'keys', allowed: (key) => ['/api-keys', { key, body: { name: 'child' } }], status: 201, refused: (key) => ['/webhook-endpoints', { key, body: { url: 'https://example.com/hook', events: ['*'] } }], needs: 'webhooks' },
  { scope: 'webhooks', allowed: (key) => ['/webhook-endpoints', { key, body: { url: 'https://example.com/hook', events: ['*'] } }], status: 201, refused: (key) => ['/api-keys', { key, body: { name: 'child' } }], needs: 'keys' },
];

describe('scopes', () => {
  for (const c of SCOPE_CASES) {
    it(`a "${c.scope}" key may ${c.allowed('k', 1)[0]} and gets 403 INSUFFICIENT_SCOPE (${c.needs}) elsewhere, changing nothing`, async () => {
      const user = await newUser({ balance: 20 });
      const product = await newProduct({ price: 1, stock: 5 });
      const key = await narrowKey(user, { scopes: [c.scope] });
      const before = { balance: await balanceOf(user), orders: await ordersOf(user) };

      const refused = await call(...c.refused(key, product.id));
      expectError(refused, 403, 'INSUFFICIENT_SCOPE');
      expect(refused.json.errors).toEqual({ scope: [c.needs] });
      expect({ balance: await balanceOf(user), orders: await ordersOf(user) }).toEqual(before);

      const allowed = await call(...c.allowed(key, product.id));
      expect(allowed.status, allowed.text).toBe(c.status);
    });
  }

  it('a key made without scopes has all six; the list shows them', async () => {
    const user = await newUser();
    await narrowKey(user, {});
    const list = await call('/api-keys', { key: user.key });
    for (const key of list.json.data) expect(key.scopes).toEqual(['read', 'orders', 'deposits', 'account', 'keys', 'webhooks']);
  });

  it('bad scopes are a 422', async () => {
    const user = await newUser();
    for (const scopes of [[], ['admin'], ['read', 'read'], 'read']) {
      const res = await call('/api-keys', { key: user.key, body: { name: 'x', scopes } });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(Object.keys(res.json.errors)[0]).toMatch(/^scopes/);
    }
  });
});

describe('daily spend limit', () => {
  it('10 parallel purchases cannot pass it together; the refusal says limit, spent_today and total', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 1.25, stock: 20 });
    const key = await narrowKey(user, { scopes: ['orders', 'read'], spend_limit_per_day: 5 });
    const results = await Promise.all(Array.from({ length: 10 }, () => call('/orders', { key, body: { product_id: product.id, quantity: 1 } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(4);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expectError(refused, 403, 'SPEND_LIMIT_REACHED');
      expect(refused.json.errors).toMatchObject({ limit: 5, spent_today: 5, total: 1.25 });
    }
    expect(await balanceOf(user)).toBe(95);
    const keys = (await call('/api-keys', { key })).json.data as Array<{ spent_today: number; spend_limit_per_day: number | null }>;
    // The user's first key made this one: its spent_today counts its family's purchases.
    expect(keys.map((k) => [k.spend_limit_per_day, k.spent_today]).sort()).toEqual([[5, 5], [null, 5]].sort());
  });

  it('a cancelled purchase still counts; other keys and the dashboard are not limited by it', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 3, stock: 10 });
    const key = await narrowKey(user, { scopes: ['orders'], spend_limit_per_day: 4 });
    const first = await call('/orders', { key, body: { product_id: product.id, quantity: 1 } });
    expect(first.status).toBe(201);
    expect((await call(`/orders/${first.json.data.id}/cancel`, { key, method: 'POST' })).status).toBe(200);
    const again = await call('/orders', { key, body: { product_id: product.id, quantity: 1 } });
    expectError(again, 403, 'SPEND_LIMIT_REACHED');
    expect(again.json.errors).toMatchObject({ limit: 4, spent_today: 3, total: 3 });
    expect((await buy(user, product.id, 2)).status).toBe(201);
  });

  it('a pack within the limit passes exactly at it; the order records its key', async () => {
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 2.5, stock: 10 });
    const key = await narrowKey(user, { spend_limit_per_day: 5 });
    const res = await call('/orders', { key, body: { product_id: product.id, quantity: 2 } });
    expect(res.status, res.text).toBe(201);
    const row = await env.DB.prepare('SELECT k.name FROM orders o JOIN api_keys k ON k.id = o.api_key_id WHERE o.id = ?').bind(res.json.data.id).first();
    expect(row).toEqual({ name: 'narrow' });
  });

  it('spend_limit_per_day must be a positive amount with at most 2 decimals', async () => {
    const user = await newUser();
    for (const spend_limit_per_day of [0, -1, 1.234, '5']) {
      expectError(await call('/api-keys', { key: user.key, body: { name: 'x', spend_limit_per_day } }), 422, 'VALIDATION_FAILED');
    }
  });
});

describe('allowed IPs', () => {
  const ALLOWED = ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7', '::ffff:192.0.2.1'];

  const cases: Array<[string, number]> = [
    ['203.0.113.9', 200],
    ['203.0.113.255', 200],
    ['203.0.114.0', 403],
    ['::ffff:203.0.113.9', 200], // IPv4-mapped IPv6 form of an address in the v4 range
    ['2001:db8:1::5', 200],
    ['2001:0db8:ffff:ffff:ffff:ffff:ffff:ffff', 200],
    ['2001:db9::', 403],
    ['198.51.100.7', 200],
    ['198.51.100.8', 403],
    ['192.0.2.1', 200], // the plain v4 form of an allowed IPv4-mapped address
    ['not an address', 403],
  ];
  for (const [ip, status] of cases) {
    it(`from ${ip}: ${status}`, async () => {
      const user = await newUser();
      const key = await narrowKey(user, { allowed_ips: ALLOWED });
      const res = await call('/wallet/balance', { key, headers: from(ip) });
      if (status === 200) expect(res.status, res.text).toBe(200);
      else expectError(res, 403, 'IP_NOT_ALLOWED');
    });
  }

  it('no client address at all is refused; a write from elsewhere changes nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const key = await narrowKey(user, { allowed_ips: ['10.0.0.0/8'] });
    expectError(await call('/wallet/balance', { key }), 403, 'IP_NOT_ALLOWED');
    expectError(await call('/orders', { key, headers: from('11.0.0.1'), body: { product_id: product.id, quantity: 1 } }), 403, 'IP_NOT_ALLOWED');
    expect(await ordersOf(user)).toBe(0);
    expect((await call('/orders', { key, headers: from('10.1.2.3'), body: { product_id: product.id, quantity: 1 } })).status).toBe(201);
  });

  it('the list shows the addresses as given; bad ones are a 422', async () => {
    const user = await newUser();
    await narrowKey(user, { allowed_ips: ALLOWED });
    const list = await call('/api-keys', { key: user.key });
    expect(list.json.data.find((k: any) => k.name === 'narrow').allowed_ips).toEqual(ALLOWED);
    const bad = ['1.2.3.4/33', '2001:db8::/129', '1.2.3', '1::2::3', 'fe80::1%eth0', '01.2.3.4', ''];
    for (const ip of bad) {
      const res = await call('/api-keys', { key: user.key, body: { name: 'x', allowed_ips: [ip] } });
      expectError(res, 422, 'VALIDATION_FAILED');
    }
    expectError(await call('/api-keys', { key: user.key, body: { name: 'x', allowed_ips: [] } }), 422, 'VALIDATION_FAILED');
    const tooMany = Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`);
    expectError(await call('/api-keys', { key: user.key, body: { name: 'x', allowed_ips: tooMany } }), 422, 'VALIDATION_FAILED');
  });
});

describe('expiry', () => {
  it('an expired key answers 401 as a revoked one; it stays listed until revoked', async () => {
    const user = await newUser();
    const key = await narrowKey(user, { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call('/wallet/balance', { key })).status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE name = 'narrow' AND user_id = ?").bind(new Date(Date.now() - 1000).toISOString(), user.id).run();
    expectError(await call('/wallet/balance', { key }), 401, 'UNAUTHORIZED');
    expect((await call('/api-keys', { key: user.key })).json.data).toHaveLength(2);
  });

  it('expires_at must be a future date-time; an offset is normalized to UTC', async () => {
    const user = await newUser();
    for (const expires_at of [new Date(Date.now() - 60_000).toISOString(), 'tomorrow', 123]) {
      expectError(await call('/api-keys', { key: user.key, body: { name: 'x', expires_at } }), 422, 'VALIDATION_FAILED');
    }
    const res = await call('/api-keys', { key: user.key, body: { name: 'x', expires_at: '2099-01-01T02:00:00+02:00' } });
    expect(res.json.data.expires_at).toBe('2099-01-01T00:00:00.000Z');
  });
});

describe('a key never makes a wider key', () => {
  const maker = { scopes: ['read', 'keys', 'orders'], spend_limit_per_day: 10, allowed_ips: ['203.0.113.0/24'], expires_at: '2098-01-01T00:00:00.000Z' };
  const here = from('203.0.113.5');

  const wider: Array<[string, Record<string, unknown>, string]> = [
    ['a scope it lacks', { scopes: ['read', 'deposits'] }, 'scope'],
    ['a higher limit', { spend_limit_per_day: 10.01 }, 'spend_limit_per_day'],
    ['no limit', { spend_limit_per_day: null }, 'spend_limit_per_day'],
    ['a wider range', { allowed_ips: ['203.0.0.0/16'] }, 'allowed_ips'],
    ['anywhere', { allowed_ips: null }, 'allowed_ips'],
    ['a later expiry', { expires_at: '2099-01-01T00:00:00Z' }, 'expires_at'],
    ['never expiring', { expires_at: null }, 'expires_at'],
  ];
  for (const [what, limits, field] of wider) {
    it(`${what} → 403 INSUFFICIENT_SCOPE, nothing created`, async () => {
      const user = await newUser();
      const key = await narrowKey(user, maker);
      const res = await call('/api-keys', { key, headers: here, body: { name: 'wider', ...limits } });
      expectError(res, 403, 'INSUFFICIENT_SCOPE');
      expect(Object.keys(res.json.errors)).toEqual([field]);
      if (field === 'scope') expect(res.json.errors.scope).toEqual(['deposits']);
      expect((await call('/api-keys', { key: user.key })).json.data).toHaveLength(2);
    });
  }

  it('what it leaves out is inherited; anything as narrow or narrower is allowed', async () => {
    const user = await newUser();
    const key = await narrowKey(user, maker);
    const inherited = await call('/api-keys', { key, headers: here, body: { name: 'inherits' } });
    expect(inherited.status, inherited.text).toBe(201);
    expect(inherited.json.data).toMatchObject({ ...maker, scopes: ['read', 'orders', 'keys'] });
    const narrower = await call('/api-keys', {
      key,
      headers: here,
      body: { name: 'narrower', scopes: ['read'], spend_limit_per_day: 2, allowed_ips: ['203.0.113.5', '::ffff:203.0.113.128/121'], expires_at: '2097-01-01T00:00:00Z' },
    });
    expect(narrower.status, narrower.text).toBe(201);
  });

  it('the key limit still answers API_KEY_LIMIT_REACHED when nothing is wider', async () => {
    const user = await newUser();
    const key = await narrowKey(user, maker);
    for (let i = 0; i < 3; i++) expect((await call('/api-keys', { key, headers: here, body: { name: `k${i}` } })).status).toBe(201);
    expectError(await call('/api-keys', { key, headers: here, body: { name: 'sixth' } }), 400, 'API_KEY_LIMIT_REACHED');
  });
});

describe('the OpenAPI document says what each route needs', () => {
  const WRITES: Record<string, string> = {
    'post /api/v2/orders': 'orders',
    'post /api/v2/orders/{id}/cancel': 'orders',
    'post /api/v2/orders/{id}/items/{index}/report': 'orders',
    'post /api/v2/wallet/deposit': 'deposits',
    'post /api/v2/user/referral/transfer': 'deposits',
    'put /api/v2/user/profile': 'account',
    // Billing details are the account's (the contract: scope account for both), read included.
    'get /api/v2/user/billing': 'account',
    'put /api/v2/user/billing': 'account',
    'post /api/v2/user/password': 'account',
    'post /api/v2/api-keys': 'keys',
    'delete /api/v2/api-keys/{id}': 'keys',
    'post /api/v2/webhook-endpoints': 'webhooks',
    'delete /api/v2/webhook-endpoints/{id}': 'webhooks',
    'post /api/v2/test/deposits/{id}/pay': 'deposits',
    'post /api/v2/test/deposits/{id}/fail': 'deposits',
    'post /api/v2/test/deposits/{id}/expire': 'deposits',
    'post /api/v2/test/reset': 'account',
    'post /api/v2/test/claims/{id}/replace': 'orders',
    'post /api/v2/test/claims/{id}/refund': 'orders',
    'post /api/v2/test/claims/{id}/reject': 'orders',
    'post /api/v2/test/orders/{id}/refund': 'orders',
  };

  it('every key route: x-required-scope, the same scope in its security requirement, and a 403; every GET needs read', async () => {
    const doc = (await call('/openapi.json')).json;
    const seen: string[] = [];
    for (const [path, operations] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        if (!op.security?.some((s: object) => 'ApiKeyHeader' in s)) continue;
        const expected = WRITES[`${method} ${path}`] ?? (method === 'get' ? 'read' : undefined);
        expect(op['x-required-scope'], `${method} ${path}`).toBe(expected);
        expect(op.security).toEqual([{ ApiKeyHeader: [expected] }, { ApiKeyQuery: [expected] }]);
        expect(op.responses['403'], `${method} ${path}`).toBeDefined();
        seen.push(`${method} ${path}`);
      }
    }
    expect(seen).toEqual(expect.arrayContaining(Object.keys(WRITES)));
    const create = doc.paths['/api/v2/api-keys'].post.requestBody.content['application/json'].schema;
    const body = create.$ref ? doc.components.schemas[create.$ref.split('/').pop()] : create;
    expect(Object.keys(body.properties).sort()).toEqual(['allowed_ips', 'expires_at', 'mode', 'name', 'scopes', 'spend_limit_per_day']);
    expect(JSON.stringify(body.properties.allowed_ips)).toContain('CIDR');
    for (const code of ['INSUFFICIENT_SCOPE', 'SPEND_LIMIT_REACHED', 'IP_NOT_ALLOWED']) expect(doc.info.description).toContain(code);
  });
});

describe("the dashboard's key form", () => {
  it('sets scopes, daily limit, allowed IPs and expiry; the list shows them; the key is as narrow as asked', async () => {
    const user = await signedInUser({ balance: 10 });
    const page = await visit('/dashboard/keys', { cookie: user.cookie });
    for (const label of ['Read', 'Orders', 'Deposits', 'Account', 'Keys', 'Webhooks']) expect(page.text).toMatch(new RegExp(`type="checkbox" checked=""[^>]*/>\\s*<label[^>]*>${label}<`));
    expect(page.text).toContain('Daily spend limit');
    expect(page.text).toContain('Allowed IPs');
    expect(page.text).toContain('Expires');
    const form = {
      name: 'storefront',
      idempotency_key: idempotencyKeyIn(page.text),
      scope_choices: 'shown',
      scope_read: 'on',
      spend_limit_per_day: '2.5',
      allowed_ips: '10.0.0.0/8\r\n\r\n2001:db8::/32\r\n',
      expires_at: '2099-01-01',
    };
    const created = await visit('/dashboard/keys', { cookie: user.cookie, form });
    expect(created.status, created.text).toBe(200);
    expect(created.text).toContain('Read; $0.00 of $2.50 today; from 10.0.0.0/8, 2001:db8::/32; expires 2099-01-01');
    const key = /sk_live_[0-9A-Za-z]{40}/.exec(created.text)![0];
    const listed = (await call('/api-keys', { key: user.key })).json.data.find((k: any) => k.name === 'storefront');
    expect(listed).toMatchObject({ scopes: ['read'], spend_limit_per_day: 2.5, allowed_ips: ['10.0.0.0/8', '2001:db8::/32'], expires_at: '2099-01-01T00:00:00.000Z' });
    expect((await call('/wallet/balance', { key, headers: from('10.9.9.9') })).status).toBe(200);
    expectError(await call('/wallet/balance', { key, headers: from('11.0.0.1') }), 403, 'IP_NOT_ALLOWED');
  });

  it('no scope ticked, or a bad address, is refused on the page; a form without the checkboxes gets every scope', async () => {
    const user = await signedInUser();
    const page = await visit('/dashboard/keys', { cookie: user.cookie });
    const none = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'x', idempotency_key: idempotencyKeyIn(page.text), scope_choices: 'shown' } });
    expect(none.status).toBe(422);
    expect(none.text).toContain('scopes must name at least one scope');
    const badIp = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'x', idempotency_key: idempotencyKeyIn(page.text), allowed_ips: '10.0.0.1\nnowhere' } });
    expect(badIp.status).toBe(422);
    // Re-shown as sent, to be corrected rather than typed again.
    expect(badIp.text).toMatch(/<textarea[^>]*name="allowed_ips"[^>]*>10\.0\.0\.1\nnowhere<\/textarea>/);
    const plain = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'plain', idempotency_key: idempotencyKeyIn(page.text) } });
    expect(plain.status).toBe(200);
    expect(plain.text).toContain('All scopes');
  });
});

describe('refusals before the batch keep their answer for a narrowed key', () => {
  it('an unknown route is a 404 and invalid fields a 422, whatever the key may do; a bad key is still a 401', async () => {
    const user = await newUser();
    const key = await narrowKey(user, { scopes: ['read'], allowed_ips: ['10.0.0.0/8'] });
    expectError(await call('/orders/1/nothing-here', { key, headers: from('10.0.0.1') }), 404, 'NOT_FOUND');
    expectError(await call('/orders/1/nothing-here', { key, headers: from('11.0.0.1') }), 404, 'NOT_FOUND');
    expectError(await call('/orders/not-a-number', { key, headers: from('10.0.0.1') }), 422, 'VALIDATION_FAILED');
    expectError(await call('/orders/1/nothing-here', { key: `sk_live_${'x'.repeat(40)}` }), 401, 'UNAUTHORIZED');
  });
});
