import { env } from 'cloudflare:test';
import { SELF } from './contract';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from './contract';
import { BASE, expectError, newUser } from './helpers';

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
    const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
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

  it('a missing key is refused before it can spend anyone’s budget', async () => {
    const res = await SELF.fetch(`${BASE}/wallet/balance`);
    expect(res.status).toBe(401);
  });
});
