import { afterEach, describe, expect, it } from 'vitest';
import { useInvocationOptions } from './contract';
import { buy, call, newDeposit, newProduct, newUser, type CallOptions, type TestUser } from './helpers';
import type { RoundTrip } from './production-d1';
import { measure } from './measure';
import { idempotencyKeyIn, signedInUser, visit, type PageOptions } from './dashboard-helpers';
import { CONSOLE_PAGES, CONSOLE_POSTS, consoleFixtures, newOperator } from './console-helpers';

// Every authenticated request costs one D1 round trip on success (auth travels in the request's own batch), and a
// GET none on the primary (its batch may be served by a nearby replica). Latency from far away is round trips times
// distance, so this table keeps a later change from quietly adding one.

let restore: (() => void) | undefined;
afterEach(() => restore?.());

interface Case {
  name: string;
  expectStatus: number;
  trips: number;
  toPrimary: number;
  /** Round trips to the sandbox as well, with a live key (revoking a live key revokes its test children there). */
  sandboxTrips?: number;
  request: (user: TestUser, ctx: Fixtures) => [string, CallOptions];
}

interface Fixtures {
  productId: number;
  orderId: number;
  depositId: number;
  spareKeyId: number;
  /** The order's invoice. */
  documentId: number;
}

async function fixtures(user: TestUser): Promise<Fixtures> {
  const product = await newProduct({ price: 1, stock: 20 });
  const order = await buy(user, product.id, 1);
  const deposit = await newDeposit(user);
  const spare = await call('/api-keys', { key: user.key, body: { name: 'spare' } });
  const [invoice] = (await call('/documents?type=invoice', { key: user.key })).json.data;
  return { productId: product.id, orderId: order.json.data.id, depositId: deposit.deposit_id, spareKeyId: spare.json.data.id, documentId: invoice.id };
}

const GET = (path: string) => (user: TestUser): [string, CallOptions] => [path, { key: user.key }];

