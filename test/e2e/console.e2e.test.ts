import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, fitsThePhone, PHONE, settled } from './browser';
import { contractFetch } from './checked-fetch';

// The operator console in Chromium with JavaScript off, driven by accessible names: the demo operator that
// `npm run dev` seeds signs in, creates a product, uploads its stock from a file, finds a buyer's order by number,
// adjusts the buyer's balance twice (once with a double click), disables and re-enables the buyer, makes a password
// reset link that the buyer uses, and reads each step on the audit log. Any console error or CSP violation fails it.
// Every step's screenshot goes to E2E_SCREENSHOTS (default: a folder in the system temp directory); with
// UPDATE_DOCS_SCREENSHOTS=1 the overview's also replaces docs/console-overview.png, the one docs/console.md shows.

const SCREENSHOTS = process.env.E2E_SCREENSHOTS ?? join(tmpdir(), 'stock-wallet-e2e-screenshots');
const DESKTOP = { width: 1280, height: 900 };
const OPERATOR = { email: 'operator@example.com', password: 'operator-password' }; // scripts/seed.mjs

describe.runIf(browserAvailable)('the operator console in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();

  beforeAll(() => {
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  /** A browser with JavaScript off whose console errors (CSP violations among them) are collected. */
  async function openBrowser(errors: string[], viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser().newContext({ viewport, javaScriptEnabled: false });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
    return { context, page };
  }

  it('sign in → product → stock from a file → order by number → balance ×2 → disable/enable → reset link → audit log', async () => {
    // A buyer with an order, made through the API.
    const buyerEmail = `buyer-${Date.now()}@example.com`;
    const created = await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Bea Buyer', email: buyerEmail, password: 'buyer password 1' }) })).json();
    const buyer = { id: created.data.id as number, key: created.data.api_key as string };
    await fetch(`${server.api}/admin/users/${buyer.id}/balance-adjustments`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 20, description: 'e2e funding' }) });
    const order = (await (await fetch(`${server.api}/orders`, { method: 'POST', headers: { 'X-API-Key': buyer.key, 'Content-Type': 'application/json' }, body: JSON.stringify({ product_id: 2, quantity: 1 }) })).json()).data;
    const balance = async () => (await (await fetch(`${server.api}/wallet/balance`, { headers: { 'X-API-Key': buyer.key } })).json()).data.balance;
    expect(await balance()).toBe(15.01);

    const errors: string[] = [];
    const { context, page } = await openBrowser(errors);
    let step = 0;
    const screenshot = async (name: string, path = `${SCREENSHOTS}/console-${String(++step).padStart(2, '0')}-${name}.png`) => {
      await settled(page);
      await page.screenshot({ path, fullPage: true });
    };
    const heading = () => page.getByRole('heading', { level: 1 }).textContent();
    const goTo = async (section: string) => {
      const link = page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: section, exact: true });
      const href = await link.getAttribute('href');
      await link.click();
      await page.waitForURL(`${server.origin}${href}`);
    };

    // The demo operator signs in and lands on the console, not on the buyer's dashboard.
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(OPERATOR.email);
    await page.getByLabel('Password', { exact: true }).fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard/console`);
    expect(await heading()).toBe('Console');
    const chart = page.getByRole('img', { name: /Revenue and refunds per day, last 30 days/ });
    await chart.waitFor();
    // totals first; the day table lists only days with activity (this run's orders at least)
    expect(await page.getByRole('table', { name: 'Sales totals (UTC days)' }).getByRole('row').count()).toBe(4);
    expect(await page.getByRole('table', { name: 'Sales per day (UTC)' }).getByRole('row').count()).toBeGreaterThanOrEqual(2);
    await screenshot('overview');
    if (process.env.UPDATE_DOCS_SCREENSHOTS === '1') await screenshot('overview', 'docs/console-overview.png');

    // A new product, then its stock from a .txt file.
    await goTo('Products');
    const sku = `E2E-${Date.now()}`;
    await page.getByLabel('Name', { exact: true }).fill('E2E Gift Code');
    await page.getByLabel('SKU', { exact: true }).fill(sku);
    await page.getByLabel('Category', { exact: true }).fill('gift-cards');
    await page.getByLabel('Price', { exact: true }).fill('3.25');
    await page.getByLabel('Pack sizes', { exact: true }).fill('1, 2');
    await page.getByLabel('Final sale', { exact: true }).check();
    await screenshot('new-product');
    await page.getByRole('button', { name: 'Create product' }).click();
    await page.waitForURL(/\/dashboard\/console\/products\/\d+\?done=product_created$/);
    await page.getByText("Product created.").waitFor();
    expect(await heading()).toBe('E2E Gift Code');
    await page.getByLabel('Items file', { exact: true }).setInputFiles({
      name: 'codes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('GIFT-0001\nGIFT-0002\nGIFT-0003\nGIFT-0002\n'),
    });
    await page.getByRole('button', { name: 'Upload stock' }).click();
    await page.getByText('Added 3, skipped 1.').waitFor();
    expect(await page.getByRole('definition').first().textContent()).toBe('3');
    await screenshot('stock-uploaded');

    // The buyer's order, found by its number.
    await goTo('Orders');
    await page.getByRole('searchbox', { name: 'Search' }).fill(order.order_number);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/\/dashboard\/console\/orders\?q=/);
    await page.getByRole('link', { name: order.order_number }).click();
    expect(await heading()).toBe(`Order ${order.order_number}`);
    await screenshot('order');
    await page.getByRole('link', { name: new RegExp(buyerEmail) }).click();
    await page.waitForURL(`${server.origin}/dashboard/console/users/${buyer.id}`);

    // Two adjustments: the first sent by a double click (one effect), the second a debit.
    await page.getByLabel('Amount', { exact: true }).fill('10');
    await page.getByLabel('Description', { exact: true }).fill('Goodwill credit');
    await page.getByRole('button', { name: 'Adjust balance' }).click();
    await page.getByText(/This credits \$10\.00 to the wallet of Bea Buyer/).waitFor();
    await screenshot('confirm-adjustment');
    await page.getByRole('button', { name: 'Confirm' }).dblclick();
    await page.getByRole('cell', { name: /Goodwill credit/ }).waitFor();
    expect(await balance()).toBe(25.01);
    await page.getByLabel('Amount', { exact: true }).fill('-2.50');
    await page.getByLabel('Description', { exact: true }).fill('Correction');
    await page.getByRole('button', { name: 'Adjust balance' }).click();
    // Back changes nothing
    await page.getByText(/This debits \$2\.50 from the wallet of Bea Buyer/).waitFor();
    await page.getByRole('link', { name: 'Back' }).click();
    await page.waitForURL(`${server.origin}/dashboard/console/users/${buyer.id}`);
    expect(await balance()).toBe(25.01);
    await page.getByLabel('Amount', { exact: true }).fill('-$2.50');
    await page.getByLabel('Description', { exact: true }).fill('Correction');
    await page.getByRole('button', { name: 'Adjust balance' }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('cell', { name: /Correction/ }).waitFor();
    expect(await balance()).toBe(22.51);
    await screenshot('user-adjusted');

    // Disable: the buyer's key stops at once; enable: it works again.
    await page.getByRole('button', { name: 'Disable account' }).click();
    await page.getByText(/This disables the account of Bea Buyer/).waitFor();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('button', { name: 'Enable account' }).waitFor();
    expect((await globalThis.fetch(`${server.api}/wallet/balance`, { headers: { 'X-API-Key': buyer.key } })).status).toBe(401);
    await screenshot('user-disabled');
    await page.getByRole('button', { name: 'Enable account' }).click();
    await page.getByRole('button', { name: 'Disable account' }).waitFor();
    expect(await balance()).toBe(22.51);

    // A reset link, shown once; the buyer uses it in a browser of their own.
    await page.getByRole('button', { name: 'Create password reset link' }).click();
    await page.getByText('It will not be shown again').waitFor();
    const link = (await page.getByText(/\/dashboard\/reset-password\/[A-Za-z0-9_-]{43}$/).textContent())!;
    await screenshot('reset-link');
    const buyerBrowser = await openBrowser(errors);
    await buyerBrowser.page.goto(link);
    await buyerBrowser.page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await buyerBrowser.page.getByLabel('Confirm password', { exact: true }).fill('a brand new password');
    await buyerBrowser.page.getByRole('button', { name: 'Set password' }).click();
    await buyerBrowser.page.waitForURL(`${server.origin}/dashboard/sign-in?done=password_reset`);
    await buyerBrowser.page.getByText('Your new password is set').waitFor();
    await buyerBrowser.page.getByLabel('Email', { exact: true }).fill(buyerEmail);
    await buyerBrowser.page.getByLabel('Password', { exact: true }).fill('a brand new password');
    await buyerBrowser.page.getByRole('button', { name: 'Sign in' }).click();
    await buyerBrowser.page.waitForURL(`${server.origin}/dashboard`);
    expect(await buyerBrowser.page.getByRole('definition').first().textContent()).toBe('$22.51');
    await buyerBrowser.context.close();
    expect((await globalThis.fetch(link)).status).toBe(404); // used: gone

    // The audit log: each step, by this operator, newest first.
    await goTo('Audit log');
    await screenshot('audit-log');
    const rows = await page.getByRole('table', { name: 'Audit log entries' }).getByRole('row').all();
    const cells = await Promise.all(rows.slice(1).map((row) => row.getByRole('cell').allTextContents()));
    // [when, actor, action, target, details]: the console's entries (other tests' admin API writes are admin_token's).
    const mine = cells.filter(([, actor]) => actor !== 'admin_token');
    expect(mine.map(([, , action]) => action)).toEqual([
      'password_reset.created',
      'user.updated',
      'user.updated',
      'balance.adjusted',
      'balance.adjusted',
      'stock.added',
      'product.created',
    ]);
    expect(new Set(mine.map(([, actor]) => actor)).size).toBe(1);
    expect(mine[0][1]).toContain(OPERATOR.email); // the operator by name and email
    expect(mine.map(([, , , target]) => target).slice(0, 5)).toEqual(Array(5).fill(`user:${buyer.id}`));
    expect(JSON.stringify(mine)).not.toMatch(/GIFT-000|reset-password|a brand new password/);

    expect(errors).toEqual([]);
    await context.close();
  });

  /** Every button of the page lies inside the viewport's width and inside any box that scrolls (a table's). */
  async function buttonsInView(page: Page) {
    const outside = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      return [...document.querySelectorAll<HTMLElement>('button, a.button')]
        .filter((el) => el.getClientRects().length > 0)
        .filter((el) => {
          const box = el.getBoundingClientRect();
          let clipped = false;
          for (let up = el.parentElement; up; up = up.parentElement) {
            if (getComputedStyle(up).overflowX === 'visible') continue;
            const frame = up.getBoundingClientRect();
            if (box.right > frame.right + 0.5 || box.left < frame.left - 0.5) clipped = true;
          }
          return clipped || box.right > width + 0.5 || box.left < -0.5;
        })
        .map((el) => el.textContent?.trim());
    });
    expect(outside, `${page.url()}: buttons outside the visible area`).toEqual([]);
  }

  it('every console page at 1280 and 375 px: no page or table scrolls sideways, every action button in view', async () => {
    // A buyer with a long name and address, an order, a pending deposit (Mark paid) and a paid one (its gateway events).
    const email = `a-rather-long-address-for-the-layout-${Date.now()}@example.com`;
    const created = await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Maximiliana Wide-Layout', email, password: 'layout password 1' }) })).json();
    const user = { id: created.data.id as number, key: created.data.api_key as string };
    const asUser = { 'X-API-Key': user.key, 'Content-Type': 'application/json' };
    await fetch(`${server.api}/admin/users/${user.id}/balance-adjustments`, { method: 'POST', headers: admin, body: JSON.stringify({ amount: 20, description: 'layout funding' }) });
    const order = (await (await fetch(`${server.api}/orders`, { method: 'POST', headers: asUser, body: JSON.stringify({ product_id: 2, quantity: 1 }) })).json()).data;
    const deposit = async () => (await (await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: asUser, body: JSON.stringify({ amount: 12.5, gateway: 'gateway_one' }) })).json()).data;
    const paid = await deposit();
    await globalThis.fetch(`${server.origin}/pay/${paid.deposit_id}/pay`, { method: 'POST', headers: { Origin: server.origin }, redirect: 'manual' });
    expect((await (await fetch(`${server.api}/wallet/deposits/${paid.deposit_id}/status`, { headers: asUser })).json()).data.status).toBe('paid');
    const pending = await deposit();
    const pages = [
      '/dashboard/console',
      '/dashboard/console/products',
      '/dashboard/console/products/2',
      '/dashboard/console/orders',
      `/dashboard/console/orders/${order.id}`,
      '/dashboard/console/users',
      `/dashboard/console/users/${user.id}`,
      `/dashboard/console/users/${user.id}/disable/confirm`,
      `/dashboard/console/users/${user.id}/balance/confirm?amount=5&description=layout`,
      '/dashboard/console/deposits',
      `/dashboard/console/deposits?user_id=${user.id}`,
      `/dashboard/console/deposits/${pending.deposit_id}/mark-paid/confirm`,
      '/dashboard/console/revoked-items',
      '/dashboard/console/audit',
    ];
    for (const viewport of [DESKTOP, PHONE]) {
      const errors: string[] = [];
      const { context, page } = await openBrowser(errors, viewport);
      await page.goto(`${server.origin}/dashboard/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(OPERATOR.email);
      await page.getByLabel('Password', { exact: true }).fill(OPERATOR.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.origin}/dashboard/console`);
      for (const path of pages) {
        await page.goto(`${server.origin}${path}`);
        await settled(page);
        expect(await page.evaluate(() => document.documentElement.scrollWidth), `${path} at ${viewport.width} px scrolls sideways`).toBeLessThanOrEqual(viewport.width);
        const wideTables = await page.evaluate(() => [...document.querySelectorAll('.table-wrap')].filter((wrap) => wrap.scrollWidth > wrap.clientWidth).length);
        expect(wideTables, `${path} at ${viewport.width} px: a table scrolls sideways`).toBe(0);
        await buttonsInView(page);
      }
      await page.goto(`${server.origin}/dashboard/console/deposits?user_id=${user.id}`);
      await page.getByRole('button', { name: 'Mark paid' }).waitFor();
      await page.screenshot({ path: `${SCREENSHOTS}/console-deposits-${viewport.width}.png`, fullPage: true });
      expect(errors).toEqual([]);
      await context.close();
    }
  });

  it("the deposits page on a phone (375 px): its table stacks, nothing scrolls sideways", async () => {
    const created = await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Dee Positor', email: `depositor-${Date.now()}@example.com`, password: 'depositor password' }) })).json();
    const key = created.data.api_key as string;
    const deposit = await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ amount: 12.5, gateway: 'gateway_one', crypto_currency: 'USDT' }) });
    expect(deposit.status).toBe(200);
    const errors: string[] = [];
    const { context, page } = await openBrowser(errors, PHONE);
    await page.goto(`${server.origin}/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/console/deposits?user_id=${created.data.id}`)}`);
    await page.getByLabel('Email', { exact: true }).fill(OPERATOR.email);
    await page.getByLabel('Password', { exact: true }).fill(OPERATOR.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/console\/deposits\?user_id=\d+$/);
    await page.getByRole('button', { name: 'Mark paid' }).waitFor();
    await fitsThePhone(page);
    await page.screenshot({ path: `${SCREENSHOTS}/console-deposits-phone.png`, fullPage: true });
    expect(errors).toEqual([]);
    await context.close();
  });
});
