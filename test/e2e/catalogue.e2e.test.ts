import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, fitsThePhone, PHONE, settled } from './browser';
import { contractFetch } from './checked-fetch';

// The catalogue in Chromium with JavaScript off, at a phone's width: browse the shop by category, open a product,
// review, confirm, see the order; and the embeddable card framed by a page of another origin (while the storefront,
// like every other page, refuses to be framed).

// The smallest valid PNG (1×1, transparent).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe.runIf(browserAvailable)('the catalogue in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();


  const adminPost = async (path: string, body: unknown) => (await (await fetch(`${server.api}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) })).json()).data;

  async function newProduct(name: string, category: string, price: number) {
    const product = await adminPost('/admin/products', { name, sku: `E2E-${crypto.randomUUID()}`, category, price, cancellable: false });
    await adminPost(`/admin/products/${product.id}/stock`, { items: [`${name}-A`, `${name}-B`, `${name}-C`] });
    await fetch(`${server.api}/admin/products/${product.id}`, { method: 'PATCH', headers: admin, body: JSON.stringify({ description: `About ${name}.\nSecond line.` }) });
    await fetch(`${server.api}/admin/products/${product.id}/image`, { method: 'PUT', headers: { Authorization: admin.Authorization, 'Content-Type': 'image/png' }, body: PNG });
    return product as { id: number };
  }

  function watchErrors(page: Page, errors: string[]) {
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  }

  it('browse by category → product page → review → confirm → the order page', async () => {
    const category = `e2e-${Date.now()}`;
    const name = `Catalogue Card ${Date.now()}`;
    const product = await newProduct(name, category, 2.5);
    await newProduct(`Elsewhere ${Date.now()}`, `${category}-other`, 1);
    const email = `catalogue-${Date.now()}@example.com`;
    const user = await adminPost('/admin/users', { name: 'Cat Buyer', email, password: 'catalogue password' });
    await adminPost(`/admin/users/${user.id}/balance-adjustments`, { amount: 20, description: 'e2e funding' });

    const errors: string[] = [];
    const context = await browser().newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    watchErrors(page, errors);

    // The sign-in page links to the public storefront, which lists the product without a session.
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Browse the shop' }).click();
    await page.waitForURL(`${server.origin}/shop`);
    await page.getByRole('heading', { name }).waitFor();
    await fitsThePhone(page);

    await page.goto(`${server.origin}/dashboard/sign-in?next=%2Fdashboard%2Fshop`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('catalogue password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard/shop`);

    // Browse by category: only that category's products remain.
    await page.getByLabel('Category').selectOption(category);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/dashboard\/shop\?category=/);
    const cards = page.getByRole('listitem').filter({ has: page.getByRole('heading', { level: 2 }) });
    expect(await cards.count()).toBe(1);
    const card = cards.first();
    expect(await card.textContent()).toContain('Final sale');
    expect(await card.locator('img.product-image').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
    await fitsThePhone(page);

    // The product's page: its description as text, and the final-sale warning.
    await card.getByRole('link', { name }).click();
    await page.waitForURL(`${server.origin}/dashboard/shop/${product.id}`);
    await page.getByText('Final sale: this order cannot be cancelled.').waitFor();
    expect(await page.locator('.description').textContent()).toBe(`About ${name}.\nSecond line.`);
    await fitsThePhone(page);

    // Review, then confirm.
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Buy' }).click();
    await page.waitForURL(`${server.origin}/dashboard/shop/${product.id}/review`);
    const review = Object.fromEntries(
      await page.locator('dl.review > div').evaluateAll((rows) => rows.map((row) => [row.querySelector('dt')!.textContent, row.querySelector('dd')!.textContent])),
    );
    expect(review).toEqual({ Quantity: '2', 'List price': '$2.50', 'Unit price': '$2.50', Discount: '$0.00', Total: '$5.00' });
    await fitsThePhone(page);
    await page.getByRole('button', { name: 'Confirm purchase' }).click();
    await page.waitForURL(/\/dashboard\/orders\/\d+\?notice=charged$/);
    expect(await page.getByRole('status').textContent()).toBe('Charged $5.00');
    expect(await page.getByRole('list', { name: 'Delivered items' }).getByRole('listitem').count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Cancel order' }).count()).toBe(0);
    await fitsThePhone(page);

    await context.close();
    expect(errors).toEqual([]);
  });

  it('the embeddable card is framed by a page of another origin; the storefront is not', async () => {
    const name = `Embedded ${Date.now()}`;
    const product = await newProduct(name, `embed-${Date.now()}`, 4);
    // Another site: 127.0.0.1 on its own port is another origin than the service's localhost.
    const site: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><title>A storefront</title>
        <iframe id="card" src="${server.origin}/embed/products/${product.id}" title="${name}" width="320" height="360"></iframe>
        <iframe id="shop" src="${server.origin}/shop" title="shop" width="320" height="360"></iframe>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    try {
      const context = await browser().newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(siteOrigin);
      await settled(page);
      const card = page.frameLocator('#card');
      await card.getByRole('heading', { name }).waitFor();
      expect(await card.getByText('In stock').count()).toBe(1);
      expect(await card.getByRole('link', { name: 'View the product' }).getAttribute('href')).toBe(`${server.origin}/shop/${product.id}`);
      // frame-ancestors 'none': Chromium shows its own error page instead of the storefront.
      const shopFrame = page.frames().find((frame) => frame.url().endsWith('/shop') || frame.name() === 'shop');
      expect(await shopFrame?.locator('.products').count().catch(() => 0) ?? 0).toBe(0);
      await context.close();
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });
});
