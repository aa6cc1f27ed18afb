import { SELF } from '../contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, BASE, call, expectError, newUser, type TestUser } from '../helpers';

const PROTECTED: Array<[method: string, path: string]> = [
  ['GET', '/api-keys'],
  ['POST', '/api-keys'],
  ['DELETE', '/api-keys/1'],
  ['GET', '/user/profile'],
  ['PUT', '/user/profile'],
  ['POST', '/user/password'],
  ['GET', '/user/dashboard'],
  ['GET', '/orders'],
  ['POST', '/orders'],
  ['GET', '/orders/1'],
  ['POST', '/orders/1/cancel'],
  ['GET', '/orders/1/export'],
  ['GET', '/wallet/balance'],
  ['GET', '/wallet/transactions'],
  ['POST', '/wallet/deposit'],
  ['GET', '/wallet/deposits'],
  ['GET', '/wallet/deposits/1/status'],
];

const ADMIN_ROUTES: Array<[method: string, path: string]> = [
  ['POST', '/admin/users'],
  ['POST', '/admin/users/1/balance-adjustments'],
  ['POST', '/admin/products'],
  ['PATCH', '/admin/products/1'],
  ['POST', '/admin/products/1/stock'],
  ['POST', '/admin/deposits/1/mark-paid'],
];

const REQUEST_ID_SHAPE = /^[A-Za-z0-9._:-]{1,128}$/;
const LEAK = /stack|\bat\s+\S+\s+\(|\.ts:\d+|node_modules|SQLITE|D1_|\bSELECT\b|\bINSERT\b|\bUPDATE\b|\bFROM\b|Failed query/i;

/** A protected route called with the given headers; POST/PUT/PATCH send a plausible JSON body so only auth can fail. */
function hit(method: string, path: string, headers: Record<string, string> = {}) {
  const hasBody = method !== 'GET' && method !== 'DELETE';
  return call(path, { method, headers, body: hasBody ? { name: 'x', product_id: 1, quantity: 1, amount: 10, gateway: 'gateway_three' } : undefined });
}

function expectUnauthorized(res: Awaited<ReturnType<typeof call>>, label: string) {
  expect(res.status, `${label}: ${res.text}`).toBe(401);
  expect(res.json, label).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
  expect(typeof res.json.error, label).toBe('string');
  expect(res.json.data, label).toBeUndefined();
  expect(res.headers.get('X-Request-Id'), label).toMatch(REQUEST_ID_SHAPE);
  expect(res.headers.get('Cache-Control'), label).toBe('no-store');
}

const wellFormedUnknownKey = () => {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return 'sk_live_' + Array.from(crypto.getRandomValues(new Uint8Array(40)), (b) => alphabet[b % 62]).join('');
};

describe('protected routes refuse requests without valid credentials', () => {
  let user: TestUser;
  let revokedKey: string;

  beforeAll(async () => {
    user = await newUser({ balance: 5 });
    const created = await call('/api-keys', { key: user.key, body: { name: 'to be revoked' } });
    expect(created.status, created.text).toBe(201);
    revokedKey = created.json.data.key;
    expect((await call('/user/profile', { key: revokedKey })).status).toBe(200);
    const del = await call(`/api-keys/${created.json.data.id}`, { key: user.key, method: 'DELETE' });
    expect(del.status, del.text).toBe(200);
  });

  const variants: Array<[label: string, headers: () => Record<string, string>, query?: () => string]> = [
    ['no key', () => ({})],
    ['a malformed key', () => ({ 'X-API-Key': 'not-a-key' })],
    ['a truncated key', () => ({ 'X-API-Key': user.key.slice(0, -1) })],
    ['a well-formed unknown key', () => ({ 'X-API-Key': wellFormedUnknownKey() })],
    ['a revoked key', () => ({ 'X-API-Key': revokedKey })],
    ['a revoked key in the query', () => ({}), () => `api_key=${revokedKey}`],
    ['an unknown key in the query', () => ({}), () => `api_key=${wellFormedUnknownKey()}`],
  ];

  it.each(variants)('every protected route answers 401 UNAUTHORIZED with %s', async (label, headers, query) => {
    for (const [method, path] of PROTECTED) {
      const url = query ? `${path}?${query()}` : path;
      expectUnauthorized(await hit(method, url, headers()), `${label}: ${method} ${path}`);
    }
  });

  it('the same routes let a valid key through (not 401)', async () => {
    // ids nobody owns, so the sanity pass cannot revoke the key it is using
    for (const [method, path] of PROTECTED) {
      const res = await hit(method, path.replace('/1', '/999999999'), { 'X-API-Key': user.key });
      expect(res.status, `${method} ${path}: ${res.text}`).not.toBe(401);
    }
  });
});

describe('API key transport', () => {
  it('accepts the key as the api_key query parameter', async () => {
    const user = await newUser();
    const res = await call(`/user/profile?api_key=${encodeURIComponent(user.key)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.id).toBe(user.id);
  });

  it('prefers the header: valid header + garbage query → 200', async () => {
    const user = await newUser();
    const res = await call('/user/profile?api_key=garbage', { key: user.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.id).toBe(user.id);
  });

  it('prefers the header: garbage header + valid query → 401', async () => {
    const user = await newUser();
    const res = await call(`/user/profile?api_key=${user.key}`, { headers: { 'X-API-Key': 'garbage' } });
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it("prefers the header: two valid keys of different users → the header's user", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const res = await call(`/user/profile?api_key=${bob.key}`, { key: alice.key });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.id).toBe(alice.id);
  });
});

describe('admin routes', () => {
  const cases: Array<[label: string, headers: Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a wrong bearer token', { Authorization: 'Bearer wrong-token' }],
    ['an empty bearer token', { Authorization: 'Bearer ' }],
    ['the right token without the Bearer scheme', { Authorization: ADMIN_TOKEN }],
    ['a Basic scheme', { Authorization: `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}` }],
    ['a token with a suffix', { Authorization: `Bearer ${ADMIN_TOKEN}x` }],
  ];

  it.each(cases)('answer 401 UNAUTHORIZED with %s', async (label, headers) => {
    for (const [method, path] of ADMIN_ROUTES) {
      const res = await call(path, { method, headers, body: { name: 'x', email: 'admin-probe@example.com', password: 'password123' } });
      expectUnauthorized(res, `${label}: ${method} ${path}`);
    }
  });

  it('are not opened by a user API key', async () => {
    const user = await newUser();
    const res = await call('/admin/users/1/balance-adjustments', { key: user.key, body: { amount: 100, description: 'free money' } });
    expectError(res, 401, 'UNAUTHORIZED');
  });
});

describe('X-Request-Id', () => {
  it('echoes a valid incoming id (up to 128 characters)', async () => {
    for (const id of ['abc-123', 'trace.id:42_x', 'a'.repeat(128)]) {
      const res = await call('/', { headers: { 'X-Request-Id': id } });
      expect(res.headers.get('X-Request-Id')).toBe(id);
    }
  });

  it('replaces an invalid incoming id', async () => {
    for (const id of ['has spaces in it', 'a'.repeat(129), 'semi;colon', '<script>', '']) {
      const res = await call('/', { headers: { 'X-Request-Id': id } });
      const out = res.headers.get('X-Request-Id');
      expect(out, id).not.toBe(id);
      expect(out, id).toMatch(REQUEST_ID_SHAPE);
    }
  });

  it('is on every response, including 404, 401 and 422, and differs between requests', async () => {
    const user = await newUser();
    const responses = [
      await call('/'),
      await call('/no/such/route'),
      await call('/user/profile'),
      await call('/user/profile', { key: user.key }),
      await call('/api-keys/x', { key: user.key, method: 'DELETE' }),
      await call('/admin/users', { body: {} }),
      await call('/stock'),
    ];
    const ids = responses.map((r) => r.headers.get('X-Request-Id'));
    for (const id of ids) expect(id).toMatch(REQUEST_ID_SHAPE);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is echoed on error responses too', async () => {
    const res = await call('/user/profile', { headers: { 'X-Request-Id': 'err-trace-1' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('X-Request-Id')).toBe('err-trace-1');
  });
});

describe('routing and service info', () => {
  it.each(['/api/v2/no-such-route', '/nothing-here', '/api/v1/user/profile', '/api/v2/stock/1/extra/segments'])(
    'answers an unknown route (%s) with the 404 NOT_FOUND envelope',
    async (path) => {
      const res = await SELF.fetch(`http://localhost${path}`);
      expect(res.status).toBe(404);
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ success: false, code: 'NOT_FOUND' });
      expect(typeof body.error).toBe('string');
      expect(res.headers.get('X-Request-Id')).toMatch(REQUEST_ID_SHAPE);
    },
  );

  it.each(['http://localhost/', BASE])('GET %s answers 200 with version 2.0', async (url) => {
    const res = await SELF.fetch(url);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.success).toBe(true);
    expect(body.data.version).toBe('2.0');
    expect(typeof body.data.name).toBe('string');
  });
});