const cases: Case[] = [
  { name: 'GET /wallet/balance', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/wallet/balance') },
  { name: 'GET /wallet/transactions', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/wallet/transactions') },
  { name: 'GET /wallet/deposits', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/wallet/deposits') },
  {
    name: 'GET /wallet/deposits/{id}/status',
    expectStatus: 200,
    trips: 1,
    toPrimary: 0,
    request: (u, f) => [`/wallet/deposits/${f.depositId}/status`, { key: u.key }],
  },
  { name: 'GET /user/profile', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/user/profile') },
  { name: 'GET /user/dashboard', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/user/dashboard') },
  { name: 'GET /orders', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/orders') },
  { name: 'GET /orders/{id}', expectStatus: 200, trips: 1, toPrimary: 0, request: (u, f) => [`/orders/${f.orderId}`, { key: u.key }] },
  {
    name: 'GET /orders/{id}/export',
    expectStatus: 200,
    trips: 1,
    toPrimary: 0,
    request: (u, f) => [`/orders/${f.orderId}/export`, { key: u.key }],
  },
  { name: 'GET /api-keys', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/api-keys') },
  { name: 'GET /documents', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/documents?type=invoice') },
  { name: 'GET /documents/{id}', expectStatus: 200, trips: 1, toPrimary: 0, request: (u, f) => [`/documents/${f.documentId}`, { key: u.key }] },
  { name: 'GET /documents/{id}/html', expectStatus: 200, trips: 1, toPrimary: 0, request: (u, f) => [`/documents/${f.documentId}/html`, { key: u.key }] },
  { name: 'GET /user/billing', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/user/billing') },
  { name: 'PUT /user/billing', expectStatus: 200, trips: 1, toPrimary: 1, request: (u) => ['/user/billing', { key: u.key, method: 'PUT', body: { name: 'Billed', country: 'DE' } }] },
  { name: 'GET /user/referral', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/user/referral') },
  { name: 'GET /user/referral/earnings', expectStatus: 200, trips: 1, toPrimary: 0, request: GET('/user/referral/earnings') },
  {
    // Refused (nothing available), explained by a read of the same batch.
    name: 'POST /user/referral/transfer',
    expectStatus: 400,
    trips: 1,
    toPrimary: 1,
    request: (u) => ['/user/referral/transfer', { key: u.key, method: 'POST' }],
  },
  {
    name: 'POST /orders',
    expectStatus: 201,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/orders', { key: u.key, body: { product_id: f.productId, quantity: 1 } }],
  },
  {
    name: 'POST /orders with Idempotency-Key',
    expectStatus: 201,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/orders', { key: u.key, body: { product_id: f.productId, quantity: 1 }, headers: { 'Idempotency-Key': `k-${u.id}` } }],
  },
  {
    name: 'POST /orders refused (insufficient balance), reason included',
    expectStatus: 400,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/orders', { key: u.key, body: { product_id: f.productId, quantity: 1000 } }],
  },
  {
    name: 'GET /orders/quote',
    expectStatus: 200,
    trips: 1,
    toPrimary: 0,
    request: (u, f) => [`/orders/quote?product_id=${f.productId}&quantity=2`, { key: u.key }],
  },
  {
    name: 'POST /orders refused (coupon invalid), reason included',
    expectStatus: 400,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/orders', { key: u.key, body: { product_id: f.productId, quantity: 1, coupon: 'NO-SUCH-COUPON' } }],
  },
  {
    name: 'POST /orders/{id}/cancel',
    expectStatus: 200,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => [`/orders/${f.orderId}/cancel`, { key: u.key, method: 'POST' }],
  },
  {
    name: 'POST /wallet/deposit',
    expectStatus: 200,
    trips: 1,
    toPrimary: 1,
    request: (u) => ['/wallet/deposit', { key: u.key, body: { amount: 10, gateway: 'gateway_one' } }],
  },
  {
    name: 'POST /wallet/deposit with an order',
    expectStatus: 200,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/wallet/deposit', { key: u.key, body: { amount: 10, gateway: 'gateway_one', order: { product_id: f.productId, quantity: 1, expected_total: 1 } } }],
  },
  {
    name: 'PUT /user/profile',
    expectStatus: 200,
    trips: 1,
    toPrimary: 1,
    request: (u) => ['/user/profile', { key: u.key, method: 'PUT', body: { name: 'Renamed' } }],
  },
  {
    // An email change proves the key and compares the address first: the per-user limit needs the user's id.
    name: 'PUT /user/profile (a new email)',
    expectStatus: 200,
    trips: 2,
    toPrimary: 2,
    request: (u) => ['/user/profile', { key: u.key, method: 'PUT', body: { email: `new-${u.email}` } }],
  },
  { name: 'POST /api-keys', expectStatus: 201, trips: 1, toPrimary: 1, request: (u) => ['/api-keys', { key: u.key, body: { name: 'another' } }] },
  {
    name: 'DELETE /api-keys/{id}',
    expectStatus: 200,
    trips: 1,
    toPrimary: 1,
    sandboxTrips: 1,
    request: (u, f) => [`/api-keys/${f.spareKeyId}`, { key: u.key, method: 'DELETE' }],
  },
  {
    name: 'POST /orders with EMAIL_VERIFICATION=required (the gate and its explaining read in the batch)',
    expectStatus: 201,
    trips: 1,
    toPrimary: 1,
    request: (u, f) => ['/orders', { key: u.key, body: { product_id: f.productId, quantity: 1 }, vars: { EMAIL_VERIFICATION: 'required' } }],
  },
  {
    // Public: the same batch whether or not the account exists.
    name: 'POST /auth/forgot-password',
    expectStatus: 202,
    trips: 1,
    toPrimary: 1,
    request: (u) => ['/auth/forgot-password', { body: { email: u.email } }],
  },
  {
    // Documented exception: the stored hash is read and verified in the worker (PBKDF2), then replaced.
    name: 'POST /user/password',
    expectStatus: 200,
    trips: 2,
    toPrimary: 2,
    request: (u) => [
      '/user/password',
      { key: u.key, body: { current_password: 'correct horse battery', new_password: 'new password 1', new_password_confirmation: 'new password 1' } },
    ],
  },
];

describe('D1 round trips per request', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.trips} round trip(s), ${c.toPrimary} to the primary`, async () => {
      const user = await newUser({ balance: 50 });
      const f = await fixtures(user);
      const [path, options] = c.request(user, f);
      const { status, trips } = await measure(path, options);
      expect(status).toBe(c.expectStatus);
      const live = trips.filter((t) => !t.sandbox);
      expect(live.length, JSON.stringify(trips)).toBe(c.trips);
      expect(live.filter((t) => t.toPrimary).length).toBe(c.toPrimary);
      expect(trips.length - live.length, JSON.stringify(trips)).toBe(c.sandboxTrips ?? 0);
    });
  }

  it('an idempotent replay costs at most two round trips', async () => {
    const user = await newUser({ balance: 50 });
    const { productId } = await fixtures(user);
    const options = { key: user.key, body: { product_id: productId, quantity: 2 }, headers: { 'Idempotency-Key': 'replay-me' } };
    expect((await call('/orders', options)).status).toBe(201);
    const replay = await measure('/orders', options);
    expect(replay.status).toBe(201);
    expect(replay.trips.length).toBeLessThanOrEqual(2);
  });

  it("a key's first request writes last_used_at after its response: a trip no client waits for", async () => {
    const user = await newUser();
    const { status, trips, after } = await measure('/wallet/balance', { key: user.key });
    expect(status).toBe(200);
    expect(trips.length).toBe(1);
    expect(after.map((t) => [t.toPrimary, t.writes])).toEqual([[true, true]]);
  });

  it('a request with a bad key makes at most one round trip and answers 401', async () => {
    const { status, trips } = await measure('/wallet/balance', { key: `sk_live_${'x'.repeat(40)}` });
    expect(status).toBe(401);
    expect(trips.length).toBe(1);
  });

  it('public GET /stock on a cache miss reads a replica once; a hit reads nothing', async () => {
    const product = await newProduct({ price: 1, stock: 1 });
    const miss = await measure(`/stock/${product.id}`, {});
    expect(miss.status).toBe(200);
    expect(miss.trips.map((t) => t.toPrimary)).toEqual([false]);
    const hit = await measure(`/stock/${product.id}`, {});
    expect(hit.trips).toEqual([]);
  });

  it('concurrent misses of /stock share one read: an entry that expires under polling storefronts is refilled once', async () => {
    await newProduct({ price: 1, stock: 1 }); // a catalogue change: the list is purged
    const trips: RoundTrip[] = [];
    restore = useInvocationOptions(() => ({ record: (trip) => trips.push(trip), responded: () => {} }));
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => call('/stock')));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((a) => JSON.stringify(a.json.data))).size).toBe(1);
    } finally {
      restore();
    }
    expect(trips.length).toBe(1);
  });

  it('the embeddable card: one replica read on a miss, none on a hit', async () => {
    const product = await newProduct({ price: 1, stock: 1 });
    const path = `/../../embed/products/${product.id}`; // call() prefixes /api/v2
    const miss = await measure(path, {});
    expect(miss.status).toBe(200);
    expect(miss.trips.map((t) => t.toPrimary)).toEqual([false]);
    expect((await measure(path, {})).trips).toEqual([]);
  });

  it('the public product page /shop/{id}: one replica read on a miss, none on a hit', async () => {
    const product = await newProduct({ price: 1, stock: 1 });
    const path = `/../../shop/${product.id}`; // call() prefixes /api/v2
    const miss = await measure(path, {});
    expect(miss.status).toBe(200);
    expect(miss.trips.map((t) => t.toPrimary)).toEqual([false]);
    expect((await measure(path, {})).trips).toEqual([]);
  });

  it('an image: one write batch, and one read more when it replaced or removed another (is that one still used?)', async () => {
    const product = await newProduct({ price: 1, stock: 1 });
    const png = (tail: number) => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, tail]);
    const put = (tail: number) => measure(`/admin/products/${product.id}/image`, { method: 'PUT', admin: true, body: png(tail), headers: { 'Content-Type': 'image/png' } });
    const first = await put(1);
    expect(first.status).toBe(200);
    expect(first.trips.map((t) => t.toPrimary)).toEqual([true]);
    expect((await put(2)).trips.length).toBe(2);
    expect((await measure(`/admin/products/${product.id}/image`, { method: 'DELETE', admin: true })).trips.length).toBe(2);
  });
});

describe('D1 round trips per dashboard page', () => {
  // A page proves its session in its own batch, like an API key: one round trip a page (on the primary: the page a
  // form redirects to must show what the form did). A form post is one write batch, then a redirect.
  async function measurePage(path: string, options: PageOptions) {
    const trips: RoundTrip[] = [];
    let responded = false;
    restore = useInvocationOptions(() => ({ record: (trip) => !responded && trips.push(trip), responded: () => (responded = true) }));
    try {
      return { ...(await visit(path, options)), trips };
    } finally {
      restore();
    }
  }

  const pages: Array<[string, (f: Fixtures) => string]> = [
    ['/dashboard', () => '/dashboard'],
    ['/dashboard/keys', () => '/dashboard/keys'],
    ['/dashboard/wallet', () => '/dashboard/wallet'],
    ['/dashboard/orders', () => '/dashboard/orders'],
    ['/dashboard/orders/{id}', (f) => `/dashboard/orders/${f.orderId}`],
    ['/dashboard/orders/{id}/export', (f) => `/dashboard/orders/${f.orderId}/export`],
    ['/dashboard/orders/{id}/cancel/confirm', (f) => `/dashboard/orders/${f.orderId}/cancel/confirm`],
    ['/dashboard/wallet?deposit={id}', (f) => `/dashboard/wallet?deposit=${f.depositId}`],
    ['/dashboard/shop', () => '/dashboard/shop'],
    ['/dashboard/shop?category=x&q=y', () => '/dashboard/shop?category=x&q=y'],
    ['/dashboard/shop/{id}', (f) => `/dashboard/shop/${f.productId}`],
    ['/dashboard/profile', () => '/dashboard/profile'],
    ['/dashboard/referrals', () => '/dashboard/referrals'],
  ];
  for (const [name, path] of pages) {
    it(`GET ${name}: one round trip`, async () => {
      const user = await signedInUser({ balance: 50 });
      const f = await fixtures(user);
      const res = await measurePage(path(f), { cookie: user.cookie });
      expect(res.status).toBe(200);
      // The keys page also lists the test keys: a second read, in the test-mode sandbox (one per database).
      const live = res.trips.filter((t) => !t.sandbox);
      expect(live.length, JSON.stringify(res.trips)).toBe(1);
      expect(res.trips.length - live.length).toBe(name === '/dashboard/keys' ? 1 : 0);
    });
  }

  const forms: Array<[string, (f: Fixtures, page: string) => [string, Record<string, string>]]> = [
    ['Buy', (f, page) => ['/dashboard/shop', { product_id: String(f.productId), quantity: '1', idempotency_key: idempotencyKeyIn(page) }]],
    ['Add funds', (_f, page) => ['/dashboard/wallet/deposit', { amount: '10', gateway: 'gateway_one', idempotency_key: idempotencyKeyIn(page) }]],
    ['Cancel order', (f) => [`/dashboard/orders/${f.orderId}/cancel`, { idempotency_key: 'cancel-once' }]],
    [
      'Pay and buy',
      (f, page) => [
        `/dashboard/shop/${f.productId}/pay`,
        { quantity: '1', expected_total: '1.00', amount: '10', gateway: 'gateway_one', idempotency_key: idempotencyKeyIn(page) },
      ],
    ],
    ['Revoke', (f) => [`/dashboard/keys/${f.spareKeyId}/revoke`, {}]],
    ['profile', () => ['/dashboard/profile', { name: 'Renamed' }]],
  ];
  it('"Forgot password?": the page reads nothing, its post is one round trip whether or not the account exists', async () => {
    expect((await measurePage('/dashboard/forgot-password', {})).trips).toEqual([]);
    const user = await newUser();
    for (const email of [user.email, `nobody-${user.id}@example.com`]) {
      const res = await measurePage('/dashboard/forgot-password', { form: { email } });
      expect(res.status).toBe(200);
      expect(res.trips.length, JSON.stringify(res.trips)).toBe(1);
    }
  });

  it('a form post with an ended session: one round trip (its batch proves nothing), then sign-in', async () => {
    const user = await signedInUser({ balance: 50 });
    const f = await fixtures(user);
    await visit('/dashboard/sign-out', { cookie: user.cookie, form: {} });
    const res = await measurePage('/dashboard/shop', { cookie: user.cookie, form: { product_id: String(f.productId), quantity: '1' } });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/sign-in?next=%2Fdashboard%2Fshop');
    expect(res.trips.length, JSON.stringify(res.trips)).toBe(1);
  });

  it("a checkout's way back (/dashboard/wallet/deposits/{id}): one round trip, then a redirect", async () => {
    const user = await signedInUser({ balance: 50 });
    const f = await fixtures(user);
    const res = await measurePage(`/dashboard/wallet/deposits/${f.depositId}`, { cookie: user.cookie });
    expect(res.status).toBe(303);
    expect(res.trips.length, JSON.stringify(res.trips)).toBe(1);
  });

  it('the review (before Confirm purchase): one round trip, nothing written', async () => {
    const user = await signedInUser({ balance: 50 });
    const f = await fixtures(user);
    const res = await measurePage(`/dashboard/shop/${f.productId}/review`, { cookie: user.cookie, form: { quantity: '2', idempotency_key: 'review-once' } });
    expect(res.status, res.text).toBe(200);
    expect(res.trips.length, JSON.stringify(res.trips)).toBe(1);
  });

  for (const [name, form] of forms) {
    it(`the ${name} form: one round trip, then a redirect`, async () => {
      const user = await signedInUser({ balance: 50 });
      const f = await fixtures(user);
      const formPage = name === 'Buy' ? '/dashboard/shop' : '/dashboard/wallet';
      const [path, fields] = form(f, (await visit(formPage, { cookie: user.cookie })).text);
      const res = await measurePage(path, { cookie: user.cookie, form: fields });
      expect(res.status, res.text).toBe(303);
      // Revoking a live key also revokes its test children, in the sandbox: one round trip there too.
      const live = res.trips.filter((t) => !t.sandbox);
      expect(live.length, JSON.stringify(res.trips)).toBe(1);
      expect(res.trips.length - live.length).toBe(name === 'Revoke' ? 1 : 0);
    });
  }
});

describe('D1 round trips of the operator console and its JSON twin', () => {
  // The console is the dashboard's second part: a page is one batch whose first statement proves the session and
  // says its user's role; a form is one write batch (the proof first, the audit entry inside).
  async function measureConsole(path: string, options: PageOptions) {
    const trips: RoundTrip[] = [];
    let responded = false;
    restore = useInvocationOptions(() => ({ record: (trip) => !responded && trips.push(trip), responded: () => (responded = true) }));
    try {
      return { ...(await visit(path, options)), trips };
    } finally {
      restore();
    }
  }

  it('every admin read: one round trip', async () => {
    const user = await newUser();
    const order = await (async () => {
      const product = await newProduct({ price: 1, stock: 1 });
      await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 1, description: 'x' } });
      return (await buy(user, product.id)).json.data;
    })();
    const paths = ['/admin/users', `/admin/users/${user.id}`, '/admin/orders', `/admin/orders/${order.id}`, `/admin/orders?q=${order.order_number}`,
      '/admin/products', '/admin/deposits', '/admin/stats/sales', '/admin/audit-log', `/admin/emails?to=${encodeURIComponent(user.email)}`, '/admin/coupons',
      `/admin/orders?q=demo&from=2020-01-01&to=2099-12-31`, '/admin/deposits?from=2020-01-01', '/admin/audit-log?to=2099-12-31', '/admin/gateways',
      '/admin/exports/orders.csv', '/admin/exports/deposits.csv', '/admin/exports/transactions.csv?from=2020-01-01', '/admin/documents',
      '/admin/settings/invoicing', '/admin/exports/documents.csv?from=2020-01-01', '/admin/settings/referrals'];
    for (const path of paths) {
      const { status, trips } = await measure(path, { admin: true });
      expect(status, path).toBe(200);
      expect(trips.length, path).toBe(1);
    }
  });

  it('variants: GET /admin/products/{id}, POST /admin/products/{id}/variants, PATCH /admin/variants/{id}, an upload to one and a purchase of one: one round trip each', async () => {
    const product = await newProduct({ price: 2, stock: 1 });
    const user = await newUser({ balance: 10 });
    const added = await measure(`/admin/products/${product.id}/variants`, { admin: true, body: { name: 'Big', sku: `RT-V-${product.id}`, price: 5 } });
    expect(added.status).toBe(201);
    const variantId = (await call(`/admin/products/${product.id}`, { admin: true })).json.data.variants[1].id;
    const steps = [
      await measure(`/admin/products/${product.id}`, { admin: true }),
      await measure(`/admin/variants/${variantId}`, { method: 'PATCH', admin: true, body: { price: 4 } }),
      await measure(`/admin/products/${product.id}/stock`, { admin: true, body: { items: ['RT-V-1'], variant_id: variantId } }),
      await measure('/orders', { key: user.key, body: { product_id: product.id, variant_id: variantId, quantity: 1 } }),
    ];
    expect(steps.map((m) => m.status)).toEqual([200, 200, 201, 201]);
    for (const m of [added, ...steps]) expect(m.trips.length).toBe(1);
  });

  it('coupons: each admin write and read one round trip; a purchase with a coupon still one', async () => {
    const code = `RT-${crypto.randomUUID().slice(0, 8)}`.toUpperCase();
    const created = await measure('/admin/coupons', { admin: true, body: { code, percent_off: 10, max_per_user: null } });
    expect(created.status).toBe(201);
    expect(created.trips.length).toBe(1);
    const id = (await call(`/admin/coupons?per_page=1`, { admin: true })).json.data[0].id;
    const read = await measure(`/admin/coupons/${id}`, { admin: true });
    expect([read.status, read.trips.length]).toEqual([200, 1]);
    const patched = await measure(`/admin/coupons/${id}`, { admin: true, method: 'PATCH', body: { max_redemptions: 10 } });
    expect([patched.status, patched.trips.length]).toEqual([200, 1]);
    const user = await newUser();
    await call(`/admin/users/${user.id}/balance-adjustments`, { admin: true, body: { amount: 5, description: 'x' } });
    const product = await newProduct({ price: 1, stock: 2 });
    const bought = await measure('/orders', { key: user.key, body: { product_id: product.id, quantity: 1, coupon: code, expected_total: 0.9 } });
    expect(bought.status).toBe(201);
    expect(bought.trips.length).toBe(1);
    expect(bought.trips.filter((trip) => trip.toPrimary).length).toBe(1);
  });

  it("the seller's invoicing settings: the write one round trip", async () => {
    const res = await measure('/admin/settings/invoicing', { admin: true, method: 'PUT', body: { legal_name: 'Round Trip Ltd', tax_mode: 'none' } });
    expect([res.status, res.trips.length]).toEqual([200, 1]);
  });

  it('every console page: one round trip, the operator proof inside it', async () => {
    const operator = await newOperator();
    const f = await consoleFixtures();
    for (const [name, path] of CONSOLE_PAGES) {
      const res = await measureConsole(path(f), { cookie: operator.cookie });
      expect(res.status, name).toBe(200);
      expect(res.trips.length, name).toBe(1);
    }
  });

  it('every console form: one round trip, then a redirect (the reset link answers its page: a second)', async () => {
    const operator = await newOperator();
    const f = await consoleFixtures();
    for (const [name, post] of CONSOLE_POSTS) {
      const [path, form] = post(f);
      const res = await measureConsole(path, { cookie: operator.cookie, form });
      // The reset link and Check connection answer their page (a second round trip; Check connection proves the
      // operator before it calls the vendor, then reads the page).
      const answersPage = name === 'Create password reset link' || name === 'Check connection';
      expect(res.status, `${name}: ${res.text.slice(0, 300)}`).toBe(answersPage ? 200 : 303);
      // Mark paid reads the deposit first (as the admin API's mark-paid always has), then credits it.
      const live = res.trips.filter((t) => !t.sandbox);
      expect(live.length, name).toBe(answersPage || name === 'Mark paid' ? 2 : 1);
      // Disable and Enable reach the sandbox too, so a test key of a disabled user stops at once.
      expect(res.trips.length - live.length, name).toBe(name === 'Disable account' || name === 'Enable account' ? 1 : 0);
    }
  });

  it('a non-operator on a console page: one round trip, 404', async () => {
    const user = await signedInUser();
    const res = await measureConsole('/dashboard/console', { cookie: user.cookie });
    expect(res.status).toBe(404);
    expect(res.trips.length).toBe(1);
  });
});

describe('D1 round trips with a test key (test mode: the sandbox alone)', () => {
  // Cases that depend on a live-only setting (mail, the sign-in password, the account's balance) are left out.
  // A new email is refused with a test key (the sandbox's email is the live one's, read-only; test-mode-tighter tests it).
  const LIVE_ONLY = /insufficient balance|forgot-password|EMAIL_VERIFICATION|\/user\/password|a new email/;
  async function testModeUser(): Promise<TestUser> {
    const user = await newUser();
    const created = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test' } });
    expect(created.status, created.text).toBe(201);
    return { ...user, key: created.json.data.key };
  }
  for (const c of cases.filter((c) => !LIVE_ONLY.test(c.name))) {
    it(`${c.name}: ${c.trips} round trip(s) to the sandbox, none to the live database`, async () => {
      const user = await testModeUser();
      const f = await fixtures(user);
      const [path, options] = c.request(user, f);
      const { status, trips } = await measure(path, options);
      expect(status).toBe(c.expectStatus);
      expect(trips.length, JSON.stringify(trips)).toBe(c.trips);
      expect(trips.every((t) => t.sandbox)).toBe(true);
      expect(trips.filter((t) => t.toPrimary).length).toBe(c.toPrimary);
    });
  }

  it('a test key from a live key: two round trips, one per database (the documented exception)', async () => {
    const user = await newUser();
    const { status, trips } = await measure('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test' } });
    expect(status).toBe(201);
    expect(trips.map((t) => Boolean(t.sandbox))).toEqual([false, true]);
  });

  it('revoking a test key with a live key (?mode=test): two round trips, one per database', async () => {
    const user = await newUser();
    const created = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test' } });
    const { status, trips } = await measure(`/api-keys/${created.json.data.id}?mode=test`, { key: user.key, method: 'DELETE' });
    expect(status).toBe(200);
    expect(trips.map((t) => Boolean(t.sandbox))).toEqual([false, true]);
  });

  it("the operator played in test mode: a claim's resolution and an order's refund are one round trip each, to the sandbox", async () => {
    const user = await testModeUser();
    const { orderId } = await fixtures(user);
    const refunded = await measure(`/test/orders/${orderId}/refund`, { key: user.key, body: { amount: 0.01, reason: 'test' } });
    expect(refunded.status).toBe(200);
    expect(refunded.trips.length, JSON.stringify(refunded.trips)).toBe(1);
    expect(refunded.trips.every((t) => t.sandbox)).toBe(true);
    const rejected = await measure('/test/claims/999999/reject', { key: user.key, body: { note: 'no such claim' } });
    expect(rejected.status).toBe(404);
    expect(rejected.trips.length, JSON.stringify(rejected.trips)).toBe(1);
  });

  it('the test gateway: pay, fail and expire are one round trip each (the credit batch reads the deposit itself); a reset one', async () => {
    const user = await testModeUser();
    const { depositId } = await fixtures(user);
    const paid = await measure(`/test/deposits/${depositId}/pay`, { key: user.key, method: 'POST' });
    expect(paid.status).toBe(200);
    expect(paid.trips.length, JSON.stringify(paid.trips)).toBe(1);
    expect(paid.trips.every((t) => t.sandbox)).toBe(true);
    for (const outcome of ['fail', 'expire']) {
      const other = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } });
      const closed = await measure(`/test/deposits/${other.json.data.deposit_id}/${outcome}`, { key: user.key, method: 'POST' });
      expect(closed.status).toBe(200);
      expect(closed.trips.length, JSON.stringify(closed.trips)).toBe(1);
      expect(closed.trips.every((t) => t.sandbox)).toBe(true);
    }
    const reset = await measure('/test/reset', { key: user.key, method: 'POST' });
    expect(reset.status).toBe(200);
    expect(reset.trips.length).toBe(1);
    expect(reset.trips.every((t) => t.sandbox)).toBe(true);
  });
});

describe('D1 round trips of narrowed API keys', () => {
  // Scope, address, expiry and the daily cap ride in the request's own batch: a narrowed key, allowed or refused,
  // still costs one round trip.
  async function narrowed(limits: Record<string, unknown>) {
    const user = await newUser({ balance: 50 });
    const { productId } = await fixtures(user);
    const created = await call('/api-keys', { key: user.key, body: { name: 'narrow', ...limits } });
    expect(created.status, created.text).toBe(201);
    return { key: created.json.data.key as string, productId };
  }
  const here = { 'CF-Connecting-IP': '203.0.113.5' };
  const narrowCases: Array<[string, Record<string, unknown>, number, (key: string, productId: number) => [string, CallOptions]]> = [
    ['purchase within scope, address and cap', { scopes: ['orders'], allowed_ips: ['203.0.113.0/24'], spend_limit_per_day: 10 }, 201,
      (key, productId) => ['/orders', { key, headers: here, body: { product_id: productId, quantity: 1 } }]],
    ['purchase over the daily cap (403 SPEND_LIMIT_REACHED)', { spend_limit_per_day: 1.5 }, 403,
      (key, productId) => ['/orders', { key, body: { product_id: productId, quantity: 2 } }]],
    ['purchase without the scope (403 INSUFFICIENT_SCOPE)', { scopes: ['read'] }, 403,
      (key, productId) => ['/orders', { key, body: { product_id: productId, quantity: 1 } }]],
    ['GET from outside the allowed IPs (403 IP_NOT_ALLOWED)', { allowed_ips: ['10.0.0.0/8'] }, 403, (key) => ['/wallet/balance', { key, headers: here }]],
    ['POST /api-keys wider than its maker (403 INSUFFICIENT_SCOPE)', { scopes: ['read', 'keys'] }, 403,
      (key) => ['/api-keys', { key, body: { name: 'wider', scopes: ['orders'] } }]],
  ];
  for (const [name, limits, status, request] of narrowCases) {
    it(`${name}: one round trip`, async () => {
      const { key, productId } = await narrowed(limits);
      const { status: answered, trips } = await measure(...request(key, productId));
      expect(answered).toBe(status);
      expect(trips.length, JSON.stringify(trips)).toBe(1);
    });
  }
});

describe('D1 round trips: after the sale', () => {
  async function claimFixture() {
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 1, stock: 5 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 24 } });
    const order = (await buy(user, product.id, 2)).json.data;
    const claim = (await call(`/orders/${order.id}/items/0/report`, { key: user.key, body: { reason: 'broken' } })).json.data;
    return { user, product, order, claim };
  }

  const oneTrip = async (path: string, options: CallOptions, status: number) => {
    const { status: got, trips } = await measure(path, options);
    expect(got).toBe(status);
    expect(trips.length, JSON.stringify(trips)).toBe(1);
    expect(trips.filter((t) => t.toPrimary).length).toBe(options.method === undefined && options.body === undefined ? 0 : 1);
  };

  it('POST /orders/{id}/items/{index}/report: 1, and its refusal 1', async () => {
    const { user, order } = await claimFixture();
    await oneTrip(`/orders/${order.id}/items/1/report`, { key: user.key, body: { reason: 'also broken' } }, 201);
    await oneTrip(`/orders/${order.id}/items/1/report`, { key: user.key, body: { reason: 'again' } }, 409);
  });

  it('the operator: claims list and resolutions, refunds, holds, blocklist: 1 each', async () => {
    const { user, order, claim } = await claimFixture();
    const trips = async (path: string, options: CallOptions) => (await measure(path, { admin: true, ...options })).trips.length;
    expect(await trips('/admin/claims?status=open', {})).toBe(1);
    expect(await trips(`/admin/claims/${claim.id}/replace`, { method: 'POST' })).toBe(1);
    const second = (await call(`/orders/${order.id}/items/1/report`, { key: user.key, body: { reason: 'x' } })).json.data;
    expect(await trips(`/admin/claims/${second.id}/refund`, { method: 'POST' })).toBe(1);
    expect(await trips(`/admin/claims/${second.id}/reject`, { body: { note: 'no' } })).toBe(1);
    expect(await trips(`/admin/orders/${order.id}/refund`, { body: { amount: 0.5, reason: 'sorry' } })).toBe(1);
    expect(await trips(`/admin/users/${user.id}/hold`, { body: { reason: 'look' } })).toBe(1);
    expect(await trips(`/admin/users/${user.id}/hold`, { method: 'DELETE' })).toBe(1);
    expect(await trips('/admin/blocklist', {})).toBe(1);
    const rule = await call('/admin/blocklist', { admin: true, body: { type: 'email', value: `rt-${user.id}@example.com` } });
    expect(await trips(`/admin/blocklist/${rule.json.data.id}`, { method: 'DELETE' })).toBe(1);
  });

  it('a purchase and a deposit refused by a hold or the blocklist: 1 (the rule\'s hits after the response)', async () => {
    const { user, product } = await claimFixture();
    await call(`/admin/users/${user.id}/hold`, { admin: true, body: { reason: 'look' } });
    await oneTrip('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } }, 403);
    await oneTrip('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } }, 403);
    await call(`/admin/users/${user.id}/hold`, { method: 'DELETE', admin: true });
    const rule = await call('/admin/blocklist', { admin: true, body: { type: 'email', value: user.email } });
    const blocked = await measure('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expect(blocked.status).toBe(403);
    expect(blocked.trips.length).toBe(1);
    expect(blocked.after.filter((t) => t.writes).length).toBeGreaterThanOrEqual(1);
    await call(`/admin/blocklist/${rule.json.data.id}`, { method: 'DELETE', admin: true });
  });
});
