import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { refreshSandboxMirror } from '../../src/services/sandbox/mirror';
import { call, expectError, newProduct, newUser, type TestUser } from '../helpers';

// The integrator's first hour (contract, "fourth pass"): the test gateway says what it did, a live key revokes its
// test key with ?mode=test, and the operator's side of after-the-sale can be played from code in the sandbox.

async function testKeyFor(user: TestUser): Promise<TestUser & { keyId: number }> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'sandbox', mode: 'test' } });
  expect(res.status, res.text).toBe(201);
  return { ...user, key: res.json.data.key, keyId: res.json.data.id };
}

async function testDeposit(user: TestUser, amount = 10) {
  const res = await call('/wallet/deposit', { key: user.key, body: { amount, gateway: 'gateway_one' } });
  expect(res.status, res.text).toBe(200);
  return res.json.data.deposit_id as number;
}

const pay = (user: TestUser, id: number, body: Record<string, unknown> = {}) => call(`/test/deposits/${id}/pay`, { key: user.key, body });

describe('the test gateway says what it did', () => {
  it('credited true|false with why: paid, under-paid, already paid, paid after expiry', async () => {
    const test = await testKeyFor(await newUser());
    const first = await testDeposit(test);
    const paid = await pay(test, first);
    expect(paid.status, paid.text).toBe(200);
    expect(paid.json).toMatchObject({ message: 'paid: credited', data: { status: 'paid', credited: true } });
    const again = await pay(test, first);
    expect(again.json).toMatchObject({ message: 'already paid: nothing credited again', data: { status: 'paid', credited: false } });

    const short = await pay(test, await testDeposit(test), { amount: 5 });
    expect(short.json).toMatchObject({ message: 'under-paid: nothing credited', data: { credited: false } });

    const late = await testDeposit(test);
    expect((await call(`/test/deposits/${late}/expire`, { key: test.key, method: 'POST' })).json).toMatchObject({ data: { status: 'expired', credited: false } });
    const afterExpiry = await pay(test, late);
    expect(afterExpiry.json).toMatchObject({ message: 'paid after expiry: credited', data: { status: 'paid', credited: true } });
  });
});

