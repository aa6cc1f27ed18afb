import { createExecutionContext, createMessageBatch, env, getQueueResult } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import entry from '../../src/index';
import { runSandboxScheduled } from '../../src/services/sandbox/jobs';
import { refreshSandboxMirror } from '../../src/services/sandbox/mirror';
import type { DeliveryMessage } from '../../src/services/events/delivery';
import { SELF } from '../contract';
import { signedInUser, visit } from '../dashboard-helpers';
import { BASE, buy, call, expectError, fund, newProduct, newUser, restock, unique, type TestUser } from '../helpers';

// Test mode: a sk_test_ key is answered from SANDBOX_DB alone (docs/test-mode.md). Both databases are real local D1.

const sandbox = () => env.SANDBOX_DB!;

async function testKeyFor(user: TestUser, body: Record<string, unknown> = {}): Promise<TestUser> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test', ...body } });
  expect(res.status, res.text).toBe(201);
  return { ...user, key: res.json.data.key };
}

/** A live user with a test key (its sandbox account made by that key's creation). */
async function testUser(balance = 0) {
  const live = await newUser({ balance });
  return { live, test: await testKeyFor(live) };
}

const balance = async (user: TestUser) => (await call('/wallet/balance', { key: user.key })).json.data.balance as number;

async function testDeposit(user: TestUser, amount = 25, gateway = 'gateway_one') {
  const res = await call('/wallet/deposit', { key: user.key, body: { amount, gateway } });
  expect(res.status, res.text).toBe(200);
  return res.json.data as { deposit_id: number; payment_url: string; status: string };
}

