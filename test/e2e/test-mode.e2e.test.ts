import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, PHONE } from './browser';
import { contractFetch } from './checked-fetch';

// Test mode in Chromium with JavaScript off: the dashboard's key form makes a Test key (listed beside the live one,
// marked), the key buys at once with its test money, and the test gateway's page pays a test deposit.

describe.runIf(browserAvailable)('test mode in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const browser = useBrowser();


  it('key form: Test → a sk_test_ key with $1,000.00 of test money; the test payment page pays a deposit', async () => {
    const email = `tester-${Date.now()}@example.com`;
    const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Test Mode Tess', email, password: 'test mode password' }) });
    expect(created.status).toBe(201);

    const context = await browser().newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) && errors.push(message.text()));

    await page.goto(`${server.origin}/dashboard/sign-in?next=%2Fdashboard%2Fkeys`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('test mode password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard/keys`);

    await page.getByLabel('Name', { exact: true }).fill('sandbox key');
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('It will not be shown again').waitFor();
    const key = (await page.getByText(/^sk_test_[0-9A-Za-z]{40}$/).textContent())!;
    const table = page.getByRole('table', { name: 'Active API keys' });
    await expect.poll(() => table.getByText('Test', { exact: true }).count()).toBe(1);
    await expect.poll(() => table.getByText('Live', { exact: true }).count()).toBe(1);

    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${server.api}${path}`, { ...init, headers: { 'X-API-Key': key, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });
    expect((await (await api('/wallet/balance')).json()).data.balance).toBe(1000);
    const stock = (await (await api('/stock')).json()).data as Array<{ product_id: number; sku: string; stock_count: number }>;
    const product = stock.find((p) => p.sku === 'NFLX-1M')!;
    expect(product.stock_count).toBeGreaterThan(0);
    const order = await api('/orders', { method: 'POST', body: JSON.stringify({ product_id: product.product_id, quantity: 1 }) });
    expect(order.status).toBe(201);
    expect((await order.json()).data.stock_items[0]).toMatch(/^TEST-/);

    const deposit = (await (await api('/wallet/deposit', { method: 'POST', body: JSON.stringify({ amount: 20, gateway: 'gateway_three' }) })).json()).data;
    expect(deposit.payment_url).toBe(`${server.origin}/test/pay/${deposit.deposit_id}`);
    await page.goto(deposit.payment_url);
    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await expect.poll(() => page.locator('#status').textContent()).toBe('paid');
    const after = (await (await api('/wallet/balance')).json()).data.balance;
    expect(after).toBe(1000 - (await (await api('/orders')).json()).data[0].total_amount + 20);
    expect(errors).toEqual([]);
    await context.close();
  });
});
