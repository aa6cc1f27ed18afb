import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp, SELF } from './contract';
import { balanceOf, newDeposit, newUser } from './helpers';

// The dev checkout page in the worker (the browser test in test/e2e drives it for real).
describe('dev checkout page', () => {
  it('shows the deposit and its Pay button credits the wallet through the signed webhook', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 12.5, gateway: 'gateway_two' });
    const app = createCheckedApp();
    const page = await app.request(`/pay/${deposit.deposit_id}`, {}, env);
    expect(page.status).toBe(200);
    expect(page.headers.get('Content-Type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('$12.50');
    expect(html).toContain('gateway_two (USDT)');
    const paid = await app.request(`/pay/${deposit.deposit_id}/pay`, { method: 'POST' }, env);
    expect(paid.status).toBe(200);
    expect(((await paid.json()) as any).data.status).toBe('paid');
    expect(await balanceOf(user)).toBe(12.5);
  });

  it('does not exist when DEV_CHECKOUT is not "true" (the production default)', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5 });
    const app = createCheckedApp();
    for (const value of ['false', undefined]) {
      const off = { ...env, DEV_CHECKOUT: value };
      expect((await app.request(`/pay/${deposit.deposit_id}`, {}, off)).status).toBe(404);
      expect((await app.request(`/pay/${deposit.deposit_id}/pay`, { method: 'POST' }, off)).status).toBe(404);
    }
    expect(await balanceOf(user)).toBe(0);
  });

  it('is a 404 on any host but localhost and 127.0.0.1 (any port), even with DEV_CHECKOUT=true', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 5 });
    const app = createCheckedApp();
    for (const host of ['shop.example.com', 'stock-wallet-api.acme.workers.dev', 'localhost.example.com', '127.0.0.2', '[::1]']) {
      expect((await app.request(`http://${host}/pay/${deposit.deposit_id}`, {}, env)).status, host).toBe(404);
      expect((await app.request(`https://${host}/pay/${deposit.deposit_id}/pay`, { method: 'POST' }, env)).status, host).toBe(404);
    }
    // The deployed worker itself, reached under its own host name (the URL a worker sees carries the Host header).
    expect((await SELF.fetch(`https://api.example.com/pay/${deposit.deposit_id}/pay`, { method: 'POST' })).status).toBe(404);
    expect(await balanceOf(user)).toBe(0);
    for (const origin of ['http://127.0.0.1:8787', 'http://localhost:5173']) {
      expect((await app.request(`${origin}/pay/${deposit.deposit_id}`, {}, env)).status, origin).toBe(200);
    }
  });
});
