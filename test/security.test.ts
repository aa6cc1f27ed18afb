import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { SELF } from './contract';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app';
import { timingSafeEqualStrings } from '../src/lib/crypto';
import { ADMIN_TOKEN, BASE, buy, call, expectError, newDeposit, newProduct, newUser, signedWebhook, unique, type TestUser } from './helpers';
import { changedTables, schemaOf, snapshot } from './snapshot';

// Hostile-input checks that need a targeted setup: body size limits, other users' ids, broken API keys, secrets in
// logs, token and signature comparisons, SQL metacharacters, and admin routes without a configured ADMIN_TOKEN.

const MB = 1024 * 1024;
const encoder = new TextEncoder();

/** ASCII JSON of `value`, padded with whitespace inside the object to exactly `size` bytes. */
function paddedJson(value: Record<string, unknown>, size: number): string {
  const json = JSON.stringify(value);
  expect(/^[\x20-\x7e]*$/.test(json)).toBe(true);
  return `${json.slice(0, -1)}${' '.repeat(size - json.length)}}`;
}

/** A body without Content-Length: a stream, sent chunked. */
function streamOf(text: string, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  stream?: boolean;
}

/** A request through the worker's fetch handler with a raw body, fixed-length or streamed. */
async function raw(path: string, { method = 'POST', headers = {}, body, stream = false }: RawOptions = {}) {
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body !== undefined) {
    init.body = stream ? streamOf(body) : body;
    if (stream) init.duplex = 'half';
  }
  const request = new Request(`${BASE}${path}`, init);
  if (stream) expect(request.headers.has('Content-Length')).toBe(false);
  const res = await SELF.fetch(request);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const json = (extra: Record<string, string> = {}) => ({ 'Content-Type': 'application/json', ...extra });

async function stockCount(productId: number): Promise<number> {
  const row = await env.DB.prepare('SELECT stock_count AS n FROM products WHERE id = ?').bind(productId).first<{ n: number }>();
  return row!.n;
}

// ---------------------------------------------------------------------------------------------------------------
// Body size
// ---------------------------------------------------------------------------------------------------------------

