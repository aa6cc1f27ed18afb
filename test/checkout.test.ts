import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from './contract';
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
});
