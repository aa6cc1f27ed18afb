import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCheckedApp, useInvocationOptions } from '../contract';
import { newProduct, newUser } from '../helpers';
import { seededRandom } from '../production-d1';

const app = createCheckedApp();
const logging = { ...env, LOG_REQUESTS: 'true' };

function captureLogs() {
  const lines: string[] = [];
  for (const method of ['log', 'info', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  }
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe('request logs', () => {
  it('writes one JSON line per request with route pattern, status, duration, user and cache status', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ stock: 2 });
    const lines = captureLogs();
    const res = await app.request(`/api/v2/orders/12345?page=1`, { headers: { 'X-API-Key': user.key, 'X-Request-Id': 'trace-1' } }, logging);
    expect(res.status).toBe(404);
    await app.request(`/api/v2/stock/${product.id}`, {}, logging);
    expect(lines).toHaveLength(2);
    const [order, stock] = lines.map((line) => JSON.parse(line));
    expect(order).toMatchObject({ msg: 'request', request_id: 'trace-1', method: 'GET', route: '/api/v2/orders/:id', status: 404, user: user.id, level: 'warn' });
    expect(typeof order.duration_ms).toBe('number');
    expect(stock).toMatchObject({ route: '/api/v2/stock/:product_id', status: 200, user: 'public' });
    expect(['hit', 'miss']).toContain(stock.cache);
  });

  it('never logs an API key, even one sent as the api_key query parameter, nor a password', async () => {
    const user = await newUser();
    const lines = captureLogs();
    await app.request(`/api/v2/wallet/balance?api_key=${user.key}`, {}, logging);
    await app.request(`/api/v2/wallet/balance?api_key=${user.key.slice(0, -1)}X`, {}, logging);
    await app.request('/api/v2/user/password', {
      method: 'POST',
      headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ current_password: 'wrong-password-123', new_password: 'n3w-password!', new_password_confirmation: 'n3w-password!' }),
    }, logging);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    const all = lines.join('\n');
    expect(all).not.toContain(user.key);
    expect(all).not.toContain(user.key.slice(8, 30));
    expect(all).not.toContain('wrong-password-123');
    expect(all).not.toContain('n3w-password!');
    expect(all).not.toContain('api_key');
  });

  it('logs an unexpected error with its stack server-side only', async () => {
    const lines = captureLogs();
    const broken = { ...logging, DB: undefined as unknown as D1Database };
    const res = await app.request('/api/v2/stock/1', {}, { ...broken, STOCK_CACHE_SECONDS: '0' });
    expect(res.status).toBe(500);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ success: false, error: 'Internal server error.', code: 'INTERNAL_ERROR' });
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.some((e) => e.level === 'error' && typeof e.stack === 'string')).toBe(true);
    expect(entries.some((e) => e.msg === 'request' && e.status === 500 && e.level === 'error')).toBe(true);
  });
});

describe('error logs under database faults', () => {
  it('a fault is logged by class and D1 message only: no bound value, key, item or SQL; the answer is 503', async () => {
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 1, stock: 3 });
    const secretKey = 'idem-SECRET-7f3a9c';
    const restore = useInvocationOptions(() => ({ faults: { rate: 1, random: seededRandom(7) } }));
    const lines = captureLogs();
    try {
      const purchase = await app.request(
        '/api/v2/orders',
        {
          method: 'POST',
          headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json', 'Idempotency-Key': secretKey },
          body: JSON.stringify({ product_id: product.id, quantity: 1 }),
        },
        logging,
      );
      expect(purchase.status).toBe(503);
      // A drizzle-built read: drizzle wraps D1's error in a message that quotes the SQL and its parameters.
      const stock = await app.request(`/api/v2/stock/${product.id}`, {}, { ...logging, STOCK_CACHE_SECONDS: '0' });
      expect(stock.status).toBe(503);
    } finally {
      restore();
    }
    const errors = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 'error' && entry.msg !== 'request');
    expect(errors.length).toBeGreaterThanOrEqual(2);
    for (const entry of errors) expect(entry).toMatchObject({ class: expect.any(String), message: expect.stringContaining('D1_ERROR') });
    const text = lines.join('\n');
    for (const secret of [secretKey, user.key, `${product.id}, 1`, 'SELECT', 'INSERT', 'params']) expect(text).not.toContain(secret);
  });
});