describe('DELETE /api-keys/{id}?mode=test with a live key', () => {
  it("revokes the caller's test key; without mode the 404 says to add mode=test; another user's test key is a 404", async () => {
    const live = await newUser();
    // A test key whose id no live key of this user has (the two databases count ids apart).
    let test = await testKeyFor(live);
    const liveIds = (await call('/api-keys', { key: live.key })).json.data.map((k: { id: number }) => k.id);
    while (liveIds.includes(test.keyId)) test = await testKeyFor(live);
    const bare = await call(`/api-keys/${test.keyId}`, { key: live.key, method: 'DELETE' });
    expectError(bare, 404, 'NOT_FOUND');
    expect(bare.json.error).toContain('mode=test');
    expect((await call('/wallet/balance', { key: test.key })).status).toBe(200);

    const stranger = await newUser();
    expectError(await call(`/api-keys/${test.keyId}?mode=test`, { key: stranger.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    const revoked = await call(`/api-keys/${test.keyId}?mode=test`, { key: live.key, method: 'DELETE' });
    expect(revoked.status, revoked.text).toBe(200);
    expectError(await call('/wallet/balance', { key: test.key }), 401, 'UNAUTHORIZED');
    expectError(await call(`/api-keys/${test.keyId}?mode=test`, { key: live.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await call(`/api-keys/1?mode=nope`, { key: live.key, method: 'DELETE' }), 422, 'VALIDATION_FAILED');
  });

  it('a test key revokes only test keys (mode=live is 403)', async () => {
    const test = await testKeyFor(await newUser());
    expectError(await call(`/api-keys/1?mode=live`, { key: test.key, method: 'DELETE' }), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('the operator, played in test mode', () => {
  async function sandboxOrder() {
    const product = await newProduct({ price: 3, stock: 4 });
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 24 } })).status).toBe(200);
    await refreshSandboxMirror(env.DB, env.SANDBOX_DB!);
    const test = await testKeyFor(await newUser());
    const bought = await call('/orders', { key: test.key, body: { product_id: product.id, quantity: 3 } });
    expect(bought.status, bought.text).toBe(201);
    return { test, order: bought.json.data as { id: number; stock_items: string[] } };
  }
  const reportItem = async (user: TestUser, orderId: number, index: number) => {
    const res = await call(`/orders/${orderId}/items/${index}/report`, { key: user.key, body: { reason: 'broken' } });
    expect(res.status, res.text).toBe(201);
    return res.json.data.id as number;
  };

  it('replace, refund and reject a sandbox claim, and refund a sandbox order: each with its event', async () => {
    const { test, order } = await sandboxOrder();
    const claims = [await reportItem(test, order.id, 0), await reportItem(test, order.id, 1), await reportItem(test, order.id, 2)];
    const replaced = await call(`/test/claims/${claims[0]}/replace`, { key: test.key, method: 'POST' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.json.data).toMatchObject({ status: 'replaced' });
    expect((await call(`/test/claims/${claims[1]}/refund`, { key: test.key, method: 'POST' })).json.data).toMatchObject({ status: 'refunded' });
    expect((await call(`/test/claims/${claims[2]}/reject`, { key: test.key, body: { note: 'works for us' } })).json.data).toMatchObject({
      status: 'rejected',
      resolution: 'works for us',
    });
    expectError(await call(`/test/claims/${claims[2]}/refund`, { key: test.key, method: 'POST' }), 409, 'CLAIM_RESOLVED');
    const refunded = await call(`/test/orders/${order.id}/refund`, { key: test.key, body: { amount: 1, reason: 'goodwill' } });
    expect(refunded.status, refunded.text).toBe(200);
    expect(refunded.json.data).toMatchObject({ refunded_amount: 1, order: { id: order.id, refunded_amount: 4 } });
    expectError(await call(`/test/orders/${order.id}/refund`, { key: test.key, body: { amount: 6, reason: 'too much' } }), 422, 'VALIDATION_FAILED');

    const types = (await call('/events', { key: test.key })).json.data.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['order.item_replaced', 'order.item_refunded', 'order.claim_rejected', 'order.refunded']));
    const event = (await call('/events?type=order.refunded', { key: test.key })).json.data[0];
    expect(event).toMatchObject({ livemode: false, data: { amount: 1, reason: 'goodwill', object: { id: order.id } } });
    // Nothing of it reached the live database.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM events WHERE type = 'order.refunded' AND user_id = ?").bind(test.id).first('n')).toBe(0);
  });

  it("another user's sandbox claim or order is a 404 and stays as it was; a live key is 403 TEST_KEY_REQUIRED", async () => {
    const { test, order } = await sandboxOrder();
    const claim = await reportItem(test, order.id, 0);
    const other = await testKeyFor(await newUser());
    expectError(await call(`/test/claims/${claim}/refund`, { key: other.key, method: 'POST' }), 404, 'NOT_FOUND');
    expectError(await call(`/test/orders/${order.id}/refund`, { key: other.key, body: { amount: 1, reason: 'x' } }), 404, 'NOT_FOUND');
    const live = await newUser();
    expectError(await call(`/test/claims/${claim}/refund`, { key: live.key, method: 'POST' }), 403, 'TEST_KEY_REQUIRED');
    expectError(await call(`/test/orders/${order.id}/refund`, { key: live.key, body: { amount: 1, reason: 'x' } }), 403, 'TEST_KEY_REQUIRED');
    expect((await call(`/orders/${order.id}`, { key: test.key })).json.data).toMatchObject({ refunded_amount: 0, claims: [{ status: 'open' }] });
  });
});
