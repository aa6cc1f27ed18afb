import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { browserAvailable, launchBrowser } from './browser';
import { contractFetch } from './checked-fetch';

// The whole dashboard journey in Chromium with JavaScript off, at a phone's width, driven by accessible names (labels, roles, button
// text) as a person using a screen reader would: sign up, create a key and use it against the API, add funds through
// the local checkout page, buy in the shop, see the items, cancel, see the refund, sign out. Any console error (a CSP
// violation is one) fails it. Screenshots of each step go to test/e2e/screenshots/ (git-ignored).

const SCREENSHOTS = 'test/e2e/screenshots';
const PHONE = { width: 375, height: 812 };

describe.runIf(browserAvailable)('the dashboard in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchBrowser();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('sign up → key → API → add funds → buy → items → cancel → refund → sign out', async () => {
    // JavaScript off: the dashboard (and the checkout page it sends to) must work with plain forms.
    const context = await browser.newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    let step = 0;
    const screenshot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}/dashboard-${String(++step).padStart(2, '0')}-${name}.png`, fullPage: true });
    const goTo = async (section: string) => {
      const link = page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: section, exact: true });
      const href = await link.getAttribute('href');
      await link.click();
      await page.waitForURL(`${server.origin}${href}`);
    };
    const heading = () => page.getByRole('heading', { level: 1 }).textContent();
    const at = (path: string) => expect(new URL(page.url()).pathname).toBe(path);
    /** Nothing wider than the phone: the page never scrolls sideways (wide tables scroll inside their frame). */
    const fitsThePhone = async (p: Page) => expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    const balance = async (key: string) => (await (await fetch(`${server.api}/wallet/balance`, { headers: { 'X-API-Key': key } })).json()).data.balance;

    // Signed out, the dashboard sends the browser to sign in; from there, sign up.
    await page.goto(`${server.origin}/dashboard`);
    at('/dashboard/sign-in');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/dashboard');
    await fitsThePhone(page);
    await screenshot('sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    const email = `journey-${Date.now()}@example.com`;
    await page.getByLabel('Name', { exact: true }).fill('Journey Tester');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('journey password');
    await page.getByLabel('Confirm password', { exact: true }).fill('journey password');
    await screenshot('sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(`${server.origin}/dashboard`);
    expect(await heading()).toBe('Overview');
    expect(await page.getByRole('definition').first().textContent()).toBe('$0.00');
    await fitsThePhone(page);
    await screenshot('overview-new');

    // A key, shown once, in the page that answered the form (never in the URL).
    await goTo('API keys');
    await page.getByLabel('Name', { exact: true }).fill('journey key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('It will not be shown again').waitFor();
    const key = (await page.getByText(/^sk_live_[0-9A-Za-z]{40}$/).textContent())!;
    expect(page.url()).not.toContain(key);
    await fitsThePhone(page);
    await screenshot('key-created');
    const profile = await (await fetch(`${server.api}/user/profile`, { headers: { 'X-API-Key': key } })).json();
    expect(profile.data).toMatchObject({ email, name: 'Journey Tester', balance: 0 });

    // Add funds: the deposit's payment page (the local checkout), paid there.
    await goTo('Wallet');
    await page.getByLabel('Amount', { exact: true }).fill('25');
    await page.getByLabel('Payment method').selectOption('gateway_one');
    await fitsThePhone(page);
    await page.getByRole('button', { name: 'Add funds' }).click();
    await page.waitForURL(/\/pay\/\d+$/);
    // The checkout page stands in for the gateway's own page, which is not ours and may use script: it is paid in a
    // browser with JavaScript on, then the journey goes on with it off.
    const gatewayContext = await browser.newContext({ viewport: PHONE });
    const gatewayPage = await gatewayContext.newPage();
    await gatewayPage.goto(page.url());
    await gatewayPage.screenshot({ path: `${SCREENSHOTS}/dashboard-${String(++step).padStart(2, '0')}-checkout.png`, fullPage: true });
    await gatewayPage.getByRole('button', { name: 'Pay $25.00' }).click();
    await gatewayPage.getByText('paid', { exact: true }).waitFor();
    await gatewayContext.close();
    expect(await balance(key)).toBe(25);
    await page.goto(`${server.origin}/dashboard/wallet`);
    expect(await page.getByRole('definition').first().textContent()).toBe('$25.00');
    await screenshot('wallet-funded');

    // Buy two items in the shop; the order page lists them.
    await goTo('Shop');
    await fitsThePhone(page);
    const product = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Netflix Premium 1 Month' }) });
    await product.getByLabel('Quantity').fill('2');
    await screenshot('shop');
    await product.getByRole('button', { name: 'Buy' }).click();
    await page.waitForURL(/\/dashboard\/orders\/\d+$/);
    expect(await heading()).toMatch(/^Order ORD-/);
    const items = await page.getByRole('list', { name: 'Delivered items' }).getByRole('listitem').allTextContents();
    expect(items).toHaveLength(2);
    for (const item of items) expect(item).toMatch(/^NFLX-/);
    expect(await balance(key)).toBe(15.02);
    await fitsThePhone(page);
    await screenshot('order');

    // Cancel: the refund restores the balance.
    const orderUrl = page.url();
    await page.getByRole('button', { name: 'Cancel order' }).click();
    await page.waitForURL(orderUrl);
    await page.getByText('cancelled', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel order' }).count()).toBe(0);
    expect(await balance(key)).toBe(25);
    await screenshot('cancelled');
    await goTo('Overview');
    expect(await page.getByRole('definition').first().textContent()).toBe('$25.00');
    await screenshot('overview-after');

    // Sign out: the session is over.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in$/);
    await page.goto(`${server.origin}/dashboard/orders`);
    at('/dashboard/sign-in');
    expect(await context.cookies()).toEqual([]);

    expect(consoleErrors).toEqual([]);
    await context.close();
  });

  it('serves the stylesheet and icon as static files with the pages\' security headers (public/_headers)', async () => {
    for (const [path, type] of [['/dashboard/assets/app.css', 'text/css'], ['/dashboard/assets/icon.svg', 'image/svg+xml']]) {
      const res = await globalThis.fetch(`${server.origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Content-Type'), path).toContain(type);
      expect(res.headers.get('Cache-Control'), path).toBe('no-store');
      expect(res.headers.get('X-Content-Type-Options'), path).toBe('nosniff');
      expect(res.headers.get('Referrer-Policy'), path).toBe('same-origin');
      expect(res.headers.get('Content-Security-Policy'), path).toContain("frame-ancestors 'none'");
    }
  });
});
