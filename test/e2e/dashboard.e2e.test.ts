import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { actionsInView, browserAvailable, useBrowser, DESKTOP, fitsThePhone, PHONE } from './browser';
import { contractFetch } from './checked-fetch';

// The whole dashboard journey in Chromium with JavaScript off, at a phone's width, driven by accessible names (labels, roles, button
// text) as a person using a screen reader would: sign up, create a key and use it against the API, add funds through
// the local checkout page, buy in the shop, see the items, cancel, see the refund, sign out. Any console error (a CSP
// violation is one) fails it. Every measurement waits until the page is as a person sees it: loaded, its stylesheet
// applied, its fonts settled. Screenshots of each step go to E2E_SCREENSHOTS (default: a folder in the system temp
// directory, outside the repository, so nothing a running `npm run dev` watches is touched).

const SCREENSHOTS = process.env.E2E_SCREENSHOTS ?? join(tmpdir(), 'stock-wallet-e2e-screenshots');

/** Visible and wholly inside the phone's width (not clipped, not off to the right). */
async function onScreen(locator: Locator) {
  const box = await locator.boundingBox();
  expect(box, 'rendered').not.toBeNull();
  expect(box!.x, 'left edge on screen').toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, 'right edge on screen').toBeLessThanOrEqual(PHONE.width);
}

