import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/lib/json-depth';
import { call, expectError, newUser, signedWebhook } from '../helpers';
import { SLOT_OF, varsFor, type Vendor } from '../vendors';

// A JSON body nested deeper than 64 levels is malformed (422 VALIDATION_FAILED) on every route, the gateway webhooks
// included, and is refused before anything walks it: a NOWPayments slot used to answer 500 to depth 5,000 (its
// signature check re-serialises the body recursively).

/** `{"a":[[...]]}` nested `depth` levels deep (the object is the first level). */
const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const VENDORS: Vendor[] = ['nowpayments', 'cryptomus', 'btcpay', 'stripe'];

const postWebhook = (slot: string, body: string, vars?: Record<string, string>, contentType = 'application/json') =>
  call(`/webhooks/${slot}`, { method: 'POST', body, headers: { 'Content-Type': contentType }, vars });

/** A 422 that names the depth rule (not some other refusal of the body). */
function expectTooDeep(res: Awaited<ReturnType<typeof call>>) {
  expectError(res, 422, 'VALIDATION_FAILED');
  expect(res.json.errors.body[0]).toContain('nested deeper than 64 levels');
}

describe('the depth scan', () => {
  it('counts arrays and objects, not brackets inside strings (escaped quotes included)', () => {
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestedDeeperThan(JSON.stringify({ a: '['.repeat(500), b: '\\"{{{{', c: [{ d: ']]]' }] }))).toBe(false);
    expect(nestedDeeperThan(`["\\"", ${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}]`)).toBe(true);
  });
});

describe('a JSON body nested deeper than 64 levels', () => {
  for (const vendor of VENDORS) {
    it(`is a 422 on a ${vendor} slot's webhook, depth 65 and depth 5,000, any Content-Type, before any signature is checked`, async () => {
      for (const depth of [MAX_JSON_DEPTH + 1, 5_000]) {
        for (const type of ['application/json', 'text/plain']) expectTooDeep(await postWebhook(SLOT_OF[vendor], nested(depth), varsFor(vendor), type));
      }
    });
  }

  it("is a 422 on each generic slot's webhook, even when signed, and whatever the Content-Type", async () => {
    for (const slot of ['gateway_one', 'gateway_two', 'gateway_three']) {
      const signed = await signedWebhook(slot, nested(MAX_JSON_DEPTH + 1));
      expectTooDeep(await call(`/webhooks/${slot}`, { method: 'POST', body: signed.body, headers: signed.headers }));
      const asText = { ...signed.headers, 'Content-Type': 'text/plain' };
      expectTooDeep(await call(`/webhooks/${slot}`, { method: 'POST', body: nested(5_000), headers: asText }));
    }
  });

  it('is a 422 on API routes (a user route, an admin route), never a 500', async () => {
    const user = await newUser();
    for (const depth of [MAX_JSON_DEPTH + 1, 5_000]) {
      expectTooDeep(await call('/user/profile', { method: 'PUT', key: user.key, body: nested(depth) }));
      expectTooDeep(await call('/orders', { key: user.key, body: nested(depth) }));
      expectTooDeep(await call('/admin/users', { admin: true, body: nested(depth) }));
      // A route that reads no body refuses it too.
      expectTooDeep(await call('/api-keys/999999999', { method: 'DELETE', key: user.key, body: nested(depth) }));
    }
  });

  it('still answers 401 first when the key is wrong (the credential is checked before the body)', async () => {
    expectError(await call('/user/profile', { method: 'PUT', key: 'sk_live_not_a_real_key_at_all_0000000000', body: nested(5_000) }), 401, 'UNAUTHORIZED');
  });
});

describe('a JSON body exactly 64 levels deep', () => {
  it('is parsed: an API route takes it (the unknown field is ignored)', async () => {
    const user = await newUser();
    const res = await call('/user/profile', { method: 'PUT', key: user.key, body: nested(MAX_JSON_DEPTH) });
    expect(res.status, res.text).toBe(200);
  });

  it("is parsed on a vendor's webhook: an unsigned one is refused by its signature (401), not by its depth", async () => {
    for (const vendor of VENDORS) expectError(await postWebhook(SLOT_OF[vendor], nested(MAX_JSON_DEPTH), varsFor(vendor)), 401, 'UNAUTHORIZED');
  });
});