describe('test keys', () => {
  it('a live key makes a sk_test_ key; each key lists its own mode only; every key answer says its mode', async () => {
    const live = await newUser();
    const created = await call('/api-keys', { key: live.key, body: { name: 'sandbox', mode: 'test' } });
    expect(created.status, created.text).toBe(201);
    expect(created.json.data.key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    expect(created.json.data.key_preview).toMatch(/^sk_test_\*\*\*\*[0-9A-Za-z]{4}$/);
    expect(created.json.data.mode).toBe('test');
    const test = created.json.data.key as string;

    const liveList = await call('/api-keys', { key: live.key });
    expect(liveList.json.data.map((k: { mode: string }) => k.mode)).toEqual(['live']);
    const testList = await call('/api-keys', { key: test });
    expect(testList.json.data).toHaveLength(1);
    expect(testList.json.data[0]).toMatchObject({ mode: 'test', name: 'sandbox' });

    // A test key makes test keys by default, and never a live one.
    const second = await call('/api-keys', { key: test, body: { name: 'second' } });
    expect(second.status, second.text).toBe(201);
    expect(second.json.data).toMatchObject({ mode: 'test' });
    expect(second.json.data.key).toMatch(/^sk_test_/);
    const wider = await call('/api-keys', { key: test, body: { name: 'live please', mode: 'live' } });
    expectError(wider, 403, 'INSUFFICIENT_SCOPE');
    expect((await call('/api-keys', { key: live.key })).json.data).toHaveLength(1);
  });

  it('5 active keys of each mode', async () => {
    const live = await newUser();
    for (let i = 0; i < 4; i++) expect((await call('/api-keys', { key: live.key, body: { name: `live ${i}` } })).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await call('/api-keys', { key: live.key, body: { name: `test ${i}`, mode: 'test' } })).status).toBe(201);
    expectError(await call('/api-keys', { key: live.key, body: { name: 'sixth test', mode: 'test' } }), 400, 'API_KEY_LIMIT_REACHED');
    expectError(await call('/api-keys', { key: live.key, body: { name: 'sixth live' } }), 400, 'API_KEY_LIMIT_REACHED');
  });

  it("a test key made by a narrowed live key is no wider than it, and a key without the keys scope makes none", async () => {
    const live = await newUser();
    const narrow = await call('/api-keys', { key: live.key, body: { name: 'narrow', scopes: ['read', 'keys'], spend_limit_per_day: 20 } });
    expect(narrow.status, narrow.text).toBe(201);
    const made = await call('/api-keys', { key: narrow.json.data.key, body: { name: 'inherits', mode: 'test' } });
    expect(made.status, made.text).toBe(201);
    expect(made.json.data).toMatchObject({ mode: 'test', scopes: ['read', 'keys'], spend_limit_per_day: 20 });
    expectError(await call('/api-keys', { key: narrow.json.data.key, body: { name: 'wider', mode: 'test', scopes: ['orders'] } }), 403, 'INSUFFICIENT_SCOPE');
    const readOnly = await call('/api-keys', { key: live.key, body: { name: 'read', scopes: ['read'] } });
    expectError(await call('/api-keys', { key: readOnly.json.data.key, body: { name: 'x', mode: 'test' } }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('a revoked test key is 401; a made-up sk_test_ key is 401', async () => {
    const { test } = await testUser();
    const [key] = (await call('/api-keys', { key: test.key })).json.data;
    expect((await call(`/api-keys/${key.id}`, { method: 'DELETE', key: test.key })).status).toBe(200);
    expectError(await call('/wallet/balance', { key: test.key }), 401, 'UNAUTHORIZED');
    expectError(await call('/wallet/balance', { key: `sk_test_${'x'.repeat(40)}` }), 401, 'UNAUTHORIZED');
  });
});

describe('test money', () => {
  it('a sandbox wallet starts with $1,000.00, one adjustment "Test money"; the live wallet is untouched', async () => {
    const { live, test } = await testUser(3);
    expect(await balance(test)).toBe(1000);
    const transactions = (await call('/wallet/transactions', { key: test.key })).json.data;
    expect(transactions).toHaveLength(1);
    expect(transactions[0]).toMatchObject({ type: 'adjustment', amount: 1000, balance_after: 1000, description: 'Test money' });
    expect(await balance(live)).toBe(3);
    // A second test key finds the account as it is: no second test money.
    await testKeyFor(live);
    expect(await balance(test)).toBe(1000);
  });
});

describe('isolation', () => {
  it('the same user id in both databases, and neither key sees or changes the other database', async () => {
    const product = await newProduct({ price: 2, stock: 5 });
    const { live, test } = await testUser(10);
    const profile = await call('/user/profile', { key: test.key });
    expect(profile.json.data.id).toBe(live.id);

    const testOrder = await buy(test, product.id, 2);
    expect(testOrder.status, testOrder.text).toBe(201);
    expect(testOrder.json.data.stock_items[0]).toMatch(new RegExp(`^TEST-${product.sku}-[0-9A-F]{16}$`));
    expect(await balance(test)).toBe(996);
    expect(await balance(live)).toBe(10);
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(5);
    expect((await call('/orders', { key: live.key })).json.data).toHaveLength(0);
    const liveRow = await env.DB.prepare('SELECT 1 FROM orders WHERE order_number = ?').bind(testOrder.json.data.order_number).first();
    expect(liveRow).toBeNull();

    const liveOrder = await buy(live, product.id, 1);
    expect(liveOrder.status, liveOrder.text).toBe(201);
    expect(liveOrder.json.data.stock_items[0]).not.toMatch(/^TEST-/);
    expect((await call('/orders', { key: test.key })).json.data.map((o: { id: number }) => o.id)).toEqual([testOrder.json.data.id]);
    expect(await balance(test)).toBe(996);

    // One id, two rows: the sandbox order's id is also a live order's (made here if need be), and each key reads its own.
    const sameId = testOrder.json.data.id as number;
    const liveAtThatId = await env.DB.prepare('SELECT user_id FROM orders WHERE id = ?').bind(sameId).first<{ user_id: number }>();
    const seenLive = await call(`/orders/${sameId}`, { key: live.key });
    if (liveAtThatId?.user_id === live.id) expect(seenLive.json.data.order_number).not.toBe(testOrder.json.data.order_number);
    else expectError(seenLive, 404, 'NOT_FOUND');
    const liveOrderSeenByTest = await call(`/orders/${liveOrder.json.data.id}`, { key: test.key });
    if (liveOrderSeenByTest.status === 200) expect(liveOrderSeenByTest.json.data.order_number).not.toBe(liveOrder.json.data.order_number);
    else expectError(liveOrderSeenByTest, 404, 'NOT_FOUND');
  });

  it('a live key never sees a sandbox deposit with the same id, nor a test key a live one', async () => {
    const { live, test } = await testUser();
    const liveDeposit = await testDeposit(live, 12);
    const sandboxDeposit = await testDeposit(test, 13);
    // Put a sandbox deposit at the live deposit's id (the sandbox's ids are its own): same id, two users' rows.
    await sandbox()
      .prepare(`INSERT INTO deposits (id, user_id, amount_cents, gateway, status, expires_at, created_at, updated_at, reference, provider)
                SELECT ?, ?, 4200, 'gateway_one', 'pending', '2999-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', ?, 'test'
                WHERE NOT EXISTS (SELECT 1 FROM deposits WHERE id = ?)`)
      .bind(liveDeposit.deposit_id, live.id, unique('dep'), liveDeposit.deposit_id)
      .run();
    const viaTest = await call(`/wallet/deposits/${liveDeposit.deposit_id}/status`, { key: test.key });
    if (viaTest.status === 200) expect(viaTest.json.data.amount).not.toBe(12);
    const viaLive = await call(`/wallet/deposits/${liveDeposit.deposit_id}/status`, { key: live.key });
    expect(viaLive.json.data).toMatchObject({ amount: 12, payment_method: 'gateway_one' });
    const sandboxIdViaLive = await call(`/wallet/deposits/${sandboxDeposit.deposit_id}/status`, { key: live.key });
    if (sandboxIdViaLive.status === 200) expect(sandboxIdViaLive.json.data.amount).not.toBe(13);
  });

  it('public stock with a test key answers from the sandbox, never cached; without a key, the live shop', async () => {
    const product = await newProduct({ price: 3, stock: 4 });
    const { test } = await testUser();
    // The live answer, now in the edge cache, is never what a test key gets.
    expect((await call(`/stock/${product.id}`)).json.data.stock_count).toBe(4);
    expect((await buy(test, product.id, 3)).status).toBe(201);
    const sandboxView = await call(`/stock/${product.id}`, { key: test.key });
    expect(sandboxView.json.data.stock_count).toBe(1);
    expect(sandboxView.headers.get('Cache-Control')).toBe('no-store');
    const liveView = await call(`/stock/${product.id}`);
    expect(liveView.json.data.stock_count).toBe(4);
    expect(liveView.headers.get('Cache-Control')).toMatch(/^public/);
  });

  it('a test key on an admin route is nothing: admin routes are live only', async () => {
    const { test } = await testUser();
    expectError(await call('/admin/users', { key: test.key }), 401, 'UNAUTHORIZED');
  });
});

describe('the mirror', () => {
  it('follows a new product, a price change, stock up and down, and a deactivation', async () => {
    const { test } = await testUser();
    const product = await newProduct({ price: 5, stock: 3, category: 'mirror' });
    // An operator's change refreshes the sandbox after its response (the test awaits that work).
    let seen = await call(`/stock/${product.id}`, { key: test.key });
    expect(seen.status, seen.text).toBe(200);
    expect(seen.json.data).toMatchObject({ price: 5, stock_count: 3, category: 'mirror', sku: product.sku });

    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 7.25 } })).status).toBe(200);
    seen = await call(`/stock/${product.id}`, { key: test.key });
    expect(seen.json.data.price).toBe(7.25);

    await restock(product.id, 4);
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(7);

    // A live sale is no operator change: the scheduled run brings the sandbox down to the live count.
    const buyer = await newUser({ balance: 100 });
    expect((await buy(buyer, product.id, 5)).status).toBe(201);
    const report = await runSandboxScheduled(env);
    expect(report?.mirror?.products).toBeGreaterThan(0);
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(2);
    const items = await sandbox()
      .prepare("SELECT content FROM stock_items WHERE product_id = ? AND status = 'available'")
      .bind(product.id)
      .all<{ content: string }>();
    expect(items.results).toHaveLength(2);
    for (const { content } of items.results) expect(content).toMatch(new RegExp(`^TEST-${product.sku}-[0-9A-F]{16}$`));

    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { active: false } })).status).toBe(200);
    expectError(await call(`/stock/${product.id}`, { key: test.key }), 404, 'NOT_FOUND');
    const sandboxBuy = await buy(test, product.id, 1);
    expect(sandboxBuy.status).toBe(400);
  });

  it('a sandbox purchase takes generated stock; the next refresh tops it up to the live count', async () => {
    const product = await newProduct({ price: 1, stock: 3 });
    const { test } = await testUser();
    expect((await buy(test, product.id, 3)).status).toBe(201);
    expectError(await buy(test, product.id, 1), 400, 'INSUFFICIENT_STOCK');
    await refreshSandboxMirror(env.DB, sandbox());
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(3);
    // Refreshing again changes nothing.
    const again = await refreshSandboxMirror(env.DB, sandbox());
    expect(again.itemsAdded + again.itemsRemoved).toBe(0);
  });

  it('a SKU that moved to another product live moves in the sandbox too', async () => {
    // The product taking the SKU comes first in the copy (lower id) than the one giving it up.
    const taker = await newProduct({ stock: 1 });
    const giver = await newProduct({ stock: 1 });
    const freed = unique('SKU');
    expect((await call(`/admin/products/${giver.id}`, { method: 'PATCH', admin: true, body: { sku: freed } })).status).toBe(200);
    expect((await call(`/admin/products/${taker.id}`, { method: 'PATCH', admin: true, body: { sku: giver.sku } })).status).toBe(200);
    // Both changes seen by one refresh: the sandbox as it was before them.
    await sandbox().batch([
      sandbox().prepare('UPDATE products SET sku = ? WHERE id = ?').bind(taker.sku, taker.id),
      sandbox().prepare('UPDATE products SET sku = ? WHERE id = ?').bind(giver.sku, giver.id),
    ]);
    await refreshSandboxMirror(env.DB, sandbox());
    const skus = await sandbox()
      .prepare('SELECT id, sku FROM products WHERE id IN (?, ?) ORDER BY id')
      .bind(taker.id, giver.id)
      .all<{ id: number; sku: string }>();
    expect(skus.results).toEqual([
      { id: taker.id, sku: giver.sku },
      { id: giver.id, sku: freed },
    ]);
  });
});

