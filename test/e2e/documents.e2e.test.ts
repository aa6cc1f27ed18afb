import { describe, expect, inject, it } from 'vitest';
import { browserAvailable, useBrowser, settled } from './browser';
import { contractFetch } from './checked-fetch';

// Documents for the books in Chromium with JavaScript off: a buyer opens the invoice of an order from the dashboard's
// Documents page and prints it to PDF. The PDF is one A4 page titled with the invoice's number; printed, the page shows
// the number and the totals and no navigation. Any console error or CSP violation fails it.

/** The PDF's text objects are compressed; its metadata (the page's title) and its page size are not. */
const pdfInfo = (pdf: Buffer) => {
  const text = pdf.toString('latin1');
  const hexTitle = /\/Title\s*<([0-9A-Fa-f]+)>/.exec(text)?.[1];
  const title = hexTitle ? Buffer.from(hexTitle, 'hex').swap16().toString('utf16le').replace(/^\uFEFF/, '') : /\/Title\s*\(([^)]*)\)/.exec(text)?.[1];
  const pages = [...text.matchAll(/\/Type\s*\/Page[^s]/g)].length;
  const box = /\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]/.exec(text);
  return { header: text.slice(0, 5), title, pages, size: box ? [Math.round(Number(box[1])), Math.round(Number(box[2]))] : null };
};

describe.runIf(browserAvailable)('documents in a real browser', () => {
  const server = inject('devServer');
  const fetch = contractFetch(server.api);
  const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
  const browser = useBrowser();

  const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = admin) =>
    (await fetch(`${server.api}${path}`, { method, headers, body: JSON.stringify(body) })).json();

  it('the buyer opens an invoice from Documents and prints it to an A4 PDF with its number and totals', async () => {
    await send('PUT', '/admin/settings/invoicing', { legal_name: 'E2E Books GmbH', address: ['1 Print Street'], country: 'DE', tax_id: 'DE000', tax_mode: 'vat', vat_rates: { DE: 19 } });
    const sku = `E2E-DOC-${Date.now()}`;
    const product = (await send('POST', '/admin/products', { name: 'E2E Printed Key', sku, price: 11.9 })).data;
    await send('POST', `/admin/products/${product.id}/stock`, { items: [`${sku}-1`] });
    const email = `documents-${Date.now()}@example.com`;
    const buyer = (await send('POST', '/admin/users', { name: 'Pia Print', email, password: 'buyer password 1' })).data;
    await send('POST', `/admin/users/${buyer.id}/balance-adjustments`, { amount: 20, description: 'e2e funding' });
    const key = { 'X-API-Key': buyer.api_key, 'Content-Type': 'application/json' };
    await send('PUT', '/user/billing', { name: 'Pia Print', address: ['2 Paper Road'], country: 'DE' }, key);
    const order = (await send('POST', '/orders', { product_id: product.id, quantity: 1 }, key)).data;
    const invoice = (await (await fetch(`${server.api}/documents?type=invoice`, { headers: key })).json()).data[0];
    expect(invoice).toMatchObject({ order_id: order.id, total_amount: 11.9, tax_rate: 19, tax_amount: 1.9, net_amount: 10 });

    const errors: string[] = [];
    const context = await browser().newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) errors.push(`${page.url()}: ${message.text()}`);
    });
    await page.goto(`${server.origin}/dashboard/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('buyer password 1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByRole('link', { name: 'Documents' }).first().click();
    await page.getByRole('link', { name: invoice.number }).click();
    await page.waitForURL(new RegExp(`/dashboard/documents/${invoice.id}$`));
    await settled(page);

    await page.emulateMedia({ media: 'print' });
    const printed = await page.evaluate(() => document.body.innerText);
    expect(printed).toContain(`Invoice ${invoice.number}`);
    expect(printed).toContain('E2E Books GmbH');
    expect(printed).toContain('Pia Print');
    expect(printed).toMatch(/Net\s+\$10\.00/);
    expect(printed).toMatch(/Tax 19 %\s+\$1\.90/);
    expect(printed).toMatch(/Total\s+\$11\.90 USD/);
    expect(printed).not.toContain('Back to documents');
    expect(await page.locator('nav').first().isVisible()).toBe(false);

    const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: true });
    const info = pdfInfo(pdf);
    expect(info.header).toBe('%PDF-');
    expect(info.title).toBe(`Invoice ${invoice.number}`);
    expect(info.pages).toBe(1);
    expect(info.size).toEqual([595, 842]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
