import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp, SELF } from '../contract';
import { balanceOf, newDeposit, newUser } from '../helpers';

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
    // the page's own script posts from the page's origin (a browser sends Origin on every POST)
    const paid = await app.request(`/pay/${deposit.deposit_id}/pay`, { method: 'POST', headers: { Origin: 'http://localhost' } }, env);
    expect(paid.status).toBe(200);
    expect(((await paid.json()) as any).data.status).toBe('paid');
    expect(await balanceOf(user)).toBe(12.5);
  });

  it('refuses posts from another origin with 403 FORBIDDEN: nothing is paid, failed or credited', async () => {
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 20 });
    const app = createCheckedApp();
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const attempts: Array<[string, Record<string, string>]> = [
      ['pay', { ...form, Origin: 'https://evil.example' }],
      ['fail', { ...form, Origin: 'https://evil.example' }],
      ['pay', { Origin: 'http://localhost:8787' }], // another port is another origin
      ['pay', { ...form, 'Sec-Fetch-Site': 'cross-site' }],
      ['pay', {}], // no Origin at all (a plain curl): the README's tour sends the page's own
    ];
    for (const [outcome, headers] of attempts) {
      const res = await app.request(`/pay/${deposit.deposit_id}/${outcome}`, { method: 'POST', headers, body: outcome === 'pay' ? 'x=1' : undefined }, env);
      expect(res.status, `${outcome} ${JSON.stringify(headers)}`).toBe(403);
      expect(await res.json()).toMatchObject({ success: false, code: 'FORBIDDEN' });
    }
    const row = await env.DB.prepare('SELECT status FROM deposits WHERE id = ?').bind(deposit.deposit_id).first('status');
    expect(row).toBe('pending');
    expect(await balanceOf(user)).toBe(0);

    // Sec-Fetch-Site: same-origin (what a browser sends from the page itself) is enough
    const paid = await app.request(`/pay/${deposit.deposit_id}/pay`, { method: 'POST', headers: { 'Sec-Fetch-Site': 'same-origin' } }, env);
    expect(paid.status).toBe(200);
    expect(await balanceOf(user)).toBe(20);
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