describe('the test gateway', () => {
  it('every slot is the test gateway; its payment page is <PUBLIC_BASE_URL>/test/pay/<token>', async () => {
    const { test } = await testUser();
    const gateways = await call('/wallet/gateways', { key: test.key });
    expect(gateways.json.data.map((g: { gateway: string; provider: string }) => [g.gateway, g.provider])).toEqual([
      ['gateway_one', 'test'],
      ['gateway_two', 'test'],
      ['gateway_three', 'test'],
    ]);
    const deposit = await testDeposit(test, 25, 'gateway_three');
    expect(deposit.payment_url).toMatch(/^http:\/\/localhost\/test\/pay\/[0-9A-Za-z]{32}$/);
    // The deposit id alone opens nothing.
    expect((await SELF.fetch(`http://localhost/test/pay/${deposit.deposit_id}`)).status).toBe(404);
  });

  it('pay credits the deposit through the live credit path, once; events carry livemode false', async () => {
    const { live, test } = await testUser();
    const deposit = await testDeposit(test, 25);
    const paid = await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: test.key, method: 'POST' });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.json.data).toMatchObject({ id: deposit.deposit_id, status: 'paid', amount: 25 });
    expect(await balance(test)).toBe(1025);
    const again = await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: test.key, body: {} });
    expect(again.json.data.status).toBe('paid');
    expect(await balance(test)).toBe(1025);
    expect(await balance(live)).toBe(0);

    const events = (await call('/events', { key: test.key })).json.data;
    expect(events.map((e: { type: string }) => e.type)).toContain('deposit.paid');
    for (const event of events) expect(event.livemode).toBe(false);
    const one = await call(`/events/${events[0].id}`, { key: test.key });
    expect(one.json.data.livemode).toBe(false);
    const liveEvents = (await call('/events', { key: (await newUser({ balance: 1 })).key })).json.data;
    expect(liveEvents[0].livemode).toBe(true);
  });

  it('pay less than 99 % credits nothing (amount_mismatch in the gateway log); 99 % or more credits the deposit', async () => {
    const { test } = await testUser();
    const short = await testDeposit(test, 100);
    const less = await call(`/test/deposits/${short.deposit_id}/pay`, { key: test.key, body: { amount: 98.99 } });
    expect(less.status, less.text).toBe(200);
    expect(less.json.data.status).toBe('pending');
    expect(await balance(test)).toBe(1000);
    const logged = await sandbox().prepare('SELECT outcome, amount_cents FROM gateway_events WHERE deposit_id = ?').bind(short.deposit_id).all();
    expect(logged.results).toEqual([{ outcome: 'amount_mismatch', amount_cents: 9899 }]);
    const enough = await call(`/test/deposits/${short.deposit_id}/pay`, { key: test.key, body: { amount: 99 } });
    expect(enough.json.data.status).toBe('paid');
    expect(await balance(test)).toBe(1100);
  });

  it('fail and expire close a pending deposit without credit', async () => {
    const { test } = await testUser();
    const failed = await testDeposit(test, 5);
    const f = await call(`/test/deposits/${failed.deposit_id}/fail`, { key: test.key, method: 'POST' });
    expect(f.json.data.status).toBe('failed');
    const expired = await testDeposit(test, 6);
    const e = await call(`/test/deposits/${expired.deposit_id}/expire`, { key: test.key, method: 'POST' });
    expect(e.json.data.status).toBe('expired');
    expect(await balance(test)).toBe(1000);
    const types = (await call('/events', { key: test.key })).json.data.map((ev: { type: string }) => ev.type);
    expect(types).toEqual(expect.arrayContaining(['deposit.failed', 'deposit.expired']));
  });

  it('a live key on a test route is 403 TEST_KEY_REQUIRED; a bad key 401; another user\'s deposit 404', async () => {
    const { live, test } = await testUser();
    const deposit = await testDeposit(test, 5);
    expectError(await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: live.key, method: 'POST' }), 403, 'TEST_KEY_REQUIRED');
    expectError(await call('/test/reset', { key: live.key, method: 'POST' }), 403, 'TEST_KEY_REQUIRED');
    expectError(await call('/test/reset', { key: `sk_live_${'q'.repeat(40)}`, method: 'POST' }), 401, 'UNAUTHORIZED');
    const other = await testUser();
    expectError(await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: other.test.key, method: 'POST' }), 404, 'NOT_FOUND');
  });

  it('the payment page: Pay, Pay less and Fail, same origin only', async () => {
    const { test } = await testUser();
    const deposit = await testDeposit(test, 40);
    const url = deposit.payment_url as string;
    const page = await SELF.fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const label of ['Pay', 'Pay less', 'Fail']) expect(html).toContain(`>${label}</button>`);
    expect(page.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    const post = (choice: string, origin = 'http://localhost') =>
      SELF.fetch(url, { method: 'POST', headers: { Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' }, body: `choice=${choice}` });
    expect((await post('pay', 'https://evil.example')).status).toBe(403);
    const less = await post('pay_less');
    expect(less.status).toBe(200);
    expect(await less.text()).toContain('nothing credited');
    expect(await balance(test)).toBe(1000);
    const pay = await post('pay');
    expect(await pay.text()).toContain('<dd id="status">paid</dd>');
    expect(await balance(test)).toBe(1040);
    // The page reads the sandbox only: a token it does not hold, or a deposit id, is a 404.
    expect((await SELF.fetch(`http://localhost/test/pay/${'x'.repeat(32)}`)).status).toBe(404);
    expect((await SELF.fetch(`http://localhost/test/pay/${deposit.deposit_id}`)).status).toBe(404);
  });

  it('a test webhook endpoint gets sandbox events, delivered from the sandbox with livemode false', async () => {
    const { test } = await testUser();
    const sent: DeliveryMessage[] = [];
    const queue = { sendBatch: async (messages: Iterable<{ body: DeliveryMessage }>) => void sent.push(...[...messages].map((m) => m.body)) };
    const endpoint = await call('/webhook-endpoints', { key: test.key, body: { url: 'http://localhost:9/hook', events: ['*'] } });
    expect(endpoint.status, endpoint.text).toBe(201);
    const deposit = await testDeposit(test, 8);
    const paid = await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: test.key, method: 'POST', vars: { WEBHOOK_QUEUE: queue as never } });
    expect(paid.status, paid.text).toBe(200);
    expect(sent).toEqual([{ event_id: expect.stringMatching(/^evt_/), endpoint_id: endpoint.json.data.id, sandbox: true }]);

    const posted: string[] = [];
    const spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (_input, init) => {
      posted.push(String(init?.body));
      return new Response('ok');
    });
    try {
      const batch = createMessageBatch<DeliveryMessage>('stock-wallet-webhooks', [{ id: 'm1', timestamp: new Date(), attempts: 1, body: sent[0] }]);
      const ctx = createExecutionContext();
      await (entry as ExportedHandler<Cloudflare.Env>).queue!(batch, env, ctx);
      const { explicitAcks } = await getQueueResult(batch, ctx);
      expect(explicitAcks).toEqual(['m1']);
    } finally {
      spy.mockRestore();
    }
    expect(posted).toHaveLength(1);
    expect(JSON.parse(posted[0])).toMatchObject({ type: 'deposit.paid', livemode: false, data: { object: { id: deposit.deposit_id, status: 'paid' } } });
    const delivered = await call(`/events/${sent[0].event_id}`, { key: test.key });
    expect(delivered.json.data.deliveries).toHaveLength(1);
  });
});

