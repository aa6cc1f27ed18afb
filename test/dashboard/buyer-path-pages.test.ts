import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { listStockJson } from '../../src/services/catalogue/stock';
import { SELF } from '../contract';
import { balanceOf, buy, call, deliverWebhook, newProduct, newUser } from '../helpers';
import { idempotencyKeyIn, ORIGIN, signedInUser, visit } from '../dashboard-helpers';

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

describe("the buyer's order pages", () => {
  it('say Delivered · can be cancelled until <time>, Delivered (final sale), Cancelled · refunded $X; Cancel order asks first', async () => {
    const user = await signedInUser({ balance: 30 });
    const product = await newProduct({ price: 4, stock: 3 });
    const finalSale = await newProduct({ price: 2, stock: 1, cancellable: false });
    const order = (await buy(user, product.id, 1)).json.data;
    const kept = (await buy(user, finalSale.id, 1)).json.data;

    const detail = (await visit(`/dashboard/orders/${order.id}`, { cookie: user.cookie })).text;
    const until = new Date(Date.parse(order.created_at) + 24 * 3_600_000).toISOString();
    expect(detail).toContain('Delivered · can be cancelled until ');
    expect(detail).toContain(until.slice(0, 16).replace('T', ' '));
    expect(detail).toContain(`action="/dashboard/orders/${order.id}/cancel/confirm"`);
    expect(detail).not.toContain(`action="/dashboard/orders/${order.id}/cancel"`);
    expect((await visit(`/dashboard/orders/${kept.id}`, { cookie: user.cookie })).text).toMatch(/status-completed">Delivered</);

    // The confirmation changes nothing; its Confirm posts the cancel.
    const confirm = await visit(`/dashboard/orders/${order.id}/cancel/confirm`, { cookie: user.cookie });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('$4.00</span> goes back to your wallet');
    expect(confirm.text).toContain(`action="/dashboard/orders/${order.id}/cancel"`);
    expect(await balanceOf(user)).toBe(24);
    const cancelled = await visit(`/dashboard/orders/${order.id}/cancel`, { cookie: user.cookie, form: { idempotency_key: idempotencyKeyIn(confirm.text) } });
    expect(cancelled.status).toBe(303);
    expect(await balanceOf(user)).toBe(28);
    expect((await visit(`/dashboard/orders/${order.id}`, { cookie: user.cookie })).text).toContain('Cancelled · refunded <span class="money">$4.00</span>');
    // A cancelled or final-sale order's confirmation sends back to the order.
    expect((await visit(`/dashboard/orders/${kept.id}/cancel/confirm`, { cookie: user.cookie })).location).toBe(`/dashboard/orders/${kept.id}`);
    // The list says it too.
    expect((await visit('/dashboard/orders', { cookie: user.cookie })).text).toContain('Cancelled · refunded');
  });

  it('split the discount: volume price and discount on one line, the coupon with its code on another', async () => {
    const user = await signedInUser({ balance: 100 });
    const product = await newProduct({ price: 10, stock: 5 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { volume_prices: [{ min_quantity: 2, price: 9 }] } });
    const code = `SPLIT${crypto.randomUUID().slice(0, 6).toUpperCase()}`;
    expect((await call('/admin/coupons', { admin: true, body: { code, amount_off: 3 } })).status).toBe(201);
    const bought = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 2, coupon: code } });
    expect(bought.status, bought.text).toBe(201);
    expect(bought.json.data).toMatchObject({ list_unit_price: 10, unit_price: 9, discount_amount: 5, coupon: code, coupon_amount: 3, total_amount: 15 });
    const detail = (await visit(`/dashboard/orders/${bought.json.data.id}`, { cookie: user.cookie })).text;
    expect(detail).toContain('<dt>Volume price and discount</dt><dd><span class="money">$2.00</span></dd>');
    expect(detail).toContain(`<dt>Coupon ${code}</dt><dd><span class="money">$3.00</span></dd>`);
  });
});