describe('caching', () => {
  it('authenticated routes send Cache-Control: no-store', async () => {
    const user = await newUser();
    const responses = [
      await call('/user/profile', { key: user.key }),
      await call('/user/dashboard', { key: user.key }),
      await call('/api-keys', { key: user.key }),
      await call('/orders', { key: user.key }),
      await call('/wallet/balance', { key: user.key }),
      await call('/wallet/transactions', { key: user.key }),
      await call(`/wallet/balance?api_key=${user.key}`),
      await call('/orders/999999999', { key: user.key }),
    ];
    for (const res of responses) expect(res.headers.get('Cache-Control'), res.text).toBe('no-store');
  });
});

describe('error bodies', () => {
  it('never contain a stack trace or SQL', async () => {
    const user = await newUser();
    const other = await newUser();
    const errors = [
      await call('/no/such/route'),
      await call('/user/profile'),
      await call('/user/profile', { headers: { 'X-API-Key': "sk_live_' OR 1=1 --" } }),
      await call('/api-keys', { key: user.key, body: '{"name": ' }),
      await call('/api-keys', { key: user.key, body: '[1,2,3]' }),
      await call('/api-keys', { key: user.key, body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }),
      await call('/api-keys', { key: user.key, body: { name: 'n'.repeat(101) } }),
      await call('/api-keys/999999999999999', { key: user.key, method: 'DELETE' }),
      await call('/api-keys/99999999999999999999', { key: user.key, method: 'DELETE' }),
      await call("/api-keys/1;DROP TABLE api_keys", { key: user.key, method: 'DELETE' }),
      await call('/user/profile', { key: user.key, method: 'PUT', body: { email: other.email.toUpperCase() } }),
      await call('/user/profile', { key: user.key, method: 'PUT', body: { email: 42 } }),
      await call('/user/password', { key: user.key, body: { current_password: 'wrong-one', new_password: 'long enough', new_password_confirmation: 'long enough' } }),
      await call('/orders/999999999', { key: user.key }),
      await call('/admin/users', { body: {} }),
    ];
    for (const res of errors) {
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.status, res.text).toBeLessThan(500);
      expect(res.json, res.text).toMatchObject({ success: false, error: expect.any(String), code: expect.any(String) });
      for (const key of Object.keys(res.json)) expect(['success', 'error', 'code', 'errors']).toContain(key);
      expect(res.text).not.toMatch(LEAK);
    }
  });
});
