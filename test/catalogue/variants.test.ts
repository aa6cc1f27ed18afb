import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { balanceOf, call, expectError, newProduct, newUser, unique } from '../helpers';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { idempotencyKeyIn, signedInUser, visit } from '../dashboard-helpers';

// Variants: the unit a buyer picks (docs/catalogue.md, "Variants"), through the worker against the local D1.

type Variant = { id: number; name: string; sku: string; price: number; stock_count: number; active: boolean; position: number };

async function addVariant(productId: number, body: Record<string, unknown>) {
  const res = await call(`/admin/products/${productId}/variants`, { admin: true, body: { sku: unique('VSKU'), ...body } });
  expect(res.status, res.text).toBe(201);
  return res.json.data as Variant;
}

async function upload(productId: number, variantId: number | null, count: number, prefix = unique('V')) {
  const items = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const res = await call(`/admin/products/${productId}/stock`, { admin: true, body: variantId === null ? { items } : { items, variant_id: variantId } });
  expect(res.status, res.text).toBe(201);
  return items;
}

const adminProduct = async (productId: number) => (await call(`/admin/products/${productId}`, { admin: true })).json.data;
const stockEntry = async (productId: number) => (await call(`/stock/${productId}`)).json.data;

/** A product with `Standard` renamed "1 month" and a second variant "3 months" at 25.00, each with stock. */
async function twoVariants() {
  const product = await newProduct({ price: 10, name: unique('Subscription') });
  const [standard] = (await adminProduct(product.id)).variants as Variant[];
  const renamed = await call(`/admin/variants/${standard.id}`, { method: 'PATCH', admin: true, body: { name: '1 month' } });
  expect(renamed.status, renamed.text).toBe(200);
  const three = await addVariant(product.id, { name: '3 months', price: 25 });
  const monthItems = await upload(product.id, standard.id, 2);
  const threeItems = await upload(product.id, three.id, 3);
  return { product, month: { ...standard, name: '1 month' }, three, monthItems, threeItems };
}