describe.runIf(browserAvailable)('the dashboard in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const browser = useBrowser();

  beforeAll(() => {
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  it('sign up → key → API → add funds → buy → items → cancel → refund → sign out', async () => {
    // JavaScript off: the dashboard (and the checkout page it sends to) must work with plain forms. The browser reaches
    // this server alone: a request to any other origin is refused and fails the test.
    const offOrigin: string[] = [];
    const phone = async (options: { javaScriptEnabled: boolean }) => {
      const ctx = await browser().newContext({ viewport: PHONE, ...options });
      await ctx.route('**/*', (route) => {
        if (new URL(route.request().url()).origin === server.origin) return route.continue();
        offOrigin.push(route.request().url());
        return route.abort();
      });
      return ctx;
    };
    const context = await phone({ javaScriptEnabled: false });
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
    await onScreen(page.getByRole('button', { name: 'Revoke' }).first());
    await screenshot('key-created');
    const profile = await (await fetch(`${server.api}/user/profile`, { headers: { 'X-API-Key': key } })).json();
    expect(profile.data).toMatchObject({ email, name: 'Journey Tester', balance: 0 });

    // Add funds: the deposit's payment page (the local checkout), paid there.
    await goTo('Wallet');
    await page.getByLabel('Amount', { exact: true }).fill('25');
    await page.getByLabel('Payment method').selectOption('gateway_one');
    await fitsThePhone(page);
    await page.getByRole('button', { name: 'Add funds' }).click();
    await page.waitForURL(new RegExp(`^${server.origin}/pay/\\d+$`));
    // The checkout page stands in for the gateway's own page, which is not ours and may use script: it is paid in a
    // browser with JavaScript on, then the journey goes on with it off.
    const gatewayContext = await phone({ javaScriptEnabled: true });
    const gatewayPage = await gatewayContext.newPage();
    await gatewayPage.goto(page.url());
    await gatewayPage.screenshot({ path: `${SCREENSHOTS}/dashboard-${String(++step).padStart(2, '0')}-checkout.png`, fullPage: true });
    await gatewayPage.getByRole('button', { name: 'Pay $25.00' }).click();
    await gatewayPage.getByText('paid', { exact: true }).waitFor();
    await gatewayContext.close();
    expect(await balance(key)).toBe(25);
    // Back from the checkout page (still open with JavaScript off) to the wallet, by its link.
    await page.reload();
    await fitsThePhone(page);
    await page.getByRole('link', { name: 'Back to your wallet' }).click();
    await page.waitForURL(`${server.origin}/dashboard/wallet`);
    expect(await page.getByRole('definition').first().textContent()).toBe('$25.00');
    await fitsThePhone(page);
    await screenshot('wallet-funded');

    // Buy two items in the shop; the order page lists them.
    await goTo('Shop');
    await fitsThePhone(page);
    const product = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Netflix Premium 1 Month' }) });
    await product.getByLabel('Quantity').fill('2');
    await screenshot('shop');
    await product.getByRole('button', { name: 'Buy' }).click();
    // The review: nothing is charged until "Confirm purchase".
    await page.waitForURL(/\/dashboard\/shop\/\d+\/review$/);
    expect(await page.getByRole('definition').last().textContent()).toBe('$9.98');
    await fitsThePhone(page);
    await page.getByRole('button', { name: 'Confirm purchase' }).click();
    await page.waitForURL(/\/dashboard\/orders\/\d+\?notice=charged$/);
    expect(await heading()).toMatch(/^Order ORD-/);
    expect(await page.getByRole('status').textContent()).toBe('Charged $9.98');
    const items = await page.getByRole('list', { name: 'Delivered items' }).getByRole('listitem').allTextContents();
    expect(items).toHaveLength(2);
    for (const item of items) expect(item).toMatch(/^NFLX-/);
    expect(await balance(key)).toBe(15.02);
    await fitsThePhone(page);
    await screenshot('order');

    // The orders list at the phone's width: Total and Status on screen, beside the order's number.
    await goTo('Orders');
    await fitsThePhone(page);
    for (const column of ['Order', 'Total', 'Status']) await onScreen(page.locator(`td[data-label="${column}"]`).first());
    expect(await page.locator('td[data-label="Total"]').first().textContent()).toContain('$9.98');
    await screenshot('orders');
    await page.goBack();

    // Cancel: the refund restores the balance.
    const orderUrl = page.url().replace('?notice=charged', '');
    await page.getByText(/^Delivered · can be cancelled until /).waitFor();
    await page.getByRole('button', { name: 'Cancel order' }).click();
    // It asks first: the confirmation page says what will happen; Back changes nothing, Confirm cancels.
    await page.waitForURL((url) => url.pathname === `${new URL(orderUrl).pathname}/cancel/confirm`);
    expect(await page.locator('#confirm-effect').textContent()).toContain('$9.98 goes back to your wallet');
    await screenshot('cancel-confirm');
    await page.getByRole('link', { name: 'Back' }).click();
    await page.waitForURL(orderUrl);
    expect(await balance(key)).toBe(15.02);
    await page.getByRole('button', { name: 'Cancel order' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL(`${orderUrl}?notice=refunded`);
    expect(await page.getByRole('status').textContent()).toBe('Refunded $9.98');
    await page.getByText('Cancelled · refunded $9.98', { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Cancel order' }).count()).toBe(0);
    expect(await balance(key)).toBe(25);
    await screenshot('cancelled');
    await goTo('Overview');
    expect(await page.getByRole('definition').first().textContent()).toBe('$25.00');
    await screenshot('overview-after');

    // A password change in another browser ends this session: the next page is the sign-in page, saying why.
    const other = await phone({ javaScriptEnabled: false });
    const otherPage = await other.newPage();
    await otherPage.goto(`${server.origin}/dashboard/sign-in`);
    await otherPage.getByLabel('Email', { exact: true }).fill(email);
    await otherPage.getByLabel('Password', { exact: true }).fill('journey password');
    await otherPage.getByRole('button', { name: 'Sign in' }).click();
    await otherPage.waitForURL(`${server.origin}/dashboard`);
    await otherPage.goto(`${server.origin}/dashboard/profile`);
    // The profile form has a "Current password" of its own (for an email change): this is the password form's.
    await otherPage.getByRole('region', { name: 'Change password' }).getByLabel('Current password', { exact: true }).fill('journey password');
    await otherPage.getByLabel('New password', { exact: true }).fill('a new journey password');
    await otherPage.getByLabel('Confirm password', { exact: true }).fill('a new journey password');
    await otherPage.getByRole('button', { name: 'Change password' }).click();
    await otherPage.waitForURL(`${server.origin}/dashboard/profile?done=password_changed`);
    await other.close();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Orders', exact: true }).click();
    await page.waitForURL(`${server.origin}/dashboard/sign-in?next=%2Fdashboard%2Forders`);
    expect(await page.getByRole('status').textContent()).toBe('Your session ended; sign in again');
    await fitsThePhone(page);
    await screenshot('session-ended');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('a new journey password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard/orders`);

    // Sign out: the session is over, and the sign-in page has nothing to explain.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in$/);
    expect(await page.getByRole('status').count()).toBe(0);
    await page.goto(`${server.origin}/dashboard/orders`);
    at('/dashboard/sign-in');
    expect(await context.cookies()).toEqual([]);

    expect(consoleErrors).toEqual([]);
    expect(offOrigin).toEqual([]);
    await context.close();
  });

  it('every page at 1280 and 375 px: nothing scrolls sideways, every button inside the window', async () => {
    // A user with something on every page: a key, funds, an order, a pending deposit.
    const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
    const email = `widths-${Date.now()}@example.com`;
    const password = 'widths password 1';
    const created = (await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Wide Narrow', email, password }) })).json()).data;
    const user = { 'X-API-Key': created.api_key as string, 'Content-Type': 'application/json' };
    await fetch(`${server.api}/admin/users/${created.id}/balance-adjustments`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 30, description: 'e2e funding' }) });
    const order = (await (await fetch(`${server.api}/orders`, { method: 'POST', headers: user, body: JSON.stringify({ product_id: 2, quantity: 1 }) })).json()).data;
    await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: user, body: JSON.stringify({ amount: 12.5, gateway: 'gateway_one' }) });

    const pages = ['/dashboard', '/dashboard/keys', '/dashboard/wallet', '/dashboard/orders', `/dashboard/orders/${order.id}`, '/dashboard/shop', '/dashboard/profile'];
    for (const viewport of [DESKTOP, PHONE]) {
      const context = await browser().newContext({ viewport, javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(`${server.origin}/dashboard/sign-in`);
      await actionsInView(page);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByLabel('Password', { exact: true }).fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.origin}/dashboard`);
      for (const path of pages) {
        await page.goto(`${server.origin}${path}`);
        expect(new URL(page.url()).pathname).toBe(path);
        await actionsInView(page);
        await page.screenshot({ path: `${SCREENSHOTS}/dashboard-${viewport.width}${path.replaceAll('/', '-')}.png`, fullPage: true });
      }
      await context.close();
    }
  });

  it('serves the stylesheet and icon under content-hashed URLs, cached for a year, with the pages\' security headers', async () => {
    const html = await (await globalThis.fetch(`${server.origin}/dashboard/sign-in`)).text();
    const links = [...html.matchAll(/<link rel="(stylesheet|icon)" href="([^"]+)"/g)].map((m) => m[2]);
    expect(links).toHaveLength(2);
    for (const [path, type] of [[links[0], 'text/css'], [links[1], 'image/svg+xml']]) {
      expect(path).toMatch(/^\/dashboard\/assets\/(app|icon)\.[0-9a-f]{16}\.(css|svg)$/);
      const res = await globalThis.fetch(`${server.origin}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('Content-Type'), path).toContain(type);
      expect(res.headers.get('Cache-Control'), path).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('X-Content-Type-Options'), path).toBe('nosniff');
      expect(res.headers.get('Referrer-Policy'), path).toBe('same-origin');
      expect(res.headers.get('Content-Security-Policy'), path).toContain("frame-ancestors 'none'");
      expect(res.headers.has('X-Request-Id'), `${path}: served without the worker`).toBe(false);
    }
    // The unhashed names are gone: no page can link a file whose content may change under its URL.
    expect((await globalThis.fetch(`${server.origin}/dashboard/assets/app.css`)).status).toBe(404);
  });
});
