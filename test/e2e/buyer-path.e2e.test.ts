import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, PHONE, settled } from './browser';
import { contractFetch } from './checked-fetch';

// The buyer's path in Chromium: a signed-out visitor from a storefront's embedded card to the product page (a long
// name keeps the card's link inside its documented 320×360 frame), and a signed-in buyer with $0 who pays for an
// order in one step on the local checkout and lands on the order.

describe.runIf(browserAvailable)("the buyer's path in a real browser", () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();


  const adminPost = async (path: string, body: unknown) => (await (await fetch(`${server.api}${path}`, { method: 'POST', headers: admin, body: JSON.stringify(body) })).json()).data;

  async function newProduct(name: string, price: number, stock = 3) {
    const product = await adminPost('/admin/products', { name, sku: `E2E-${crypto.randomUUID()}`, price });
    await adminPost(`/admin/products/${product.id}/stock`, { items: Array.from({ length: stock }, (_, i) => `${product.id}-ITEM-${i}`) });
    return product as { id: number };
  }

  function watchErrors(page: Page, errors: string[]) {
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => errors.push(`${page.url()}: ${error.message}`));
  }

  it('a signed-out visitor goes from the embedded card (a very long name) to the product page', async () => {
    const name = `A product whose name goes on and on ${'and on '.repeat(20)}${Date.now()}`;
    const product = await newProduct(name, 3.5);
    const site: Server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><title>A storefront</title>
        <iframe id="card" src="${server.origin}/embed/products/${product.id}" title="card" width="320" height="360" style="border:0"></iframe>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    try {
      const context = await browser().newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      const errors: string[] = [];
      watchErrors(page, errors);
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}`);
      await settled(page);
      const card = page.frameLocator('#card');
      const link = card.getByRole('link', { name: 'View the product' });
      await link.waitFor();
      // The name takes at most two lines, and the link is inside the frame, fully.
      const heading = card.getByRole('heading');
      const lines = await heading.evaluate((h) => Math.round(h.getBoundingClientRect().height / parseFloat(getComputedStyle(h).lineHeight)));
      expect(lines).toBeLessThanOrEqual(2);
      expect(await heading.evaluate((h) => h.scrollHeight > h.clientHeight)).toBe(true);
      const frame = (await page.locator('#card').boundingBox())!;
      const box = (await link.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(frame.y);
      expect(box.y + box.height).toBeLessThanOrEqual(frame.y + frame.height);
      expect(box.x + box.width).toBeLessThanOrEqual(frame.x + frame.width);

      // The link opens the product's public page (a new tab): no session needed, "Sign in to buy".
      const [productPage] = await Promise.all([context.waitForEvent('page'), link.click()]);
      await productPage.waitForURL(`${server.origin}/shop/${product.id}`);
      await productPage.getByRole('heading', { name }).waitFor();
      await productPage.getByText('3 in stock').first().waitFor();
      expect(await productPage.getByRole('link', { name: 'Sign in to buy' }).getAttribute('href')).toBe(`/dashboard/sign-in?next=%2Fdashboard%2Fshop%2F${product.id}`);
      expect((await context.cookies()).filter((c) => c.domain === new URL(server.origin).hostname)).toEqual([]);
      await context.close();
      expect(errors).toEqual([]);
    } finally {
      await new Promise((resolve) => site.close(resolve));
    }
  });

  it('a signed-in buyer with $0 pays for an order in one step on the local checkout and lands on the order', async () => {
    const product = await newProduct(`One step ${Date.now()}`, 4.25);
    const email = `one-step-${Date.now()}@example.com`;
    await adminPost('/admin/users', { name: 'One Step', email, password: 'one step password' });

    // The checkout page uses script; the dashboard works with it on too.
    const context = await browser().newContext({ viewport: PHONE });
    const page = await context.newPage();
    const errors: string[] = [];
    watchErrors(page, errors);
    await page.goto(`${server.origin}/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/shop/${product.id}`)}`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('one step password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.origin}/dashboard/shop/${product.id}`);
    await page.getByLabel('Quantity').fill('2');
    await page.getByRole('button', { name: 'Buy' }).click();
    await page.waitForURL(`${server.origin}/dashboard/shop/${product.id}/review`);
    await page.getByLabel('Payment method').selectOption('gateway_one');
    await page.getByRole('button', { name: 'Pay $8.50 and buy' }).click();
    await page.waitForURL(new RegExp(`^${server.origin}/pay/\\d+$`));
    await page.getByRole('button', { name: 'Pay $8.50' }).click();
    await page.waitForURL(new RegExp(`^${server.origin}/dashboard/orders/\\d+\\?notice=charged$`));
    expect(await page.getByRole('status').textContent()).toBe('Charged $8.50');
    expect(await page.getByRole('list', { name: 'Delivered items' }).getByRole('listitem').count()).toBe(2);
    await page.getByText(/^Delivered · can be cancelled until /).waitFor();
    await context.close();
    expect(errors).toEqual([]);
  });
});
