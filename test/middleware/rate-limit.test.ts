import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { call, expectError, newUser } from '../helpers';

// The suite's limiters are generous; these tests swap in a real limiter of 3 requests a minute.
const app = createCheckedApp();
const tiny = { ...env, API_KEY_RATE_LIMITER: env.TINY_RATE_LIMITER, PUBLIC_RATE_LIMITER: env.TINY_RATE_LIMITER };

async function requestTiny(path: string, headers: Record<string, string> = {}) {
  const res = await app.request(path, { headers }, tiny);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
}

describe('rate limits', () => {
  it('limits an API key on authenticated routes: 429 RATE_LIMITED with Retry-After', async () => {
    const user = await newUser();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await requestTiny('/api/v2/wallet/balance', { 'X-API-Key': user.key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await requestTiny('/api/v2/wallet/balance', { 'X-API-Key': user.key });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('Retry-After')).toBe('60');

    // Another user's key has its own budget.
    const other = await newUser();
    expect((await requestTiny('/api/v2/wallet/balance', { 'X-API-Key': other.key })).status).toBe(200);
  });

  it('counts a request on a bare collection path once (GET /orders, GET /api-keys)', async () => {
    for (const path of ['/api/v2/orders', '/api/v2/api-keys']) {
      const user = await newUser();
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await requestTiny(path, { 'X-API-Key': user.key })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    }
  });

  it('limits public routes per client IP, each IP on its own', async () => {
    const ip = '198.51.100.7'; // an address no other test uses, so its budget starts full
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await requestTiny('/api/v2/stock', { 'CF-Connecting-IP': ip })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await requestTiny('/api/v2/stock', { 'CF-Connecting-IP': `${ip}1` })).status).toBe(200);
  });

  it('does not limit admin and webhook routes', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await app.request('/api/v2/admin/products/999999999', { method: 'PATCH', headers: { Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/json' }, body: '{}' }, tiny);
      expect(res.status).toBe(404);
    }
    for (let i = 0; i < 5; i++) {
      const res = await app.request('/api/v2/webhooks/gateway_one', { method: 'POST', body: '{}' }, tiny);
      expect(res.status).toBe(401);
    }
  });

  it('limits count per key hash before any D1 call: a wrong or revoked key never spends the owner’s budget', async () => {
    const user = await newUser();
    const created = await call('/api-keys', { key: user.key, body: { name: 'to revoke' } });
    expect((await call(`/api-keys/${created.json.data.id}`, { key: user.key, method: 'DELETE' })).status).toBe(200);
    const revoked: string = created.json.data.key;
    // The tiny limiter (3 a minute per key), with every consultation recorded.
    const consulted: string[] = [];
    const recording: RateLimit = { limit: (options) => (consulted.push(options.key), env.TINY_RATE_LIMITER.limit(options)) };
    const recorded = { ...env, API_KEY_RATE_LIMITER: recording, PUBLIC_RATE_LIMITER: recording };
    const send = async (path: string, headers: Record<string, string> = {}) => (await app.request(path, { headers }, recorded)).status;

    // No key: refused before the limiter. A well-formed wrong or revoked key: counted under its own hash (the limiter
    // runs before D1, so it cannot know the key is bad), refused with 401 until its own budget runs out, then 429.
    for (let i = 0; i < 5; i++) expect(await send('/api/v2/wallet/balance')).toBe(401);
    expect(consulted).toEqual([]);
    const wrong = [];
    for (let i = 0; i < 4; i++) wrong.push(await send('/api/v2/wallet/balance', { 'X-API-Key': `${user.key.slice(0, -1)}${user.key.endsWith('x') ? 'y' : 'x'}` }));
    expect(wrong).toEqual([401, 401, 401, 429]);
    const revokedStatuses = [await send('/api/v2/wallet/balance', { 'X-API-Key': revoked }), await send(`/api/v2/wallet/balance?api_key=${encodeURIComponent(revoked)}`)];
    expect(revokedStatuses).toEqual([401, 401]);
    const badKeys = new Set(consulted);
    expect(badKeys.size).toBe(2);

    // The owner's valid key still has its whole budget of 3, counted against that key alone.
    consulted.length = 0;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await send('/api/v2/wallet/balance', { 'X-API-Key': user.key }));
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(new Set(consulted).size).toBe(1);
    expect(badKeys.has(consulted[0])).toBe(false);
    expect(consulted[0]).not.toContain(user.key);
  });
});
