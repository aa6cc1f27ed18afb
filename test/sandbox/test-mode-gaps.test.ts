import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import worker from '../../src/index';
import { runSandboxScheduled, SANDBOX_CRON } from '../../src/services/sandbox/jobs';
import wranglerToml from '../../wrangler.toml?raw';
import { BASE, buy, call, newProduct, newUser, unique, type TestUser } from '../helpers';
import { apiUrl, fakeVendor, varsFor } from '../vendors';
import { faultyD1 } from '../faults';

// Test mode, the rules that close its gaps (docs/test-mode.md): what a reset clears, Vary on public stock answers,
// a live key's test children dying with it, the mirror on every scheduled run, one round trip for the test gateway.

const sandbox = () => env.SANDBOX_DB!;

async function testKeyFor(user: TestUser, body: Record<string, unknown> = {}): Promise<TestUser> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test', ...body } });
  expect(res.status, res.text).toBe(201);
  return { ...user, key: res.json.data.key };
}

async function testUser() {
  const live = await newUser();
  return { live, test: await testKeyFor(live) };
}

describe('reset clears everything per-user a sandbox accumulates', () => {
  it('claims, refunds, holds, emails and links go; the reset itself succeeds with a claim open', async () => {
    const product = await newProduct({ price: 4, stock: 3 });
    const warranty = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 72 } });
    expect(warranty.status, warranty.text).toBe(200);
    const { test } = await testUser();
    const user = test.id;
    const bought = await buy(test, product.id, 1);
    expect(bought.status, bought.text).toBe(201);
    const reported = await call(`/orders/${bought.json.data.id}/items/0/report`, { key: test.key, body: { reason: 'Does not work' } });
    expect(reported.status, reported.text).toBe(201);
    // What the sandbox may hold for a user besides: a hold, an email, a verification and a reset link.
    const now = new Date().toISOString();
    await sandbox().batch([
      sandbox().prepare(`UPDATE users SET held_at = ?1, hold_reason = 'test' WHERE id = ?2`).bind(now, user),
      sandbox().prepare(`INSERT INTO emails (id, user_id, template, to_address, subject, data, status, created_at) VALUES (?1, ?2, 'order_receipt', 'x@example.com', 's', '{}', 'sent', ?3)`).bind(`em_${user}`, user, now),
    ]);

    const reset = await call('/test/reset', { key: test.key, method: 'POST' });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.json.data).toEqual({ balance: 1000 });
    const left = await sandbox()
      .prepare(
        `SELECT (SELECT count(*) FROM claims WHERE user_id = ?1) AS claims, (SELECT count(*) FROM emails WHERE user_id = ?1) AS emails,
                (SELECT held_at FROM users WHERE id = ?1) AS held, (SELECT count(*) FROM orders WHERE user_id = ?1) AS orders`,
      )
      .bind(user)
      .first();
    expect(left).toEqual({ claims: 0, emails: 0, held: null, orders: 0 });
    // The account is usable at once: not on hold.
    expect((await buy(test, product.id, 1)).status).toBe(201);
  });
});

