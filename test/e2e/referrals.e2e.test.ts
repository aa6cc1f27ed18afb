import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser } from './browser';
import { contractFetch } from './checked-fetch';

// Referrals in Chromium with JavaScript off: a reseller copies the link from the dashboard's Referrals page, a new
// buyer opens it, signs up (the code comes from the link's cookie), is funded and buys; the reseller sees the earning.
// Any console error or CSP violation fails it.

describe.runIf(browserAvailable)('referrals in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();

  const send = async (method: string, path: string, body: unknown) => (await fetch(`${server.api}${path}`, { method, headers: admin, body: JSON.stringify(body) })).json();

  async function newPage(errors: string[]): Promise<Page> {
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    return page;
  }

  it('a reseller copies the link, a new buyer signs up through it and buys, the reseller sees the earning', async () => {
    await send('PUT', '/admin/settings/referrals', { percent: 10, hold_days: 14 });
    const stamp = Date.now();
    const reseller = { email: `reseller-${stamp}@example.com`, password: 'reseller password 1' };
    await send('POST', '/admin/users', { name: 'Rita Reseller', ...reseller });
    const sku = `E2E-REF-${stamp}`;
    const product = (await send('POST', '/admin/products', { name: 'E2E Referral Key', sku, price: 12.5 })).data;
    await send('POST', `/admin/products/${product.id}/stock`, { items: [`${sku}-1`] });

    const errors: string[] = [];
    const resellerPage = await newPage(errors);
    await resellerPage.goto(`${server.origin}/dashboard/sign-in`);
    await resellerPage.getByLabel('Email', { exact: true }).fill(reseller.email);
    await resellerPage.getByLabel('Password', { exact: true }).fill(reseller.password);
    await resellerPage.getByRole('button', { name: 'Sign in' }).click();
    await resellerPage.waitForURL(`${server.origin}/dashboard`);
    await resellerPage.getByRole('link', { name: 'Referrals' }).click();
    await resellerPage.waitForURL(`${server.origin}/dashboard/referrals`);
    // "Copy": the link is a read-only field (the dashboard runs no script).
    const link = await resellerPage.getByLabel('Link (select it and copy)').inputValue();
    expect(link).toMatch(new RegExp(`^${server.origin}/r/[0-9A-F]{16}$`));

    const buyer = { email: `referred-${stamp}@example.com`, password: 'buyer password 1' };
    const buyerPage = await newPage(errors);
    await buyerPage.goto(link);
    await buyerPage.waitForURL(`${server.origin}/shop`);
    await buyerPage.goto(`${server.origin}/dashboard/sign-up`);
    expect(await buyerPage.getByLabel('Referral code (optional)').inputValue()).toBe(link.split('/r/')[1]);
    await buyerPage.getByLabel('Name').fill('Bob Buyer');
    await buyerPage.getByLabel('Email').fill(buyer.email);
    await buyerPage.getByLabel('Password', { exact: true }).fill(buyer.password);
    await buyerPage.getByLabel('Confirm password').fill(buyer.password);
    await buyerPage.getByRole('button', { name: 'Create account' }).click();
    await buyerPage.waitForURL(`${server.origin}/dashboard`);

    const found = await (await fetch(`${server.api}/admin/users?email=${encodeURIComponent(buyer.email)}`, { headers: admin })).json();
    expect(found.data[0].referred_by).toBe(link.split('/r/')[1]);
    await send('POST', `/admin/users/${found.data[0].id}/balance-adjustments`, { amount: 20, description: 'e2e funding' });
    await buyerPage.goto(`${server.origin}/dashboard/shop/${product.id}`);
    await buyerPage.getByRole('button', { name: 'Buy' }).click();
    await buyerPage.waitForURL(`${server.origin}/dashboard/shop/${product.id}/review`);
    await buyerPage.getByRole('button', { name: 'Confirm purchase' }).click();
    await buyerPage.waitForURL(/\/dashboard\/orders\/\d+\?notice=charged$/);

    await resellerPage.reload();
    // 12.50 x 10 % = 1.25, held 14 days.
    const earnings = resellerPage.getByRole('table', { name: 'Referral earnings, newest first' });
    await earnings.getByRole('cell', { name: '$1.25' }).waitFor();
    await earnings.getByText('pending').waitFor();
    expect(errors).toEqual([]);
  });
});