describe('body size limits', () => {
  let buyer: TestUser;
  let product: { id: number };
  let bin: { id: number };

  beforeAll(async () => {
    buyer = await newUser({ balance: 20 });
    product = await newProduct({ price: 1, stock: 5 });
    bin = await newProduct({ price: 1 });
  });

  const orderBody = () => ({ product_id: product.id, quantity: 1 });

  it.each([
    ['with Content-Length', false],
    ['streamed, without Content-Length', true],
  ])('a 1 MB + 1 byte JSON body to POST /orders (%s) → 413 PAYLOAD_TOO_LARGE, nothing bought', async (_label, stream) => {
    const before = await snapshot();
    const body = paddedJson(orderBody(), MB + 1);
    expect(encoder.encode(body).length).toBe(MB + 1);
    const res = await raw('/orders', { headers: json({ 'X-API-Key': buyer.key }), body, stream });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(Object.keys(res.json).sort()).toEqual(['code', 'error', 'success']);
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it.each([
    ['with Content-Length', false],
    ['streamed', true],
  ])('exactly 1 MB to POST /orders (%s) is read and processed (201)', async (_label, stream) => {
    const body = paddedJson(orderBody(), MB);
    const res = await raw('/orders', { headers: json({ 'X-API-Key': buyer.key }), body, stream });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.json.data.quantity).toBe(1);
  });

  it('the 1 MB default covers the other admin routes: a 2 MB product body → 413', async () => {
    const before = await snapshot();
    const body = paddedJson({ name: 'Big', sku: unique('BIG'), price: 1 }, 2 * MB);
    expectError(await raw('/admin/products', { headers: json({ Authorization: `Bearer ${ADMIN_TOKEN}` }), body }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await raw('/admin/products', { headers: json({ Authorization: `Bearer ${ADMIN_TOKEN}` }), body, stream: true }), 413, 'PAYLOAD_TOO_LARGE');
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('webhooks and other routes answer 413 above 1 MB as well, before anything else', async () => {
    const signed = await signedWebhook('gateway_one', paddedJson({ deposit_id: 1, status: 'paid', amount: 1, transaction_id: 'x' }, MB + 1));
    expectError(await raw('/webhooks/gateway_one', { headers: signed.headers, body: signed.body }), 413, 'PAYLOAD_TOO_LARGE');
    const big = paddedJson({ name: 'x' }, MB + 1);
    expectError(await raw('/user/profile', { method: 'PUT', headers: json({ 'X-API-Key': buyer.key }), body: big }), 413, 'PAYLOAD_TOO_LARGE');
    expectError(await raw('/api-keys', { headers: json({ 'X-API-Key': buyer.key }), body: big, stream: true }), 413, 'PAYLOAD_TOO_LARGE');
    // the limit comes before authentication: an anonymous huge body is refused for its size
    expectError(await raw('/orders', { headers: json(), body: big }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('an admin stock upload of 2 MB is accepted (text/plain and JSON, fixed-length and streamed)', async () => {
    const prefix = unique('BIG');
    const line = (i: number) => `${prefix}-${i}-`.padEnd(250, 'x');
    const text = Array.from({ length: 8_400 }, (_, i) => line(i)).join('\n');
    expect(encoder.encode(text).length).toBeGreaterThan(2 * MB);
    const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain; charset=utf-8' };
    const res = await raw(`/admin/products/${bin.id}/stock`, { headers, body: text });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.json.data).toMatchObject({ added: 8_400, skipped: 0, stock_count: 8_400 });

    const items = Array.from({ length: 8_400 }, (_, i) => `${line(i)}-json`);
    const body = JSON.stringify({ items });
    expect(body.length).toBeGreaterThan(2 * MB);
    const streamed = await raw(`/admin/products/${bin.id}/stock`, { headers: json({ Authorization: `Bearer ${ADMIN_TOKEN}` }), body, stream: true });
    expect(streamed.status, streamed.text.slice(0, 300)).toBe(201);
    expect(streamed.json.data).toMatchObject({ added: 8_400, skipped: 0, stock_count: 16_800 });
  });

  it.each([
    ['with Content-Length', false],
    ['streamed, without Content-Length', true],
  ])('an admin stock upload of 17 MB (%s) → 413, nothing added', async (_label, stream) => {
    const before = await stockCount(bin.id);
    const text = Array.from({ length: 17 * 4 }, (_, i) => `${unique('HUGE')}-${i}-`.padEnd(MB / 4 - 1, 'y')).join('\n');
    expect(encoder.encode(text).length).toBeGreaterThan(17 * MB - 100);
    expect(encoder.encode(text).length).toBeGreaterThan(16 * MB);
    const headers = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'text/plain' };
    expectError(await raw(`/admin/products/${bin.id}/stock`, { headers, body: text, stream }), 413, 'PAYLOAD_TOO_LARGE');
    expect(await stockCount(bin.id)).toBe(before);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Other users' ids
// ---------------------------------------------------------------------------------------------------------------

describe("another user's ids answer 404 NOT_FOUND and change nothing", () => {
  let alice: TestUser;
  let bob: TestUser;
  let ids: { order: number; deposit: number; key: number };
  let aliceSpareKey: string;

  beforeAll(async () => {
    alice = await newUser({ balance: 30 });
    bob = await newUser({ balance: 30 });
    const product = await newProduct({ price: 2, stock: 5 });
    const order = await buy(alice, product.id, 1);
    expect(order.status, order.text).toBe(201);
    const deposit = await newDeposit(alice, { amount: 15 });
    const key = await call('/api-keys', { key: alice.key, body: { name: 'alice spare' } });
    expect(key.status, key.text).toBe(201);
    aliceSpareKey = key.json.data.key;
    ids = { order: order.json.data.id, deposit: deposit.deposit_id, key: key.json.data.id };
  });

  const routes: Array<[method: string, path: (ids: { order: number; deposit: number; key: number }) => string]> = [
    ['GET', ({ order }) => `/orders/${order}`],
    ['POST', ({ order }) => `/orders/${order}/cancel`],
    ['GET', ({ order }) => `/orders/${order}/export`],
    ['GET', ({ order }) => `/orders/${order}/export?format=txt`],
    ['GET', ({ deposit }) => `/wallet/deposits/${deposit}/status`],
    ['DELETE', ({ key }) => `/api-keys/${key}`],
  ];

  it.each(routes.map(([method, path]) => [method, path] as const))('%s %s with the owner\'s id, as another user', async (method, path) => {
    const unknown = { order: 999_999_999, deposit: 999_999_999, key: 999_999_999 };
    const before = await snapshot();
    const asHeader = await call(path(ids), { method, key: bob.key });
    const asQuery = await call(`${path(ids)}${path(ids).includes('?') ? '&' : '?'}api_key=${bob.key}`, { method });
    const withIdempotencyKey = await call(path(ids), { method, key: bob.key, headers: { 'Idempotency-Key': unique('idem') } });
    const ofUnknownId = await call(path(unknown), { method, key: bob.key });
    for (const res of [asHeader, asQuery, withIdempotencyKey, ofUnknownId]) expectError(res, 404, 'NOT_FOUND');
    // Indistinguishable from an id that does not exist: nothing tells bob the resource is there (a sentence may name
    // the id asked for, as the key's says how to revoke a test key of that id).
    const withoutIds = (json: unknown) => JSON.parse(JSON.stringify(json).replaceAll(String(ids.key), '<id>').replaceAll('999999999', '<id>'));
    expect(withoutIds(asHeader.json)).toEqual(withoutIds(ofUnknownId.json));
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('the owner still has every one of them, untouched', async () => {
    const order = await call(`/orders/${ids.order}`, { key: alice.key });
    expect(order.status, order.text).toBe(200);
    expect(order.json.data.status).toBe('pending');
    expect((await call(`/orders/${ids.order}/export`, { key: alice.key })).status).toBe(200);
    const deposit = await call(`/wallet/deposits/${ids.deposit}/status`, { key: alice.key });
    expect(deposit.status, deposit.text).toBe(200);
    expect(deposit.json.data.status).toBe('pending');
    expect((await call('/user/profile', { key: aliceSpareKey })).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Broken API keys
// ---------------------------------------------------------------------------------------------------------------

describe('revoked, malformed, truncated, case-changed and padded API keys → 401', () => {
  let user: TestUser;
  let revoked: string;
  let spareId: number;
  let product: { id: number };

  beforeAll(async () => {
    user = await newUser({ balance: 10 });
    product = await newProduct({ price: 1, stock: 3 });
    const created = await call('/api-keys', { key: user.key, body: { name: 'to revoke' } });
    revoked = created.json.data.key;
    expect((await call(`/api-keys/${created.json.data.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
    const spare = await call('/api-keys', { key: user.key, body: { name: 'spare' } });
    spareId = spare.json.data.id;
  });

  const toggleCase = (key: string, index: number) => {
    const ch = key[index];
    const swapped = ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase();
    return key.slice(0, index) + swapped + key.slice(index + 1);
  };
  /** Positions in the random part holding a letter (so toggling its case makes a different, well-formed key). */
  const letterPositions = (key: string) => [...key].map((ch, i) => (i >= 8 && /[A-Za-z]/.test(ch) ? i : -1)).filter((i) => i >= 0);

  function variants(): Array<[label: string, value: string]> {
    const key = user.key;
    const letters = letterPositions(key);
    return [
      ['revoked', revoked],
      ['malformed: not a key', 'not-a-key'],
      ['malformed: prefix only', 'sk_live_'],
      ['malformed: wrong prefix', `sk_test_${key.slice(8)}`],
      ['malformed: punctuation', `sk_live_${'!'.repeat(40)}`],
      ['malformed: SQL', "sk_live_' OR '1'='1"],
      ['truncated by one', key.slice(0, -1)],
      ['truncated to half', key.slice(0, 24)],
      ['missing first char', key.slice(1)],
      ['one char too many', `${key}A`],
      ['doubled', key + key],
      ['upper-cased', key.toUpperCase()],
      ['lower-cased', key.toLowerCase()],
      ['prefix upper-cased', `SK_LIVE_${key.slice(8)}`],
      ['one letter case-swapped (first)', toggleCase(key, letters[0])],
      ['one letter case-swapped (last)', toggleCase(key, letters[letters.length - 1])],
      ['inner space', `${key.slice(0, 20)} ${key.slice(20)}`],
      ['inner tab', `${key.slice(0, 20)}\t${key.slice(20)}`],
    ];
  }

  /** Only in the query form: HTTP itself trims the whitespace around a header value before the worker sees it. */
  function paddedQueryVariants(): Array<[label: string, value: string]> {
    const key = user.key;
    return [
      ['leading space', ` ${key}`],
      ['trailing space', `${key} `],
      ['trailing tab', `${key}\t`],
      ['trailing newline', `${key}\n`],
      ['leading NBSP', `\u00a0${key}`],
      ['trailing zero-width space', `${key}\u200b`],
      ['trailing NUL', `${key}\u0000`],
      ['full-width letters', key.replace(/[A-Za-z]/, (ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0))],
    ];
  }

  const requests = () => [
    { method: 'GET', path: '/user/profile' },
    { method: 'GET', path: '/wallet/balance' },
    { method: 'POST', path: '/orders', body: { product_id: product.id, quantity: 1 } },
    { method: 'POST', path: '/api-keys', body: { name: 'intruder' } },
    { method: 'DELETE', path: `/api-keys/${spareId}` },
  ];

  it('every variant, in the header and in the query, on reads and writes → 401, nothing changed', async () => {
    const before = await snapshot();
    for (const [label, value] of variants()) {
      for (const { method, path, body } of requests()) {
        const inHeader = await call(path, { method, body, headers: { 'X-API-Key': value } });
        expectError(inHeader, 401, 'UNAUTHORIZED');
        const inQuery = await call(`${path}?api_key=${encodeURIComponent(value)}`, { method, body });
        expect(inQuery.status, `${label} in the query: ${method} ${path}`).toBe(401);
        expect(inQuery.json.code).toBe('UNAUTHORIZED');
      }
    }
    for (const [label, value] of paddedQueryVariants()) {
      for (const { method, path, body } of requests()) {
        const res = await call(`${path}?api_key=${encodeURIComponent(value)}`, { method, body });
        expect(res.status, `${label}: ${method} ${path}`).toBe(401);
        expect(res.json.code).toBe('UNAUTHORIZED');
      }
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('(documented) a padded X-API-Key header is the same key: HTTP trims header whitespace before the worker', async () => {
    for (const padded of [` ${user.key}`, `${user.key} `, `\t${user.key}\t`]) {
      const res = await call('/user/profile', { headers: { 'X-API-Key': padded } });
      expect(res.status).toBe(200);
    }
  });

  it('the real key still works afterwards', async () => {
    const res = await call('/user/profile', { key: user.key });
    expect(res.status).toBe(200);
    expect(res.json.data.balance).toBe(10);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Secrets in logs
// ---------------------------------------------------------------------------------------------------------------

describe('the api_key query form never reaches a log line', () => {
  const LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;
  let lines: string[] = [];

  const stringify = (value: unknown) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ''}`;
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  };

  function capture() {
    lines = [];
    for (const level of LEVELS) vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(`${level}: ${args.map(stringify).join(' ')}`));
  }

  afterEach(() => vi.restoreAllMocks());

  /** The key, its URL-encoded form and its secret part: none may appear anywhere in a captured line. */
  function expectNoKeyIn(captured: string[], key: string) {
    const needles = [key, encodeURIComponent(key), key.slice('sk_live_'.length)];
    for (const line of captured) for (const needle of needles) expect(line.includes(needle), `log line leaks the key: ${line.slice(0, 300)}`).toBe(false);
  }

  /** Requests with the key in the query: 200, 404, 422 (path, query, body, malformed JSON), 401, unknown route. */
  function requestsWith(key: string, revoked: string, orderId: number) {
    const q = `api_key=${encodeURIComponent(key)}`;
    return [
      { path: `/user/profile?${q}`, init: {} },
      { path: `/orders/${orderId}?${q}`, init: {} },
      { path: `/orders/999999999?${q}`, init: {} },
      { path: `/orders/abc?${q}`, init: {} },
      { path: `/orders?page=0&${q}`, init: {} },
      { path: `/orders?${q}`, init: { method: 'POST', headers: json(), body: '{"product_id": "1"' } },
      { path: `/orders?${q}`, init: { method: 'POST', headers: json(), body: '{"product_id": 999999, "quantity": 1}' } },
      { path: `/user/profile?api_key=${encodeURIComponent(revoked)}`, init: {} },
      { path: `/user/profile?${q}`, init: { headers: { 'X-API-Key': 'garbage' } } },
      { path: `/no/such/route?${q}`, init: {} },
      { path: `/stock?${q}`, init: {} },
      { path: `/admin/products?${q}`, init: { method: 'POST', headers: json(), body: '{}' } },
    ];
  }

  let user: TestUser;
  let revoked: string;
  let orderId: number;

  beforeAll(async () => {
    user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 2 });
    orderId = (await buy(user, product.id, 1)).json.data.id;
    const created = await call('/api-keys', { key: user.key, body: { name: 'revoked' } });
    revoked = created.json.data.key;
    await call(`/api-keys/${created.json.data.id}`, { key: user.key, method: 'DELETE' });
  });

  // The suite runs with LOG_REQUESTS=false (vitest.config.ts); production logs every request, so these turn it on.
  it('with request logging on (LOG_REQUESTS=true, createApp): log lines are written, none holds the key', async () => {
    const app = createApp();
    capture();
    for (const { path, init } of requestsWith(user.key, revoked, orderId)) {
      const ctx = createExecutionContext();
      const res = await app.request(`${BASE}${path}`, init, { ...env, LOG_REQUESTS: 'true' }, ctx);
      expect(res.status).toBeLessThan(500);
      await res.text();
      await waitOnExecutionContext(ctx);
    }
    vi.restoreAllMocks();
    // Non-vacuous: src/middleware/request-log.ts wrote one line per request (route pattern, never the URL).
    const requestLines = lines.filter((line) => line.includes('"msg":"request"'));
    expect(requestLines.length).toBe(requestsWith(user.key, revoked, orderId).length);
    expectNoKeyIn(lines, user.key);
    expectNoKeyIn(lines, revoked);
  });

  it('an internal error (database down) logs the error, not the key, and answers a bare 500 envelope', async () => {
    const app = createApp();
    const down = () => {
      throw new Error('D1_ERROR: simulated outage');
    };
    const brokenDb = { prepare: down, batch: down, exec: down, dump: down, withSession: down } as unknown as D1Database;
    capture();
    const paths = [`/user/profile?api_key=${encodeURIComponent(user.key)}`, `/orders?api_key=${encodeURIComponent(user.key)}&page=2`, `/stock?api_key=${encodeURIComponent(user.key)}`];
    for (const path of paths) {
      const ctx = createExecutionContext();
      const res = await app.request(`${BASE}${path}`, {}, { ...env, DB: brokenDb, STOCK_CACHE_SECONDS: '0', LOG_REQUESTS: 'true' }, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(500);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ success: false, error: expect.any(String), code: 'INTERNAL_ERROR' });
      expect(JSON.stringify(body)).not.toMatch(/simulated outage|D1_ERROR|\.ts:\d+/);
    }
    vi.restoreAllMocks();
    // Non-vacuous: the error path did log (one line per failed request at least), so did the request log (one 500
    // line per request), and no line holds the key.
    expect(lines.filter((line) => line.includes('simulated outage')).length).toBeGreaterThanOrEqual(paths.length);
    expect(lines.filter((line) => line.includes('"msg":"request"') && line.includes('"status":500')).length).toBe(paths.length);
    expectNoKeyIn(lines, user.key);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Token and signature comparisons
// ---------------------------------------------------------------------------------------------------------------

describe("secret comparisons go through the platform's constant-time primitive, and its answer decides", () => {
  // Timing cannot be measured reliably in workerd, so these check behaviour instead: the only comparison made is
  // crypto.subtle.timingSafeEqual over two SHA-256 digests (always 32 bytes, whatever the inputs' lengths), and
  // the caller does what that call answers. The worker behind SELF shares this isolate, so the spy sees its calls.
  afterEach(() => vi.restoreAllMocks());

  const digestOf = async (text: string) => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  const bytes = (buffer: unknown) => new Uint8Array(ArrayBuffer.isView(buffer) ? buffer.buffer : (buffer as ArrayBuffer));
  /** Spy on the primitive; with `answer`, every call answers that instead of comparing. */
  const spyOnTimingSafeEqual = (answer?: boolean) => {
    const spy = vi.spyOn(crypto.subtle, 'timingSafeEqual');
    if (answer !== undefined) spy.mockReturnValue(answer);
    return spy;
  };

  it('timingSafeEqualStrings compares the two SHA-256 digests with crypto.subtle.timingSafeEqual, once', async () => {
    const spy = spyOnTimingSafeEqual();
    for (const [a, b, equal] of [
      ['same secret', 'same secret', true],
      ['same secret', 'same secreT', false],
      ['short', 'a much longer secret than the other one', false],
      ['', 'x', false],
      ['', '', true],
    ] as const) {
      spy.mockClear();
      expect(await timingSafeEqualStrings(a, b), `${a} vs ${b}`).toBe(equal);
      expect(spy).toHaveBeenCalledTimes(1);
      const [left, right] = spy.mock.calls[0];
      // Equal-length inputs to the primitive whatever the strings' lengths: the length of a secret leaks nothing.
      expect([bytes(left).length, bytes(right).length]).toEqual([32, 32]);
      expect(bytes(left)).toEqual(await digestOf(a));
      expect(bytes(right)).toEqual(await digestOf(b));
    }
  });

  it("timingSafeEqualStrings answers exactly what the primitive answers (no other comparison can override it)", async () => {
    spyOnTimingSafeEqual(true);
    expect(await timingSafeEqualStrings('one', 'another')).toBe(true);
    vi.restoreAllMocks();
    spyOnTimingSafeEqual(false);
    expect(await timingSafeEqualStrings('same', 'same')).toBe(false);
  });

  const adminCall = (authorization: string) =>
    call('/admin/products', { body: { name: 'Probe', sku: unique('CT'), price: 1 }, headers: { Authorization: authorization } });

  it('the admin token: compared by the primitive (digests of the presented and the configured token), which decides', async () => {
    const spy = spyOnTimingSafeEqual();
    expect((await adminCall(`Bearer ${ADMIN_TOKEN}`)).status).toBe(201);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0].map(bytes)).toEqual([await digestOf(ADMIN_TOKEN), await digestOf(ADMIN_TOKEN)]);

    spy.mockReturnValue(false); // the right token, refused because the primitive says so
    expectError(await adminCall(`Bearer ${ADMIN_TOKEN}`), 401, 'UNAUTHORIZED');
    spy.mockReturnValue(true); // a wrong token, admitted because the primitive says so: no other check compares
    expect((await adminCall('Bearer not-the-admin-token')).status).toBe(201);
  });

  it('the webhook signature: compared by the primitive (digests of the presented and the expected HMAC), which decides', async () => {
    const user = await newUser();
    const credits = async (depositId: number) =>
      (await env.DB.prepare("SELECT count(*) AS n FROM wallet_transactions WHERE deposit_id = ? AND type = 'deposit'").bind(depositId).first<{ n: number }>())!.n;
    const deliver = async (answer: boolean | undefined, sign: (v1: string) => string) => {
      const deposit = await newDeposit(user, { amount: 2 });
      const signed = await signedWebhook('gateway_one', { deposit_id: deposit.deposit_id, status: 'paid', amount: 2, transaction_id: unique('tx') });
      const spy = spyOnTimingSafeEqual(answer);
      const res = await raw('/webhooks/gateway_one', { headers: json({ 'X-Signature': `t=${signed.t},v1=${sign(signed.v1)}` }), body: signed.body });
      const calls = spy.mock.calls.map((args) => args.map(bytes));
      vi.restoreAllMocks();
      return { res, calls, v1: signed.v1, credited: await credits(deposit.deposit_id) };
    };

    const genuine = await deliver(undefined, (v1) => v1);
    expect([genuine.res.status, genuine.credited]).toEqual([200, 1]);
    expect(genuine.calls).toEqual([[await digestOf(genuine.v1), await digestOf(genuine.v1)]]);

    const refused = await deliver(false, (v1) => v1); // the right signature, refused because the primitive says so
    expectError(refused.res, 401, 'UNAUTHORIZED');
    expect(refused.credited).toBe(0);

    const forged = await deliver(true, () => '0'.repeat(64)); // a wrong one, admitted because the primitive says so
    expect([forged.res.status, forged.credited]).toEqual([200, 1]);
  });
});

describe('admin token comparison rejects near misses', () => {
  const token = ADMIN_TOKEN;
  const sameLength = (i: number) => token.slice(0, i) + (token[i] === 'x' ? 'y' : 'x') + token.slice(i + 1);

  const nearMisses: Array<[label: string, authorization: string]> = [
    ...Array.from({ length: token.length }, (_, n) => [`prefix of ${n} chars`, `Bearer ${token.slice(0, n)}`] as [string, string]),
    ...Array.from({ length: token.length - 1 }, (_, n) => [`suffix of ${token.length - 1 - n} chars`, `Bearer ${token.slice(n + 1)}`] as [string, string]),
    ...Array.from({ length: token.length }, (_, i) => [`same length, char ${i} changed`, `Bearer ${sameLength(i)}`] as [string, string]),
    ['one char appended', `Bearer ${token}x`],
    ['token twice', `Bearer ${token}${token}`],
    ['upper-cased', `Bearer ${token.toUpperCase()}`],
    ['first char upper-cased', `Bearer ${token[0].toUpperCase()}${token.slice(1)}`],
    ['two spaces after Bearer', `Bearer  ${token}`],
    ['tab after Bearer', `Bearer\t${token}`],
    ['inner space', `Bearer ${token.slice(0, 4)} ${token.slice(4)}`],
    ['no scheme', token],
    ['Basic scheme', `Basic ${token}`],
  ];

  it('prefixes, suffixes, same-length variants, case and whitespace variants → 401, nothing created', async () => {
    const before = await snapshot();
    for (const [label, authorization] of nearMisses) {
      const res = await call('/admin/products', { body: { name: 'nope', sku: unique('NOPE'), price: 1 }, headers: { Authorization: authorization } });
      expect(res.status, label).toBe(401);
      expect(res.json.code, label).toBe('UNAUTHORIZED');
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    const ok = await call('/admin/products', { admin: true, body: { name: 'yes', sku: unique('YES'), price: 1 } });
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('webhook signature comparison', () => {
  let user: TestUser;

  beforeAll(async () => {
    user = await newUser();
  });

  const payloadFor = (deposit: { deposit_id: number; amount: number }) => ({
    deposit_id: deposit.deposit_id,
    status: 'paid',
    amount: deposit.amount,
    transaction_id: unique('tx'),
  });
  const flipHex = (hex: string, i: number) => hex.slice(0, i) + (hex[i] === '0' ? '1' : '0') + hex.slice(i + 1);
  const send = (body: string, signature: string | undefined, gateway = 'gateway_one') =>
    raw(`/webhooks/${gateway}`, { headers: json(signature === undefined ? {} : { 'X-Signature': signature }), body });

  it('one differing hex digit anywhere, truncation, extension, another secret, another t, stale or future t → 401, nothing credited', async () => {
    const deposit = await newDeposit(user, { amount: 12 });
    const signed = await signedWebhook('gateway_one', payloadFor(deposit));
    const { t, v1, body } = signed;
    const otherSecret = await signedWebhook('gateway_one', body, { secret: 'test-secret-two' });
    const variants: Array<[string, string | undefined, string?]> = [
      ...Array.from({ length: 64 }, (_, i) => [`digit ${i} changed`, `t=${t},v1=${flipHex(v1, i)}`] as [string, string]),
      ['63 digits', `t=${t},v1=${v1.slice(0, 63)}`],
      ['65 digits', `t=${t},v1=${v1}0`],
      ['empty v1', `t=${t},v1=`],
      ['no t', `v1=${v1}`],
      ['no v1', `t=${t}`],
      ['t off by one', `t=${t + 1},v1=${v1}`],
      ["gateway_two's secret", otherSecret.headers['X-Signature']],
      ['signature for gateway_one sent to gateway_two', signed.headers['X-Signature'], 'gateway_two'],
      ['non-hex v1', `t=${t},v1=${'g'.repeat(64)}`],
      ['no header', undefined],
    ];
    const before = await snapshot();
    for (const [label, signature, gateway] of variants) {
      const res = await send(body, signature, gateway);
      expect(res.status, `${label}: ${res.text}`).toBe(401);
      expect(res.json.code, label).toBe('UNAUTHORIZED');
    }
    // the right signature over a different body (one byte of whitespace added) is not valid either
    expectError(await send(`${body} `, signed.headers['X-Signature']), 401, 'UNAUTHORIZED');
    // correctly signed, but t is outside the 300 s window (signed just before sending, 30 s of margin for slow runs)
    for (const offset of [-330, 330, -86_400, 86_400 * 365]) {
      const late = await signedWebhook('gateway_one', body, { t: Math.floor(Date.now() / 1000) + offset });
      expectError(await send(body, late.headers['X-Signature']), 401, 'UNAUTHORIZED');
    }
    expect(changedTables(before, await snapshot())).toEqual([]);

    const good = await send(body, signed.headers['X-Signature']);
    expect(good.status, good.text).toBe(200);
    expect(good.json.data.status).toBe('paid');
  });

  it('hex digits are compared case-insensitively (src/services/gateways.ts lower-cases v1): upper and mixed case are accepted, once', async () => {
    for (const recase of [(hex: string) => hex.toUpperCase(), (hex: string) => [...hex].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('')]) {
      const deposit = await newDeposit(user, { amount: 3 });
      const signed = await signedWebhook('gateway_one', payloadFor(deposit));
      const header = `t=${signed.t},v1=${recase(signed.v1)}`;
      expect(header).not.toBe(signed.headers['X-Signature']);
      const res = await send(signed.body, header);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data.status).toBe('paid');
      const replay = await send(signed.body, header);
      expect(replay.status).toBe(200);
      const credits = await env.DB.prepare("SELECT count(*) AS n FROM wallet_transactions WHERE deposit_id = ? AND type = 'deposit'")
        .bind(deposit.deposit_id)
        .first<{ n: number }>();
      expect(credits!.n).toBe(1);
    }
  });

  it('a timestamp inside the 300 s window is accepted', async () => {
    const deposit = await newDeposit(user, { amount: 4 });
    const signed = await signedWebhook('gateway_one', payloadFor(deposit), { t: Math.floor(Date.now() / 1000) - 240 });
    const res = await send(signed.body, signed.headers['X-Signature']);
    expect(res.status, res.text).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// SQL metacharacters
// ---------------------------------------------------------------------------------------------------------------

describe('SQL metacharacters are stored and returned verbatim, tables intact', () => {
  // Control characters (NUL...) and direction marks (U+202E) are refused in text a person types: test/lib/human-text.test.ts.
  const META = [
    "'; DROP TABLE users; --",
    '" OR 1=1 --',
    '%',
    '_',
    '\\',
    'a\u00a0b',
    '%_%\\%',
    "Robert'); DROP TABLE products;--",
    "' OR ''='",
    '`; DELETE FROM orders; --',
    '1; SELECT * FROM api_keys',
    '$1 ?1 :name @x ?',
    "x' || (SELECT key_hash FROM api_keys LIMIT 1) || '",
    '😀 ǝvil',
  ];

  let user: TestUser;
  let schemaBefore: Awaited<ReturnType<typeof schemaOf>>;
  let countsBefore: Record<string, number>;

  const counts = async () => {
    const row = await env.DB.prepare(
      'SELECT (SELECT count(*) FROM users) AS users, (SELECT count(*) FROM products) AS products, (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM api_keys) AS api_keys',
    ).first<Record<string, number>>();
    return row!;
  };

  beforeAll(async () => {
    schemaBefore = await schemaOf();
    user = await newUser({ balance: 100 });
    countsBefore = await counts();
  });

  it.each(META)('user name %j via PUT /user/profile', async (name) => {
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { name } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.name).toBe(name);
    expect((await call('/user/profile', { key: user.key })).json.data.name).toBe(name);
    const row = await env.DB.prepare('SELECT name FROM users WHERE id = ?').bind(user.id).first<{ name: string }>();
    expect(row!.name).toBe(name);
  });

  it("an email with SQL-ish but valid characters (o'brien_x+%) is stored verbatim", async () => {
    const email = `o'brien_${unique('q').replace(/-/g, '_')}@example.com`;
    const res = await call('/user/profile', { key: user.key, method: 'PUT', body: { email } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.email).toBe(email);
  });

  it.each(META)('API key name %j', async (name) => {
    const created = await call('/api-keys', { key: user.key, body: { name } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.name).toBe(name);
    const listed = await call('/api-keys', { key: user.key });
    expect(listed.json.data.map((k: { name: string }) => k.name)).toContain(name);
    expect((await call(`/api-keys/${created.json.data.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
  });

  it.each(META)('admin product name, sku and category %j (create, patch, public stock)', async (value) => {
    const created = await call('/admin/products', { admin: true, body: { name: value, sku: value, category: value, price: 1 } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data).toMatchObject({ name: value, sku: value, category: value });
    const id = created.json.data.id;
    const patched = await call(`/admin/products/${id}`, { admin: true, method: 'PATCH', body: { name: `${value}!` } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.data).toMatchObject({ name: `${value}!`, sku: value, category: value });
    const stock = await call(`/stock/${id}`);
    expect(stock.status, stock.text).toBe(200);
    expect(stock.json.data).toMatchObject({ product_name: `${value}!`, sku: value });
    // the same sku again is a duplicate, however it is spelled in SQL
    const again = await call('/admin/products', { admin: true, body: { name: value, sku: value, price: 1 } });
    expectError(again, 422, 'VALIDATION_FAILED');
    expect(again.json.errors).toHaveProperty('sku');
  });

  it('categories with metacharacters are listed verbatim by GET /stock/categories', async () => {
    const res = await call('/stock/categories');
    expect(res.status).toBe(200);
    const categories = res.json.data.map((c: { category: string }) => c.category);
    for (const value of META) expect(categories).toContain(value);
  });

  it('stock items (JSON and text/plain uploads) are delivered and exported verbatim', async () => {
    // A stock item may not hold a control character (NUL...): test/catalogue/stock-item-rules.test.ts refuses those.
    const items = META.filter((m) => !/\p{Cc}/u.test(m));
    const product = await newProduct({ price: 0.5 });
    const upload = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items } });
    expect(upload.status, upload.text).toBe(201);
    expect(upload.json.data).toMatchObject({ added: items.length, skipped: 0 });
    const textItems = items.map((m) => `${m} (text)`);
    const text = await call(`/admin/products/${product.id}/stock`, { admin: true, body: textItems.join('\n'), headers: { 'Content-Type': 'text/plain' } });
    expect(text.status, text.text).toBe(201);
    expect(text.json.data.added).toBe(items.length);
    // uploading them again skips every one: the duplicate check compares the exact strings
    const repeat = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items } });
    expect(repeat.json.data).toMatchObject({ added: 0, skipped: items.length });

    const order = await buy(user, product.id, items.length * 2);
    expect(order.status, order.text).toBe(201);
    expect([...order.json.data.stock_items].sort()).toEqual([...items, ...textItems].sort());
    const exported = await call(`/orders/${order.json.data.id}/export`, { key: user.key });
    expect(exported.status).toBe(200);
    expect(exported.text.split('\n').slice(0, -1).sort()).toEqual([...items, ...textItems].sort());
  });

  it.each(META)('balance adjustment description %j', async (description) => {
    const res = await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 0.01, description } });
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.description).toBe(description);
    const listed = await call('/wallet/transactions?per_page=1', { key: user.key });
    expect(listed.json.data[0].description).toBe(description);
  });

  it('a webhook transaction_id with metacharacters is stored verbatim', async () => {
    for (const value of META.slice(0, 4)) {
      const deposit = await newDeposit(user, { amount: 1 });
      const signed = await signedWebhook('gateway_one', { deposit_id: deposit.deposit_id, status: 'paid', amount: 1, transaction_id: value });
      const res = await raw('/webhooks/gateway_one', { headers: signed.headers, body: signed.body });
      expect(res.status, res.text).toBe(200);
      const row = await env.DB.prepare('SELECT transaction_id AS t FROM deposits WHERE id = ?').bind(deposit.deposit_id).first<{ t: string }>();
      expect(row!.t).toBe(value);
    }
  });

  it('metacharacters in path ids and query parameters are validation errors, never SQL', async () => {
    for (const value of META) {
      const encoded = encodeURIComponent(value);
      for (const path of [`/orders/${encoded}`, `/orders?page=${encoded}`, `/wallet/transactions?per_page=${encoded}`, `/api-keys/${encoded}`]) {
        const res = await call(path, { key: user.key, method: path.startsWith('/api-keys') ? 'DELETE' : 'GET' });
        expect([404, 422], `${path}: ${res.text}`).toContain(res.status);
      }
      expectError(await call(`/stock/check?ids=${encoded}`), 422, 'VALIDATION_FAILED');
      expect([404, 422]).toContain((await call(`/stock/${encoded}`)).status);
    }
  });

  it('every table is still there, unchanged in shape, with only the rows the tests added', async () => {
    expect(await schemaOf()).toEqual(schemaBefore);
    const after = await counts();
    expect(after.users).toBe(countsBefore.users);
    expect(after.orders).toBe(countsBefore.orders + 1);
    expect(after.products).toBeGreaterThanOrEqual(countsBefore.products + META.length);
    expect(after.api_keys).toBe(countsBefore.api_keys + META.length);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Admin routes without ADMIN_TOKEN
// ---------------------------------------------------------------------------------------------------------------

describe('admin routes without a configured ADMIN_TOKEN', () => {
  it('answer 401 to every request, whatever Authorization says, and write nothing', async () => {
    const doc = (await (await SELF.fetch(`${BASE}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const adminRoutes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v2/admin/'))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, '1')] as const));
    expect(adminRoutes.length).toBeGreaterThanOrEqual(6);
    const user = await newUser();
    const app = createApp();
    const before = await snapshot();
    const bodies = { name: 'X', email: 'no-token@example.com', password: 'long enough', amount: 5, description: 'x', sku: 'NT', price: 1, items: ['a'] };
    for (const token of [undefined, '']) {
      for (const authorization of [undefined, 'Bearer ', 'Bearer undefined', 'Bearer null', `Bearer ${ADMIN_TOKEN}`, `Bearer ${user.key}`]) {
        for (const [method, path] of adminRoutes) {
          const headers: Record<string, string> = { 'Content-Type': 'application/json' };
          if (authorization !== undefined) headers.Authorization = authorization;
          const sent = method === 'GET' ? undefined : JSON.stringify(bodies);
          const res = await app.request(`http://localhost${path}`, { method, headers, body: sent }, { ...env, ADMIN_TOKEN: token });
          const body = (await res.json()) as Record<string, unknown>;
          expect(res.status, `${String(token)} / ${authorization} / ${method} ${path}`).toBe(401);
          expect(body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
        }
      }
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    // the same app with the token configured lets the operator in: the 401s above come from the missing token
    const res = await app.request(
      `${BASE}/admin/products`,
      { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ADMIN_TOKEN}` }, body: JSON.stringify({ name: 'ok', sku: unique('OK'), price: 1 }) },
      env,
    );
    expect(res.status).toBe(201);
  });
});

