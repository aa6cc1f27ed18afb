import type { Browser } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser } from './browser';
import { contractFetch } from './checked-fetch';

async function json(res: Response) {
  const body = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body as any;
}

describe.runIf(browserAvailable)('local checkout page in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const browser = useBrowser();


  it('pays a deposit through the checkout page and the wallet is credited once', async () => {
    const user = await json(
      await fetch(`${server.api}/admin/users`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Browser Buyer', email: `buyer-${Date.now()}@example.com`, password: 'a-long-password' }),
      }),
    );
    const key = user.data.api_key as string;
    const authed = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const deposit = await json(
      await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: authed, body: JSON.stringify({ amount: 25.5, gateway: 'gateway_one' }) }),
    );
    expect(deposit.data.payment_url).toBe(`${server.origin}/pay/${deposit.data.deposit_id}`);

    const page = await browser().newPage();
    await page.goto(deposit.data.payment_url);
    await expect(page.locator('#amount').textContent()).resolves.toBe('$25.50');
    await expect(page.locator('#status').textContent()).resolves.toBe('pending');
    expect(await page.locator('#countdown').textContent()).toMatch(/^\d+m \d\ds$/);

    await page.click('#pay');
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'paid');
    expect(await page.locator('#pay').isDisabled()).toBe(true);
    await page.screenshot({ path: process.env.E2E_SCREENSHOT ?? '/tmp/checkout-paid.png' });

    const balance = await json(await fetch(`${server.api}/wallet/balance`, { headers: authed }));
    expect(balance.data.balance).toBe(25.5);

    // A second delivery (reloaded page, forced click) is a replay: no second credit.
    await page.reload();
    await expect(page.locator('#status').textContent()).resolves.toBe('paid');
    await page.evaluate(() => fetch(location.pathname + '/pay', { method: 'POST' }));
    const ledger = await json(await fetch(`${server.api}/wallet/transactions`, { headers: authed }));
    expect(ledger.data.filter((t: { type: string }) => t.type === 'deposit')).toHaveLength(1);
    expect((await json(await fetch(`${server.api}/wallet/balance`, { headers: authed }))).data.balance).toBe(25.5);
  });

  it('a failed payment closes the deposit without credit', async () => {
    const res = await fetch(`${server.api}/admin/users`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Unlucky', email: `unlucky-${Date.now()}@example.com`, password: 'a-long-password' }),
    });
    const key = (await json(res)).data.api_key as string;
    const authed = { 'X-API-Key': key, 'Content-Type': 'application/json' };
    const deposit = await json(
      await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: authed, body: JSON.stringify({ amount: 10, gateway: 'gateway_three' }) }),
    );
    expect(deposit.data.payment_url).toBe(`${server.origin}/pay/${deposit.data.deposit_id}`);
    const page = await browser().newPage();
    await page.goto(deposit.data.payment_url);
    await page.click('#fail');
    await page.waitForFunction(() => document.getElementById('status')?.textContent === 'failed');
    const status = await json(await fetch(`${server.api}/wallet/deposits/${deposit.data.deposit_id}/status`, { headers: authed }));
    expect(status.data.status).toBe('failed');
    expect((await json(await fetch(`${server.api}/wallet/balance`, { headers: authed }))).data.balance).toBe(0);
  });
});