describe('reset', () => {
  it("empties the caller's sandbox and puts the test money back; keys and endpoints stay; others untouched", async () => {
    const product = await newProduct({ price: 4, stock: 5 });
    const { live, test } = await testUser(2);
    const neighbour = await testUser();
    expect((await buy(neighbour.test, product.id, 1)).status).toBe(201);
    expect((await buy(test, product.id, 2)).status).toBe(201);
    const deposit = await testDeposit(test, 30);
    await call(`/test/deposits/${deposit.deposit_id}/pay`, { key: test.key, method: 'POST' });
    expect((await call('/webhook-endpoints', { key: test.key, body: { url: 'http://localhost:9/hook', events: ['*'] } })).status).toBe(201);
    expect(await balance(test)).toBe(1022);

    const reset = await call('/test/reset', { key: test.key, method: 'POST' });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json.data).toEqual({ balance: 1000 });
    expect(await balance(test)).toBe(1000);
    const transactions = (await call('/wallet/transactions', { key: test.key })).json.data;
    expect(transactions).toEqual([expect.objectContaining({ type: 'adjustment', amount: 1000, balance_after: 1000, description: 'Test money' })]);
    expect((await call('/orders', { key: test.key })).json.data).toEqual([]);
    expect((await call('/wallet/deposits', { key: test.key })).json.data).toEqual([]);
    expect((await call('/events', { key: test.key })).json.data).toEqual([]);
    expect((await call('/api-keys', { key: test.key })).json.data).toHaveLength(1);
    expect((await call('/webhook-endpoints', { key: test.key })).json.data).toHaveLength(1);
    expect((await call('/orders', { key: neighbour.test.key })).json.data).toHaveLength(1);
    expect(await balance(live)).toBe(2);
  });
});