describe('variants', () => {
  it('a product made without variants has exactly one, Standard, with its sku, price and stock; nothing needs a variant_id', async () => {
    const product = await newProduct({ price: 2.5, stock: 2, allowedQuantities: [1, 2] });
    const { variants } = await adminProduct(product.id);
    expect(variants).toEqual([
      expect.objectContaining({ product_id: product.id, name: 'Standard', sku: product.sku, price: 2.5, stock_count: 2, active: true, position: 0, backorders: false, backorder_limit: 100, allowed_quantities: [1, 2] }),
    ]);
    // The product's own price writes the variant.
    const patched = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 3, sku: `${product.sku}-B` } });
    expect(patched.status, patched.text).toBe(200);
    expect((await adminProduct(product.id)).variants[0]).toMatchObject({ price: 3, sku: `${product.sku}-B` });
    const user = await newUser({ balance: 10 });
    const order = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 2 } });
    expect(order.status, order.text).toBe(201);
    expect(order.json.data).toMatchObject({ variant_id: variants[0].id, variant_name: 'Standard', total_amount: 6 });
  });

  it('several variants: from-price, first sku, summed stock; the product-level price is refused; entries list the variants', async () => {
    const { product, month, three } = await twoVariants();
    const entry = await stockEntry(product.id);
    expect(entry).toMatchObject({ price: 10, sku: month.sku, stock_count: 5, in_stock: true });
    expect(entry.variants.map((v: { variant_id: number; name: string; stock_count: number; price: number }) => [v.variant_id, v.name, v.price, v.stock_count])).toEqual([
      [month.id, '1 month', 10, 2],
      [three.id, '3 months', 25, 3],
    ]);
    for (const body of [{ price: 5 }, { sku: 'X-1' }, { volume_prices: [] }, { allowed_quantities: [1] }]) {
      const res = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body });
      expectError(res, 422, 'VALIDATION_FAILED');
      expect(res.json.errors[Object.keys(body)[0]]).toEqual(['This product has variants: change it on a variant.']);
    }
    // Stock uploads must name one.
    const missing = await call(`/admin/products/${product.id}/stock`, { admin: true, body: { items: ['A'] } });
    expectError(missing, 422, 'VALIDATION_FAILED');
    expect(missing.json.errors.variant_id).toBeDefined();
    const other = await newProduct();
    const foreign = await call(`/admin/products/${other.id}/stock`, { admin: true, body: { items: ['A'], variant_id: three.id } });
    expectError(foreign, 422, 'VALIDATION_FAILED');
    // A text upload names it in the query.
    const text = await call(`/admin/products/${product.id}/stock?variant_id=${three.id}`, { admin: true, body: 'T-1\nT-2', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status, text.text).toBe(201);
    expect(text.json.data).toEqual({ added: 2, skipped: 0, stock_count: 5 });
    // A variant's sku is unique among all variants (and a product's).
    const taken = await call(`/admin/products/${product.id}/variants`, { admin: true, body: { name: 'Again', sku: month.sku, price: 1 } });
    expectError(taken, 422, 'VALIDATION_FAILED');
    expect(taken.json.errors.sku).toBeDefined();
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('buying: variant_id required with several (the error names the choices), its price, stock and items', async () => {
    const { product, month, three, threeItems } = await twoVariants();
    const user = await newUser({ balance: 100 });
    const missing = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expectError(missing, 422, 'VALIDATION_FAILED');
    expect(missing.json.errors.variant_id).toEqual(['Choose a variant: 1 month, 3 months']);
    const other = await newProduct({ stock: 1 });
    const foreign = await call('/orders', { key: user.key, body: { product_id: other.id, variant_id: three.id, quantity: 1 } });
    expectError(foreign, 422, 'VALIDATION_FAILED');
    expect(foreign.json.errors.variant_id).toBeDefined();
    const short = await call('/orders', { key: user.key, body: { product_id: product.id, variant_id: month.id, quantity: 3 } });
    expectError(short, 400, 'INSUFFICIENT_STOCK');
    expect(short.json.errors).toMatchObject({ requested: 3, available: 2 });
    expect(await balanceOf(user)).toBe(100);

    const quote = await call(`/orders/quote?product_id=${product.id}&variant_id=${three.id}&quantity=2`, { key: user.key });
    expect(quote.status, quote.text).toBe(200);
    expect(quote.json.data).toMatchObject({ list_unit_price: 25, total_amount: 50 });
    const bought = await call('/orders', { key: user.key, body: { product_id: product.id, variant_id: three.id, quantity: 2 } });
    expect(bought.status, bought.text).toBe(201);
    expect(bought.json.data).toMatchObject({ product_name: product.name, variant_id: three.id, variant_name: '3 months', unit_price: 25, total_amount: 50 });
    expect(bought.json.data.stock_items).toEqual(threeItems.slice(0, 2));
    expect(await balanceOf(user)).toBe(50);
    const entry = await stockEntry(product.id);
    expect(entry.stock_count).toBe(3);
    expect(entry.variants.map((v: { stock_count: number }) => v.stock_count)).toEqual([2, 1]);

    // An inactive variant is unavailable; with one active left the product needs no variant_id again.
    expect((await call(`/admin/variants/${three.id}`, { method: 'PATCH', admin: true, body: { active: false } })).status).toBe(200);
    const inactive = await call('/orders', { key: user.key, body: { product_id: product.id, variant_id: three.id, quantity: 1 } });
    expectError(inactive, 400, 'PRODUCT_UNAVAILABLE');
    const plain = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expect(plain.status, plain.text).toBe(201);
    expect(plain.json.data).toMatchObject({ variant_id: month.id, total_amount: 10 });
    expect((await stockEntry(product.id)).stock_count).toBe(1);
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('a coupon narrowed to one variant applies to it only', async () => {
    const { product, month, three } = await twoVariants();
    const code = unique('VC').toUpperCase().replace(/[^A-Z0-9-]/g, '').slice(-30);
    const coupon = await call('/admin/coupons', { admin: true, body: { code, percent_off: 10, variant_ids: [three.id], max_per_user: null } });
    expect(coupon.status, coupon.text).toBe(201);
    expect(coupon.json.data.variant_ids).toEqual([three.id]);
    const user = await newUser({ balance: 100 });
    const refused = await call('/orders', { key: user.key, body: { product_id: product.id, variant_id: month.id, quantity: 1, coupon: code } });
    expectError(refused, 400, 'COUPON_INVALID');
    expect(refused.json.errors.coupon).toEqual(['This coupon does not apply to this variant.']);
    const ok = await call('/orders', { key: user.key, body: { product_id: product.id, variant_id: three.id, quantity: 1, coupon: code } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.data).toMatchObject({ total_amount: 22.5, coupon: code });
  });

  it("races: 10 buyers of one variant's last item while another variant sells: one gets it, nothing oversold", async () => {
    const { product, month, three } = await twoVariants();
    const buyers = await Promise.all(Array.from({ length: 10 }, () => newUser({ balance: 100 })));
    // Leave one item of "1 month".
    const first = await call('/orders', { key: buyers[0].key, body: { product_id: product.id, variant_id: month.id, quantity: 1 } });
    expect(first.status).toBe(201);
    const results = await Promise.all(
      buyers.flatMap((buyer, i) => [
        call('/orders', { key: buyer.key, body: { product_id: product.id, variant_id: month.id, quantity: 1 } }),
        ...(i < 3 ? [call('/orders', { key: buyer.key, body: { product_id: product.id, variant_id: three.id, quantity: 1 } })] : []),
      ]),
    );
    const monthSold = results.filter((r) => r.status === 201 && r.json.data.variant_id === month.id);
    const threeSold = results.filter((r) => r.status === 201 && r.json.data.variant_id === three.id);
    expect(monthSold).toHaveLength(1);
    expect(threeSold).toHaveLength(3);
    for (const r of results.filter((r) => r.status !== 201)) expectError(r, 400, 'INSUFFICIENT_STOCK');
    const entry = await stockEntry(product.id);
    expect(entry.stock_count).toBe(0);
    expect(entry.in_stock).toBe(false);
    expect(await auditLedger(env.DB)).toEqual([]);
  });

  it('at most 50 variants; a variant is never deleted, only made inactive; catalogue events name the variant', async () => {
    const product = await newProduct({ price: 1 });
    await Promise.all(Array.from({ length: 49 }, (_, i) => addVariant(product.id, { name: `V${i}`, price: 1 + i })));
    const fiftyFirst = await call(`/admin/products/${product.id}/variants`, { admin: true, body: { name: 'Too many', sku: unique('VSKU'), price: 1 } });
    expectError(fiftyFirst, 422, 'VALIDATION_FAILED');
    expect((await adminProduct(product.id)).variants).toHaveLength(50);
  });

  it('pages: "from $X" on the card, the options on the product page, radio buttons (no script) and the review buy the picked one', async () => {
    const { product, three, threeItems } = await twoVariants();
    const storefront = await visit(`/shop/${product.id}`);
    expect(storefront.text).toContain('3 months: ');
    const user = await signedInUser({ balance: 100 });
    const shop = await visit('/dashboard/shop', { cookie: user.cookie });
    expect(shop.text).toMatch(/from <[^>]*>\$10\.00/);
    const sheet = await visit(`/dashboard/shop/${product.id}`, { cookie: user.cookie });
    expect(sheet.text).toContain(`type="radio" name="variant_id" value="${three.id}"`);
    const review = await visit(`/dashboard/shop/${product.id}/review`, {
      cookie: user.cookie,
      form: { product_id: String(product.id), variant_id: String(three.id), quantity: '1', coupon: '', idempotency_key: idempotencyKeyIn(sheet.text) },
    });
    expect(review.status, review.text).toBe(200);
    expect(review.text).toContain('3 months');
    expect(review.text).toContain(`name="variant_id" value="${three.id}"`);
    const confirm = await visit('/dashboard/shop', {
      cookie: user.cookie,
      form: { product_id: String(product.id), variant_id: String(three.id), quantity: '1', expected_total: '25.00', idempotency_key: idempotencyKeyIn(sheet.text) },
    });
    expect(confirm.status, confirm.text).toBe(303);
    const order = await env.DB.prepare('SELECT id, variant_id, variant_name, total_amount_cents FROM orders WHERE user_id = ?').bind(user.id).first<{ id: number }>();
    expect(order).toMatchObject({ variant_id: three.id, variant_name: '3 months', total_amount_cents: 2500 });
    const item = await env.DB.prepare('SELECT content FROM stock_items WHERE order_id = ?').bind(order!.id).first<{ content: string }>();
    expect(item!.content).toBe(threeItems[0]);
  });
});
