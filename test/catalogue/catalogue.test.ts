import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import { ADMIN_TOKEN, BASE, buy, call, newProduct, newUser } from '../helpers';
import { idempotencyKeyIn, signedInUser, visit } from '../dashboard-helpers';

// The catalogue a buyer chooses from: descriptions, images in R2 (type by signature, size, names, headers, deletion
// when unused), the public stock entries' new fields, what a sale and a catalogue change purge, the storefront and
// the embeddable card, and the dashboard's shop with its review.

const ORIGIN = new URL(BASE).origin;
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]);
const WEBP = new Uint8Array([0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x20]);

/** Distinct bytes of a type: its signature and a random tail (so tests never share an image by accident). */
const imageOf = (signature: Uint8Array) => new Uint8Array([...signature, ...crypto.getRandomValues(new Uint8Array(16))]);

async function putImage(productId: number, bytes: Uint8Array, type: string) {
  const res = await SELF.fetch(`${BASE}/admin/products/${productId}/image`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': type },
    body: bytes,
  });
  return { status: res.status, json: (await res.json()) as any };
}

const removeImage = (productId: number) => call(`/admin/products/${productId}/image`, { method: 'DELETE', admin: true });
const nameOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
const stored = async (name: string) => (await env.MEDIA.head(name)) !== null;
const media = (name: string, headers: Record<string, string> = {}) => SELF.fetch(`${ORIGIN}/media/${name}`, { headers });