describe('without SANDBOX_DB', () => {
  const unbound = { SANDBOX_DB: undefined as never };

  it('mode "test" is a 422 on mode, and a sk_test_ key is 401', async () => {
    const { live, test } = await testUser();
    const res = await call('/api-keys', { key: live.key, body: { name: 'x', mode: 'test' }, vars: unbound });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.mode).toHaveLength(1);
    const refused = await call('/wallet/balance', { key: test.key, vars: unbound });
    expectError(refused, 401, 'UNAUTHORIZED');
    // Refused for what it is, before any database is asked (the live one has no such key either).
    expect(refused.json.error).toContain('Test mode is not enabled');
    expect((await call('/wallet/balance', { key: live.key, vars: unbound })).status).toBe(200);
  });
});

void BASE;
void fund;
afterEach(() => vi.restoreAllMocks());

describe("the dashboard's keys page", () => {
  it('offers Live or Test; lists both, marked; revokes a test key in the sandbox', async () => {
    const user = await signedInUser();
    const page = await visit('/dashboard/keys', { cookie: user.cookie });
    expect(page.text).toContain('<option value="test">');
    const made = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'sandbox laptop', mode: 'test' } });
    expect(made.status).toBe(200);
    const key = /<code class="secret" id="new-api-key">(sk_test_[0-9A-Za-z]{40})<\/code>/.exec(made.text)![1];
    expect(await balance({ ...user, key })).toBe(1000);

    const list = await visit('/dashboard/keys', { cookie: user.cookie });
    expect(list.text).toContain(`sk_test_****${key.slice(-4)}`);
    expect(list.text).toContain('sk_live_****');
    expect(list.text).toContain('>Test</span>');
    expect(list.text).toContain('>Live</span>');

    const [testKey] = (await call('/api-keys', { key })).json.data;
    const revoke = await visit(`/dashboard/keys/${testKey.id}/revoke`, { cookie: user.cookie, form: { mode: 'test' } });
    expect(revoke.status).toBe(303);
    expectError(await call('/wallet/balance', { key }), 401, 'UNAUTHORIZED');
    // The live key with the same id, if the user has one, is untouched.
    expect((await call('/wallet/balance', { key: user.key })).status).toBe(200);
  });
});
