import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, settled } from './browser';
import { contractFetch } from './checked-fetch';

// After the sale in Chromium with JavaScript off: a buyer reports a problem with a delivered code on the order's page,
// the operator replaces it from the console's Claims page (the nav counts the open claim), and the buyer sees the new
// code in the same place of the order. Any console error or CSP violation fails it.

const OPERATOR = { email: 'operator@example.com', password: 'operator-password' }; // scripts/seed.mjs

describe.runIf(browserAvailable)('after the sale in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();


  async function signedIn(email: string, password: string, errors: string[]): Promise<Page> {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard(\/console)?$/);
    return page;
  }

  const post = async (path: string, body: unknown, headers: Record<string, string> = admin) =>
    (await fetch(`${server.api}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json();

  it('the buyer reports a problem, the operator replaces the item, the buyer sees the new one', async () => {
    const sku = `E2E-WARRANTY-${Date.now()}`;
    const product = (await post('/admin/products', { name: 'E2E Warranty Key', sku, price: 2, cancellable: false, warranty_hours: 48 })).data;
    await post(`/admin/products/${product.id}/stock`, { items: [`${sku}-KEY-1`, `${sku}-KEY-2`] });
    const email = `warranty-${Date.now()}@example.com`;
    const buyer = (await post('/admin/users', { name: 'Wanda Warranty', email, password: 'buyer password 1' })).data;
    await post(`/admin/users/${buyer.id}/balance-adjustments`, { amount: 10, description: 'e2e funding' });
    const order = (await post('/orders', { product_id: product.id, quantity: 1 }, { 'X-API-Key': buyer.api_key, 'Content-Type': 'application/json' })).data;
    expect(order.stock_items).toEqual([`${sku}-KEY-1`]);

    const errors: string[] = [];
    const buyerPage = await signedIn(email, 'buyer password 1', errors);
    await buyerPage.goto(`${server.origin}/dashboard/orders/${order.id}`);
    await buyerPage.getByText('Report a problem').click();
    await buyerPage.getByLabel('What is wrong with this item?').fill('The key says it was already used.');
    await buyerPage.getByRole('button', { name: 'Send report' }).click();
    await buyerPage.waitForURL(/\?notice=reported$/);
    await buyerPage.getByText('Problem reported: the shop will look at it').waitFor();

    const operatorPage = await signedIn(OPERATOR.email, OPERATOR.password, errors);
    await operatorPage.goto(`${server.origin}/dashboard/console`);
    const claimsLink = operatorPage.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: /^Claims/ });
    expect(await claimsLink.textContent()).toMatch(/Claims \d+/);
    await claimsLink.click();
    await operatorPage.waitForURL(`${server.origin}/dashboard/console/claims`);
    const row = operatorPage.getByRole('row').filter({ hasText: 'The key says it was already used.' });
    // The claim's own page decides; Replace moves stock, so it asks first.
    await row.getByRole('link', { name: 'Decide' }).click();
    await operatorPage.getByRole('button', { name: 'Replace' }).click();
    await operatorPage.getByRole('button', { name: 'Confirm' }).click();
    await operatorPage.getByText('Item replaced').waitFor();
    await settled(operatorPage);

    await buyerPage.goto(`${server.origin}/dashboard/orders/${order.id}`);
    const items = buyerPage.getByRole('list', { name: 'Delivered items' });
    await items.getByText(`${sku}-KEY-2`).waitFor();
    expect(await items.textContent()).not.toContain(`${sku}-KEY-1`);
    await buyerPage.getByText('Replaced: the item above is the new one.').waitFor();
    expect(errors).toEqual([]);
  });
});