describe('the review offers "Pay $X and buy" when the balance is short', () => {
  const review = (user: { cookie: string }, productId: number, quantity: string) =>
    visit(`/dashboard/shop/${productId}/review`, { cookie: user.cookie, form: { product_id: String(productId), quantity, idempotency_key: crypto.randomUUID() } });
  const formOf = (html: string, action: string) => {
    const form = html.slice(html.indexOf(`action="${action}"`));
    const fields: Record<string, string> = {};
    for (const m of form.slice(0, form.indexOf('</form>')).matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)"/g)) fields[m[1]] = m[2];
    return fields;
  };

  it('pays the total less the balance (at least 1.00); once paid the buyer lands on the order', async () => {
    const user = await signedInUser({ balance: 3 });
    const product = await newProduct({ price: 4, stock: 6 });
    const page = await review(user, product.id, '2');
    expect(page.text).toContain('Pay $5.00 and buy');
    const fields = formOf(page.text, `/dashboard/shop/${product.id}/pay`);
    expect(fields).toMatchObject({ quantity: '2', expected_total: '8.00', amount: '5.00' });
    const paid = await visit(`/dashboard/shop/${product.id}/pay`, { cookie: user.cookie, form: { ...fields, gateway: 'gateway_one' } });
    expect(paid.status, paid.text).toBe(303);
    const depositId = Number(/\/pay\/(\d+)$/.exec(paid.location!)![1]);
    // Before the payment: the way back says it waits.
    expect((await visit(`/dashboard/wallet/deposits/${depositId}`, { cookie: user.cookie })).location).toBe(`/dashboard/wallet?deposit=${depositId}`);
    expect((await visit(`/dashboard/wallet?deposit=${depositId}`, { cookie: user.cookie })).text).toContain('your order is made as soon as it arrives');
    await deliverWebhook('gateway_one', { deposit_id: depositId, status: 'paid', amount: 5, transaction_id: crypto.randomUUID() });
    const back = await visit(`/dashboard/wallet/deposits/${depositId}`, { cookie: user.cookie });
    expect(back.location).toMatch(/^\/dashboard\/orders\/\d+\?notice=charged$/);
    expect(await balanceOf(user)).toBe(0);
    // A small shortfall still pays the smallest deposit; a balance that covers the total is offered no payment.
    const rich = await signedInUser({ balance: 7.5 });
    expect((await review(rich, product.id, '2')).text).toContain('Pay $1.00 and buy');
    expect((await review(await signedInUser({ balance: 8 }), product.id, '2')).text).not.toContain('and buy</button>');
  });

  it('a deposit whose order could not be made lands on the wallet, which says why and that the money is there', async () => {
    const user = await signedInUser();
    const product = await newProduct({ price: 4, stock: 1 });
    const fields = formOf((await review(user, product.id, '1')).text, `/dashboard/shop/${product.id}/pay`);
    const paid = await visit(`/dashboard/shop/${product.id}/pay`, { cookie: user.cookie, form: { ...fields, gateway: 'gateway_one' } });
    const depositId = Number(/\/pay\/(\d+)$/.exec(paid.location!)![1]);
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 5 } });
    await deliverWebhook('gateway_one', { deposit_id: depositId, status: 'paid', amount: 4, transaction_id: crypto.randomUUID() });
    const back = await visit(`/dashboard/wallet/deposits/${depositId}`, { cookie: user.cookie });
    expect(back.location).toBe(`/dashboard/wallet?deposit=${depositId}`);
    const wallet = (await visit(back.location!, { cookie: user.cookie })).text;
    expect(wallet).toContain(`Deposit #${depositId} was credited, but the order could not be made: the price changed. Nothing was bought; the money is in your wallet.`);
    expect(wallet).toContain('Not made: the price changed');
    expect(await balanceOf(user)).toBe(4);
  });
});

describe('the replacement warranty, where a buyer chooses', () => {
  it('is warranty_hours on every public stock entry (list, detail) and a line on the product pages; none without one', async () => {
    const name = `Warranted ${crypto.randomUUID()}`;
    const product = await newProduct({ price: 2, stock: 2, name });
    const none = await newProduct({ price: 2, stock: 2 });
    const patched = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 72 } });
    expect(patched.status, patched.text).toBe(200);

    expect((await call(`/stock/${product.id}`)).json.data.warranty_hours).toBe(72);
    expect((await call(`/stock/${none.id}`)).json.data.warranty_hours).toBe(0);
    // The list is rendered by SQLite (src/services/catalogue/stock.ts), the cached answer of GET /stock: the same field and value.
    const list = JSON.parse(await listStockJson(env.DB, ORIGIN)) as Array<{ product_id: number; warranty_hours: number }>;
    expect(list.find((e) => e.product_id === product.id)?.warranty_hours).toBe(72);
    expect(list.find((e) => e.product_id === none.id)?.warranty_hours).toBe(0);

    const page = await (await SELF.fetch(`${ORIGIN}/shop/${product.id}`)).text();
    expect(page).toContain('Replacement warranty: 72 hours');
    expect(await (await SELF.fetch(`${ORIGIN}/shop/${none.id}`)).text()).not.toContain('Replacement warranty');
    const user = await signedInUser();
    const shopPage = await visit(`/dashboard/shop/${product.id}`, { cookie: user.cookie });
    expect(shopPage.text).toContain('Replacement warranty: 72 hours');
  });
});