describe('Vary: X-API-Key on public catalogue answers', () => {
  it('every public stock route, the shop and the embed say it, with and without a test key', async () => {
    const product = await newProduct({ price: 2, stock: 1 });
    const { test } = await testUser();
    const paths = [
      `${BASE}/stock`,
      `${BASE}/stock/check?ids=${product.id}`,
      `${BASE}/stock/categories`,
      `${BASE}/stock/${product.id}`,
      `${BASE}/stock/${product.id}/badge.svg`,
      `/embed/products/${product.id}`,
      '/shop',
      `/shop/${product.id}`,
    ];
    for (const path of paths) {
      for (const headers of [{}, { 'X-API-Key': test.key }] as Record<string, string>[]) {
        const res = await SELF.fetch(`${path.startsWith('http') ? '' : 'http://localhost'}${path}`, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(200);
        await res.arrayBuffer();
        expect(res.headers.get('Vary') ?? '', path).toMatch(/X-API-Key/i);
      }
    }
  });
});

describe('the mirror on every scheduled run of its own', () => {
  /** The worker's own `scheduled` export, invoked as the runtime invokes it for one cron of wrangler.toml. */
  async function scheduled(cron: string, extra: Record<string, unknown> = {}) {
    const handler: ExportedHandler<Cloudflare.Env> = worker;
    const ctx = createExecutionContext();
    await handler.scheduled!(createScheduledController({ scheduledTime: Date.now(), cron }), { ...env, ...extra } as typeof env, ctx);
    await waitOnExecutionContext(ctx);
  }

  it('wrangler.toml schedules test mode as a cron of its own', () => {
    const crons = /^crons = (\[.*\])$/m.exec(wranglerToml)?.[1];
    expect(JSON.parse(crons ?? '[]')).toEqual(['*/5 * * * *', SANDBOX_CRON]);
  });

  it("refreshes the sandbox however much the live shop's run spent on its vendor poll; the live run never touches it", async () => {
    const product = await newProduct({ price: 3, stock: 3 });
    const { test } = await testUser();
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(3);
    // A live sale is no operator change: only a scheduled run brings the sandbox down to the live count.
    const buyer = await newUser({ balance: 10 });
    expect((await buy(buyer, product.id, 1)).status).toBe(201);
    // An open vendor deposit the live run's poll asks about (its vendor is down: the poll skips it).
    const old = new Date(Date.now() - 3_600_000).toISOString();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO deposits (user_id, amount_cents, gateway, crypto_currency, status, expires_at, created_at, updated_at, reference, provider, external_id)
       VALUES (?1, 500, 'gateway_one', 'btc', 'pending', ?2, ?3, ?3, ?4, 'nowpayments', 'np-1')`,
    )
      .bind(buyer.id, later, old, unique('dep'))
      .run();
    fakeVendor('get', `${apiUrl('nowpayments')}/*`, () => new Response('down', { status: 503 }));

    await scheduled('*/5 * * * *', varsFor('nowpayments'));
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(3);
    await scheduled(SANDBOX_CRON, varsFor('nowpayments'));
    expect((await call(`/stock/${product.id}`, { key: test.key })).json.data.stock_count).toBe(2);
  });

  it('without a sandbox its run does nothing', async () => {
    expect(await runSandboxScheduled({ ...env, SANDBOX_DB: undefined } as typeof env)).toBeNull();
  });
});

describe("a live key's test children die with it", () => {
  const works = async (key: string) => (await call('/wallet/balance', { key })).status;

  it('revoking a live key revokes its test keys, those of its live children, and the test keys they made; no other', async () => {
    const owner = await newUser();
    const child = await call('/api-keys', { key: owner.key, body: { name: 'live child' } });
    expect(child.status, child.text).toBe(201);
    const sibling = await call('/api-keys', { key: owner.key, body: { name: 'live sibling' } });
    const direct = await testKeyFor(owner);
    const grandchild = await testKeyFor({ ...owner, key: child.json.data.key });
    const madeByTest = await call('/api-keys', { key: grandchild.key, body: { name: 'made by a test key' } });
    expect(madeByTest.status, madeByTest.text).toBe(201);
    const other = await testKeyFor({ ...owner, key: sibling.json.data.key });
    for (const key of [direct.key, grandchild.key, madeByTest.json.data.key, other.key]) expect(await works(key)).toBe(200);

    // The sandbox's own ids are another sequence: a test key whose sandbox id is the revoked live key's id is untouched.
    const revoked = await call(`/api-keys/${child.json.data.id}`, { key: owner.key, method: 'DELETE' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(await works(grandchild.key)).toBe(401);
    expect(await works(madeByTest.json.data.key)).toBe(401);
    expect(await works(direct.key)).toBe(200);
    expect(await works(other.key)).toBe(200);

    // The root: everything below it, in both databases.
    const root = await call('/api-keys/' + (await call('/api-keys', { key: owner.key })).json.data.find((k: { created_by_key_id: number | null }) => k.created_by_key_id === null).id, {
      key: owner.key,
      method: 'DELETE',
    });
    expect(root.status, root.text).toBe(200);
    expect(await works(direct.key)).toBe(401);
    expect(await works(other.key)).toBe(401);
  });

  it('a test key whose sandbox id equals the revoked live key id survives (two sequences)', async () => {
    const owner = await newUser();
    const maker = await call('/api-keys', { key: owner.key, body: { name: 'maker' } });
    const liveId = maker.json.data.id as number;
    const keeper = await testKeyFor(owner);
    // Give the keeper the revoked live key's number as its sandbox id (and as its sandbox maker).
    await sandbox().prepare('UPDATE api_keys SET id = ?1 WHERE key_hash = (SELECT key_hash FROM api_keys WHERE user_id = ?2 ORDER BY id DESC LIMIT 1) AND NOT EXISTS (SELECT 1 FROM api_keys WHERE id = ?1)').bind(liveId, owner.id).run();
    expect(await sandbox().prepare('SELECT user_id AS userId FROM api_keys WHERE id = ?1').bind(liveId).first()).toEqual({ userId: owner.id });
    const doomed = await testKeyFor({ ...owner, key: maker.json.data.key });
    expect((await call(`/api-keys/${liveId}`, { key: owner.key, method: 'DELETE' })).status).toBe(200);
    expect(await works(doomed.key)).toBe(401);
    expect(await works(keeper.key)).toBe(200);
  });

  it('a sandbox fault after the live revoke still answers the revoke; the sweep revokes the test child', async () => {
    const owner = await newUser();
    const maker = await call('/api-keys', { key: owner.key, body: { name: 'maker' } });
    const child = await testKeyFor({ ...owner, key: maker.json.data.key });
    const faulty = faultyD1(sandbox(), 'lost-before-run');
    const revoked = await call(`/api-keys/${maker.json.data.id}`, { key: owner.key, method: 'DELETE', vars: { SANDBOX_DB: faulty.db } as never });
    expect(faulty.fired()).toBe(true);
    expect(revoked.status, revoked.text).toBe(200);
    expect(await works(child.key)).toBe(200);
    await runSandboxScheduled(env);
    expect(await works(child.key)).toBe(401);
  });

  it('the scheduled run revokes test keys whose live maker is revoked or gone, and follows a disabled user', async () => {
    const owner = await newUser();
    const maker = await call('/api-keys', { key: owner.key, body: { name: 'maker' } });
    const orphan = await testKeyFor({ ...owner, key: maker.json.data.key });
    const fromRoot = await testKeyFor(owner);
    // Revoked live without the sandbox hearing of it (a fault between the two batches).
    await env.DB.prepare('UPDATE api_keys SET revoked_at = ?1 WHERE id = ?2').bind(new Date().toISOString(), maker.json.data.id).run();
    expect(await works(orphan.key)).toBe(200);
    let report = await runSandboxScheduled(env);
    expect(report?.sandbox?.makers.revokedKeys).toBeGreaterThan(0);
    expect(await works(orphan.key)).toBe(401);
    expect(await works(fromRoot.key)).toBe(200);

    const disabled = await call(`/admin/users/${owner.id}`, { method: 'PATCH', admin: true, body: { disabled: true } });
    expect(disabled.status, disabled.text).toBe(200);
    report = await runSandboxScheduled(env);
    expect(await works(fromRoot.key)).not.toBe(200);
    const enabled = await call(`/admin/users/${owner.id}`, { method: 'PATCH', admin: true, body: { disabled: false } });
    expect(enabled.status, enabled.text).toBe(200);
    report = await runSandboxScheduled(env);
    expect(await works(fromRoot.key)).toBe(200);
  });
});

describe('the test gateway in one batch', () => {
  it('a deposit that pays for an order buys it when paid, once; a plain one records no order; a foreign one is untouched', async () => {
    const product = await newProduct({ price: 2.5, stock: 5 });
    const { test } = await testUser();
    const made = await call('/wallet/deposit', {
      key: test.key,
      body: { amount: 25, gateway: 'gateway_two', order: { product_id: product.id, quantity: 2, expected_total: 5 } },
    });
    expect(made.status, made.text).toBe(200);
    const id = made.json.data.deposit_id;
    const paid = await call(`/test/deposits/${id}/pay`, { key: test.key, method: 'POST' });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.json.data).toMatchObject({ status: 'paid', order_error: null });
    expect(paid.json.data.order_id).toEqual(expect.any(Number));
    const order = await call(`/orders/${paid.json.data.order_id}`, { key: test.key });
    expect(order.json.data).toMatchObject({ product_id: product.id, quantity: 2, total_amount: 5 });
    expect((await call('/wallet/balance', { key: test.key })).json.data.balance).toBe(1020);
    // Paid again: credits nothing and buys nothing more.
    expect((await call(`/test/deposits/${id}/pay`, { key: test.key, method: 'POST' })).json.data.order_id).toBe(paid.json.data.order_id);
    expect((await call('/wallet/balance', { key: test.key })).json.data.balance).toBe(1020);
    expect((await call('/orders', { key: test.key })).json.data).toHaveLength(1);

    const plain = await call('/wallet/deposit', { key: test.key, body: { amount: 10, gateway: 'gateway_one' } });
    const plainPaid = await call(`/test/deposits/${plain.json.data.deposit_id}/pay`, { key: test.key, method: 'POST' });
    expect(plainPaid.json.data).toMatchObject({ status: 'paid', order_id: null, order_error: null });

    // Another user's deposit: 404, and nothing logged, credited or closed for it.
    const stranger = await testUser();
    const theirs = await call('/wallet/deposit', { key: stranger.test.key, body: { amount: 10, gateway: 'gateway_one' } });
    const theirId = theirs.json.data.deposit_id;
    for (const outcome of ['pay', 'fail', 'expire']) {
      expect((await call(`/test/deposits/${theirId}/${outcome}`, { key: test.key, method: 'POST' })).status).toBe(404);
    }
    const row = await sandbox()
      .prepare('SELECT status, (SELECT count(*) FROM gateway_events WHERE deposit_id = ?1) AS logged FROM deposits WHERE id = ?1')
      .bind(theirId)
      .first();
    expect(row).toEqual({ status: 'pending', logged: 0 });

    // A deposit of another provider in the sandbox (none is made there, but one could be): 422, nothing changed.
    await sandbox().prepare("UPDATE deposits SET provider = 'generic' WHERE id = ?1").bind(plain.json.data.deposit_id).run();
    const other = await call(`/wallet/deposit`, { key: test.key, body: { amount: 10, gateway: 'gateway_one' } });
    await sandbox().prepare("UPDATE deposits SET provider = 'generic' WHERE id = ?1").bind(other.json.data.deposit_id).run();
    const refused = await call(`/test/deposits/${other.json.data.deposit_id}/pay`, { key: test.key, method: 'POST' });
    expect(refused.status, refused.text).toBe(422);
    expect((await call(`/wallet/deposits/${other.json.data.deposit_id}/status`, { key: test.key })).json.data.status).toBe('pending');
  });
});
