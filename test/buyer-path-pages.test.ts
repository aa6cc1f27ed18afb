import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SELF } from './contract';
import { buy, call, newProduct, newUser } from './helpers';
import { ORIGIN } from './dashboard-helpers';

// The buyer's path in pages: `/` for browsers, the public product pages `/shop/{id}`, the card linking to them.

describe('/', () => {
  it('sends a browser (Accept with text/html) to /shop with a 302; other clients get the JSON index', async () => {
    const browser = await SELF.fetch(`${ORIGIN}/`, { headers: { Accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' });
    expect(browser.status).toBe(302);
    expect(browser.headers.get('Location')).toBe('/shop');
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await SELF.fetch(`${ORIGIN}/`, { headers: accept ? { Accept: accept } : {}, redirect: 'manual' });
      expect(res.status, accept).toBe(200);
      expect(await res.json()).toMatchObject({ success: true, data: { name: 'stock-wallet-api', version: '2.0' } });
    }
  });
});

describe('/shop/{id}: a product page for anyone', () => {
  it('shows image, description, price, volume prices, stock, pack sizes, final sale and Sign in to buy; no cookie; cached; purged by a sale', async () => {
    const name = `Public ${crypto.randomUUID()}`;
    const product = await newProduct({ price: 6, stock: 3, allowedQuantities: [1, 2], cancellable: false, name });
    const patched = await call(`/admin/products/${product.id}`, {
      method: 'PATCH',
      admin: true,
      body: { description: 'Line one\nLine <two>', volume_prices: [{ min_quantity: 2, price: 5.5 }] },
    });
    expect(patched.status, patched.text).toBe(200);
    const res = await SELF.fetch(`${ORIGIN}/shop/${product.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('Set-Cookie')).toBeNull();
    expect(res.headers.get('Cache-Control')).toMatch(/^public, max-age=\d+$/);
    expect(res.headers.get('ETag')).toBeTruthy();
    expect(res.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain(name);
    expect(html).toContain('$6.00');
    expect(html).toContain('3 in stock');
    expect(html).toContain('Sold in packs of 1, 2');
    expect(html).toContain('Volume prices');
    expect(html).toContain('$5.50');
    expect(html).toContain('Final sale: this order cannot be cancelled.');
    expect(html).toContain('Line one\nLine &lt;two&gt;');
    expect(html).toContain(`href="/dashboard/sign-in?next=%2Fdashboard%2Fshop%2F${product.id}"`);
    expect(html).toContain('Sign in to buy');
    expect(html).not.toContain('<script');

    // The storefront's cards link to it.
    expect(await (await SELF.fetch(`${ORIGIN}/shop?q=${encodeURIComponent(name)}`)).text()).toContain(`href="/shop/${product.id}"`);

    // A sale shows at once where it was made (the page is purged with the product's other entries).
    const user = await newUser({ balance: 20 });
    expect((await buy(user, product.id, 2)).status).toBe(201);
    expect(await (await SELF.fetch(`${ORIGIN}/shop/${product.id}`)).text()).toContain('1 in stock');
  });

  it('is a 404 for an inactive, unknown or malformed product', async () => {
    const inactive = await newProduct({ stock: 1, active: false });
    for (const path of [`/shop/${inactive.id}`, '/shop/999999999', '/shop/abc']) {
      const res = await SELF.fetch(`${ORIGIN}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('Set-Cookie'), path).toBeNull();
    }
    // Deactivating a product that was shown purges its page.
    const product = await newProduct({ stock: 1 });
    expect((await SELF.fetch(`${ORIGIN}/shop/${product.id}`)).status).toBe(200);
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { active: false } });
    expect((await SELF.fetch(`${ORIGIN}/shop/${product.id}`)).status).toBe(404);
    void env;
  });
});