describe('product images', () => {
  it('stores a PNG, JPEG or WebP by the SHA-256 of its bytes and serves it immutable with its type', async () => {
    const product = await newProduct();
    for (const [signature, type, extension] of [[PNG, 'image/png', 'png'], [JPEG, 'image/jpeg', 'jpg'], [WEBP, 'image/webp', 'webp']] as const) {
      const bytes = imageOf(signature);
      const res = await putImage(product.id, bytes, type);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      const hash = [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('');
      expect(res.json.data.image_url).toBe(`${ORIGIN}/media/${hash}.${extension}`);
      const served = await media(`${hash}.${extension}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('Content-Type')).toBe(type);
      expect(served.headers.get('Cache-Control')).toBe('public, max-age=31536000, immutable');
      expect(served.headers.get('X-Content-Type-Options')).toBe('nosniff');
      expect(served.headers.get('Content-Security-Policy')).toBe("default-src 'none'");
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(bytes);
      const again = await media(`${hash}.${extension}`, { 'If-None-Match': served.headers.get('ETag')! });
      expect(again.status).toBe(304);
    }
  });

  it('refuses bytes whose signature is not the declared type, other types, empty and over 2 MB: 422, nothing stored', async () => {
    const product = await newProduct();
    const jpegAsPng = imageOf(JPEG);
    const cases: [Uint8Array, string][] = [
      [jpegAsPng, 'image/png'],
      [imageOf(PNG), 'image/webp'],
      [new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'image/svg+xml'],
      [new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61]), 'image/gif'],
      [imageOf(PNG), 'text/plain'],
      [new Uint8Array(0), 'image/png'],
      [new Uint8Array([...PNG, ...new Uint8Array(2 * 1024 * 1024)]), 'image/png'],
    ];
    const objectsBefore = (await env.MEDIA.list()).objects.length;
    for (const [bytes, type] of cases) {
      const res = await putImage(product.id, bytes, type);
      expect(res.status, `${type} ${bytes.length}`).toBe(422);
      expect(res.json.code).toBe('VALIDATION_FAILED');
      expect(res.json.errors.image).toHaveLength(1);
    }
    expect((await env.MEDIA.list()).objects.length).toBe(objectsBefore);
    expect((await call(`/stock/${product.id}`)).json.data.image_url).toBeNull();
    // Exactly 2 MB is allowed.
    expect((await putImage(product.id, new Uint8Array([...PNG, ...new Uint8Array(2 * 1024 * 1024 - PNG.length)]), 'image/png')).status).toBe(200);
  });

  it('an unknown or malformed name is a 404; an unknown product stores nothing', async () => {
    expect((await media(`${'0'.repeat(64)}.png`)).status).toBe(404);
    // Only names of our own form are looked up: an object stored under another name is never served.
    await env.MEDIA.put('x.png', PNG);
    for (const name of ['x.png', `${'A'.repeat(64)}.png`, `${'0'.repeat(64)}.gif`, `${'0'.repeat(64)}.png.exe`]) expect((await media(name)).status).toBe(404);
    const bytes = imageOf(PNG);
    const objectsBefore = (await env.MEDIA.list()).objects.length;
    expect((await putImage(999_999_999, bytes, 'image/png')).status).toBe(404);
    expect((await env.MEDIA.list()).objects.length).toBe(objectsBefore);
  });

  it('deletes an image from the bucket once no product uses it, and not before (two products sharing one)', async () => {
    const [a, b] = [await newProduct(), await newProduct()];
    const shared = imageOf(PNG);
    const name = nameOf((await putImage(a.id, shared, 'image/png')).json.data.image_url);
    expect(nameOf((await putImage(b.id, shared, 'image/png')).json.data.image_url)).toBe(name);

    expect((await removeImage(a.id)).json.data.image_url).toBeNull();
    expect(await stored(name)).toBe(true); // b still shows it
    expect((await media(name)).status).toBe(200);

    // Replacing b's image leaves the shared one unused: deleted.
    const other = nameOf((await putImage(b.id, imageOf(WEBP), 'image/webp')).json.data.image_url);
    expect(await stored(name)).toBe(false);
    expect((await media(name)).status).toBe(404);
    expect(await stored(other)).toBe(true);
    const removed = await removeImage(b.id);
    expect(removed.status).toBe(200);
    expect(await stored(other)).toBe(false);
    // Removing again changes nothing and still answers the product.
    expect((await removeImage(b.id)).status).toBe(200);
    expect((await removeImage(999_999_999)).status).toBe(404);
  });

  it('puts image_set and image_removed on the audit log, in the batch of the change', async () => {
    const product = await newProduct();
    const name = nameOf((await putImage(product.id, imageOf(PNG), 'image/png')).json.data.image_url);
    await removeImage(product.id);
    const { results } = await env.DB.prepare("SELECT action, details FROM audit_log WHERE target = ? AND action LIKE 'product.image%' ORDER BY id")
      .bind(`product:${product.id}`)
      .all<{ action: string; details: string }>();
    expect(results.map((r) => [r.action, JSON.parse(r.details)])).toEqual([
      ['product.image_set', { image: name, previous_image: null }],
      ['product.image_removed', { image: null, previous_image: name }],
    ]);
  });
});

describe('descriptions and the public stock entries', () => {
  it('adds category, image_url, final_sale, allowed_quantities after the spec\'s fields, and description on /stock/{id}', async () => {
    const category = `cat-${crypto.randomUUID()}`;
    const product = await newProduct({ price: 2.5, stock: 3, category, allowedQuantities: [10, 5], cancellable: false });
    const patched = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: '  Line one\nLine <b>two</b>  ' } });
    expect(patched.json.data.description).toBe('Line one\nLine <b>two</b>');
    const image = (await putImage(product.id, imageOf(PNG), 'image/png')).json.data.image_url;

    const entry = (await call('/stock')).json.data.find((e: { product_id: number }) => e.product_id === product.id);
    expect(Object.keys(entry)).toEqual([
      'product_id', 'product_name', 'sku', 'stock_count', 'in_stock', 'price', 'cancellable',
      'category', 'image_url', 'final_sale', 'allowed_quantities', 'volume_prices', 'warranty_hours', 'variants',
    ]);
    expect(entry).toMatchObject({ category, image_url: image, final_sale: true, cancellable: false, allowed_quantities: [5, 10] });
    const detail = (await call(`/stock/${product.id}`)).json.data;
    expect(detail).toEqual({ ...entry, description: 'Line one\nLine <b>two</b>' });

    const plain = await newProduct();
    expect((await call(`/stock/${plain.id}`)).json.data).toMatchObject({ category: null, image_url: null, final_sale: false, allowed_quantities: null, description: null });
  });

  it('refuses a description over 2,000 characters or blank (422), and clears it with null', async () => {
    const product = await newProduct();
    const long = await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: 'x'.repeat(2001) } });
    expect(long.status).toBe(422);
    expect(long.json.errors.description).toBeDefined();
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: '   ' } })).status).toBe(422);
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: 'x'.repeat(2000) } })).status).toBe(200);
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: null } })).json.data.description).toBeNull();
  });
});

describe('the storefront and the embeddable card', () => {
  it('/shop: the active products, no cookie, the house CSP, ETag and 304; a sale leaves it cached, a catalogue change purges it', async () => {
    const product = await newProduct({ price: 3, stock: 2, name: `Storefront ${crypto.randomUUID()}` });
    const hidden = await newProduct({ stock: 2, active: false, name: `Hidden ${crypto.randomUUID()}` });
    const first = await SELF.fetch(`${ORIGIN}/shop`);
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).toContain(product.name);
    expect(html).not.toContain(hidden.name);
    expect(html).toContain('Sign in to buy');
    expect(first.headers.get('Set-Cookie')).toBeNull();
    expect(first.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(first.headers.get('Cache-Control')).toBe('public, max-age=10');
    const etag = first.headers.get('ETag')!;
    expect((await SELF.fetch(`${ORIGIN}/shop`, { headers: { 'If-None-Match': etag } })).status).toBe(304);

    const user = await newUser({ balance: 10 });
    expect((await buy(user, product.id, 1)).status).toBe(201);
    expect(await (await SELF.fetch(`${ORIGIN}/shop`)).text()).toBe(html); // still the cached page

    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { name: `${product.name} renamed` } });
    expect(await (await SELF.fetch(`${ORIGIN}/shop`)).text()).toContain(`${product.name} renamed`);
  });

  it('/embed/products/{id}: framable by any site, no script, no cookie; shows a sale at once; inactive or unknown → 404', async () => {
    const product = await newProduct({ price: 4.5, stock: 1, name: `Embed ${crypto.randomUUID()}` });
    const card = await SELF.fetch(`${ORIGIN}/embed/products/${product.id}`);
    expect(card.status).toBe(200);
    const csp = card.headers.get('Content-Security-Policy')!;
    expect(csp).toContain('frame-ancestors *');
    expect(csp).toContain("script-src 'none'");
    expect(card.headers.get('X-Frame-Options')).toBeNull();
    expect(card.headers.get('Set-Cookie')).toBeNull();
    expect(card.headers.get('ETag')).toBeTruthy();
    const html = await card.text();
    expect(html).not.toContain('<script');
    expect(html).toContain(product.name);
    expect(html).toContain('$4.50');
    expect(html).toContain('In stock');
    expect(html).toContain(`href="${ORIGIN}/shop/${product.id}"`);

    const user = await newUser({ balance: 10 });
    expect((await buy(user, product.id, 1)).status).toBe(201);
    expect(await (await SELF.fetch(`${ORIGIN}/embed/products/${product.id}`)).text()).toContain('Out of stock');

    const inactive = await newProduct({ stock: 1, active: false });
    for (const path of [`/embed/products/${inactive.id}`, '/embed/products/999999999', '/embed/products/abc']) {
      expect((await SELF.fetch(`${ORIGIN}${path}`)).status, path).toBe(404);
    }
  });
});

describe('the dashboard\'s shop', () => {
  it('shows cards with image or placeholder, category, pack sizes and Final sale; filters by category and name', async () => {
    const user = await signedInUser({ balance: 10 });
    const category = `Cat ${crypto.randomUUID().slice(0, 8)}`;
    const gift = await newProduct({ price: 5, stock: 3, category, cancellable: false, name: `Gift ${crypto.randomUUID()}` });
    const other = await newProduct({ price: 1, stock: 3, name: `Other ${crypto.randomUUID()}` });
    await putImage(gift.id, imageOf(PNG), 'image/png');

    const filtered = await visit(`/dashboard/shop?category=${encodeURIComponent(category)}`, { cookie: user.cookie });
    expect(filtered.status).toBe(200);
    expect(filtered.text).toContain(gift.name);
    expect(filtered.text).not.toContain(other.name);
    expect(filtered.text).toContain('Final sale');
    expect(filtered.text).toMatch(/<img class="product-image card" src="\/media\/[0-9a-f]{64}\.png"/);
    expect(filtered.text).toContain(`href="/dashboard/shop/${gift.id}"`);

    const searched = await visit(`/dashboard/shop?q=${encodeURIComponent(other.name.slice(6, 20))}`, { cookie: user.cookie });
    expect(searched.text).toContain(other.name);
    expect(searched.text).not.toContain(gift.name);
    expect(searched.text).toContain('product-image card placeholder');
    // `%` is a character, not a wildcard; a long search is a search (D1 refuses LIKE patterns over 50 bytes).
    expect((await visit('/dashboard/shop?q=%25%25%25', { cookie: user.cookie })).text).toContain('No product matches.');
    const long = encodeURIComponent('é_%'.repeat(33));
    expect((await visit(`/dashboard/shop?q=${long}`, { cookie: user.cookie })).status).toBe(200);
    expect((await SELF.fetch(`${ORIGIN}/shop?q=${long}`)).status).toBe(200);
  });

  it('the product page shows the description as text and "Final sale: this order cannot be cancelled"', async () => {
    const user = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 5, stock: 3, cancellable: false });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { description: 'Works in <b>every</b> region.\nNo refunds.' } });
    const res = await visit(`/dashboard/shop/${product.id}`, { cookie: user.cookie });
    expect(res.status).toBe(200);
    expect(res.text).toContain('Works in &lt;b&gt;every&lt;/b&gt; region.\nNo refunds.');
    expect(res.text).toContain('Final sale: this order cannot be cancelled.');
    const inactive = await newProduct({ active: false });
    expect((await visit(`/dashboard/shop/${inactive.id}`, { cookie: user.cookie })).status).toBe(404);
  });

  it('the review shows quantity, unit price, discount and total; Confirm purchase buys once with the form\'s key', async () => {
    const user = await signedInUser({ balance: 20 });
    const product = await newProduct({ price: 2.5, stock: 5 });
    const shop = await visit(`/dashboard/shop/${product.id}`, { cookie: user.cookie });
    const key = idempotencyKeyIn(shop.text);
    const review = await visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: { product_id: String(product.id), quantity: '3', idempotency_key: key } });
    expect(review.status, review.text).toBe(200);
    expect(review.text).toMatch(/<dt>Quantity<\/dt><dd>3<\/dd>/);
    expect(review.text).toMatch(/<dt>Unit price<\/dt><dd><span class="money">\$2\.50<\/span><\/dd>/);
    expect(review.text).toMatch(/<dt>Discount<\/dt><dd><span class="money">\$0\.00<\/span><\/dd>/);
    expect(review.text).toMatch(/<dt>Total<\/dt><dd><span class="money">\$7\.50<\/span><\/dd>/);
    expect(review.text).toContain('name="expected_total" value="7.50"');
    expect(review.text).toContain(`name="idempotency_key" value="${key}"`);
    expect(await ordersOf(user)).toHaveLength(0); // a review buys nothing

    const confirm = { product_id: String(product.id), quantity: '3', expected_total: '7.50', idempotency_key: key };
    const [first, second] = [await visit('/dashboard/shop', { cookie: user.cookie, form: confirm }), await visit('/dashboard/shop', { cookie: user.cookie, form: confirm })];
    expect([first.status, second.status]).toEqual([303, 303]);
    expect(second.location).toBe(first.location);
    expect(await ordersOf(user)).toHaveLength(1);

    const bad = await visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: { product_id: String(product.id), quantity: '0' } });
    expect(bad.status).toBe(422);
  });

  it('the review is the quote: list price, unit price after volume and discount, all taken off, total (as GET /orders/quote)', async () => {
    const user = await signedInUser({ balance: 50 });
    const product = await newProduct({ price: 10, stock: 5 });
    const code = `REVIEW-${product.id}`;
    expect((await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { volume_prices: [{ min_quantity: 5, price: 8 }] } })).status).toBe(200);
    expect((await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { discount_percent: 10 } })).status).toBe(200);
    expect((await call('/admin/coupons', { admin: true, body: { code, percent_off: 10 } })).status).toBe(201);
    const review = await visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: { quantity: '5', coupon: code, idempotency_key: crypto.randomUUID() } });
    expect(review.status, review.text).toBe(200);
    // 5 × $8.00 (volume) → $7.20 (10 % discount) → $36.00 − $3.60 (10 % coupon) = $32.40; $50.00 − $32.40 = $17.60 off.
    const row = (label: string, value: string) => new RegExp(`<dt>${label}</dt><dd><span class="money">\\$${value.replace('.', '\\.')}</span></dd>`);
    for (const [label, value] of [['List price', '10.00'], ['Unit price', '7.20'], ['Discount', '17.60'], ['Total', '32.40']]) expect(review.text).toMatch(row(label, value));
    expect(review.text).toContain('name="expected_total" value="32.40"');
    const quote = await call(`/orders/quote?product_id=${product.id}&quantity=5&coupon=${code}`, { key: user.key });
    expect(quote.status, quote.text).toBe(200);
    expect(quote.json.data).toMatchObject({ quantity: 5, list_unit_price: 10, unit_price: 7.2, discount_amount: 17.6, total_amount: 32.4, coupon: code });
  });

  it('the product page lists its volume prices; a product without any shows none', async () => {
    const user = await signedInUser();
    const product = await newProduct({ price: 10, stock: 3 });
    const tiers = [{ min_quantity: 5, price: 8 }, { min_quantity: 1000, price: 7.5 }];
    expect((await call(`/admin/products/${product.id}`, { admin: true, method: 'PATCH', body: { volume_prices: tiers } })).status).toBe(200);
    const page = (await visit(`/dashboard/shop/${product.id}`, { cookie: user.cookie })).text;
    expect(page).toContain('>Volume prices</h2>');
    expect(page).toContain('<li>5 or more: <span class="money">$8.00</span> each</li>');
    expect(page).toContain('<li>1,000 or more: <span class="money">$7.50</span> each</li>');
    const plain = await newProduct({ price: 10, stock: 3 });
    expect((await visit(`/dashboard/shop/${plain.id}`, { cookie: user.cookie })).text).not.toContain('Volume prices');
  });

  it('a card\'s quantity form, like the product page\'s, has the optional Coupon and posts to the review', async () => {
    const user = await signedInUser();
    const product = await newProduct({ price: 1, stock: 3, name: `Card ${crypto.randomUUID()}` });
    const list = (await visit(`/dashboard/shop?q=${encodeURIComponent(product.name)}`, { cookie: user.cookie })).text;
    const form = new RegExp(`<form method="post" action="/dashboard/shop/${product.id}/review">((?:(?!</form>)[\\s\\S])*)</form>`).exec(list);
    expect(form, list).not.toBeNull();
    expect(form![1]).toContain(`<label for="product-${product.id}-coupon">Coupon</label>`);
    expect(form![1]).toMatch(/<input id="product-\d+-coupon" name="coupon" type="text"/);
  });

  it('a free order (a 100 % coupon) is reviewed at $0.00 and bought with an empty wallet', async () => {
    const user = await signedInUser();
    const product = await newProduct({ price: 2.5, stock: 5 });
    const coupon = await call('/admin/coupons', { admin: true, body: { code: `FREE-${product.id}`, percent_off: 100 } });
    expect(coupon.status, coupon.text).toBe(201);
    const key = crypto.randomUUID();
    const review = await visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: { quantity: '2', coupon: `free-${product.id}`, idempotency_key: key } });
    expect(review.status, review.text).toBe(200);
    expect(review.text).toMatch(/<dt>Total<\/dt><dd><span class="money">\$0\.00<\/span><\/dd>/);
    expect(review.text).toContain('name="expected_total" value="0.00"');
    const confirm = { product_id: String(product.id), quantity: '2', coupon: `FREE-${product.id}`, expected_total: '0.00', idempotency_key: key };
    const bought = await visit('/dashboard/shop', { cookie: user.cookie, form: confirm });
    expect(bought.status, bought.text).toBe(303);
    const orders = await ordersOf(user);
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ total_amount: 0, discount_amount: 5, coupon: `FREE-${product.id}` });
  });

  it('a price changed since the review: the review again with the new total, nothing bought (409); then the new total buys', async () => {
    const user = await signedInUser({ balance: 20 });
    const product = await newProduct({ price: 2.5, stock: 5 });
    const key = crypto.randomUUID();
    const review = await visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: { quantity: '3', idempotency_key: key } });
    expect(review.text).toContain('name="expected_total" value="7.50"');
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { price: 3 } });

    const confirm = { product_id: String(product.id), quantity: '3', expected_total: '7.50', idempotency_key: key };
    const changed = await visit('/dashboard/shop', { cookie: user.cookie, form: confirm });
    expect(changed.status, changed.text).toBe(409);
    expect(changed.text).toContain('The price changed since your review');
    expect(changed.text).toMatch(/<dt>Total<\/dt><dd><span class="money">\$9\.00<\/span><\/dd>/);
    expect(changed.text).toContain('name="expected_total" value="9.00"');
    expect(await ordersOf(user)).toHaveLength(0);
    expect((await call('/wallet/balance', { key: user.key })).json.data.balance).toBe(20);

    const bought = await visit('/dashboard/shop', { cookie: user.cookie, form: { ...confirm, expected_total: '9.00' } });
    expect(bought.status).toBe(303);
    expect(await ordersOf(user)).toHaveLength(1);
    expect((await call('/wallet/balance', { key: user.key })).json.data.balance).toBe(11);
  });

  it('the review refuses what the purchase would (pack size, stock, an unknown coupon) on the product\'s page, buying nothing', async () => {
    const user = await signedInUser({ balance: 20 });
    const product = await newProduct({ price: 1, stock: 3, allowedQuantities: [2] });
    const review = (fields: Record<string, string>) => visit(`/dashboard/shop/${product.id}/review`, { cookie: user.cookie, form: fields });
    expect((await review({ quantity: '3' })).status).toBe(400);
    expect((await review({ quantity: '2', coupon: 'NO-SUCH-COUPON' })).status).toBe(400);
    const fine = await review({ quantity: '2', coupon: ' ' });
    expect(fine.status).toBe(200);
    expect(fine.text).toMatch(/<dt>Total<\/dt><dd><span class="money">\$2\.00<\/span><\/dd>/);
    expect(await ordersOf(user)).toHaveLength(0);
  });

  it('an order of a final-sale product shows no cancel button; another order does', async () => {
    const user = await signedInUser({ balance: 20 });
    const finalSale = await newProduct({ price: 1, stock: 2, cancellable: false });
    const normal = await newProduct({ price: 1, stock: 2 });
    const finalOrder = (await buy(user, finalSale.id, 1)).json.data;
    const normalOrder = (await buy(user, normal.id, 1)).json.data;
    const finalPage = await visit(`/dashboard/orders/${finalOrder.id}`, { cookie: user.cookie });
    expect(finalPage.text).not.toContain('Cancel order');
    expect(finalPage.text).toContain('Final sale: this order cannot be cancelled.');
    expect((await visit(`/dashboard/orders/${normalOrder.id}`, { cookie: user.cookie })).text).toContain('Cancel order');
  });
});

const ordersOf = async (user: { key: string }) => (await call('/orders', { key: user.key })).json.data as Record<string, unknown>[];
