import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { postMultipart, signedInUser, visit } from '../../dashboard-helpers';
import { call, newProduct } from '../../helpers';

// The console's product page: "Description", "Image" with "Upload image", and "Remove image" behind a confirmation
// page; the same service functions as the admin API (signature check, audit log, deletion of an unused image).

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const pngFile = () => new File([PNG, crypto.getRandomValues(new Uint8Array(8))], 'card.png', { type: 'image/png' });
const productPage = (id: number) => `/dashboard/console/products/${id}`;
/** The product's image as stored (not through the edge cache). */
const storedImage = async (id: number) => (await env.DB.prepare('SELECT image FROM products WHERE id = ?').bind(id).first<{ image: string | null }>())!.image;

describe('the console product page: description and image', () => {
  it('saves the description with its line breaks, shown back in the form', async () => {
    const operator = await newOperator();
    const product = await newProduct({ price: 1.5 });
    const form = { name: product.name, sku: product.sku, price: '1.50', active: 'on', description: 'Line one\r\nLine <b>two</b>' };
    const saved = await visit(productPage(product.id), { cookie: operator.cookie, form });
    expect(saved.status, saved.text).toBe(303);
    expect((await call(`/stock/${product.id}`)).json.data.description).toBe('Line one\nLine <b>two</b>');
    expect((await visit(productPage(product.id), { cookie: operator.cookie })).text).toContain('>Line one\nLine &lt;b&gt;two&lt;/b&gt;</textarea>');
  });

  it('Upload image stores a checked image; a wrong file is the page again (422); Remove image asks first, then removes', async () => {
    const operator = await newOperator();
    const product = await newProduct();
    const uploaded = await postMultipart(`${productPage(product.id)}/image`, operator.cookie, { image: pngFile() });
    expect(uploaded.status, uploaded.text).toBe(303);
    expect(uploaded.location).toBe(`${productPage(product.id)}?done=image_uploaded`);
    const imageUrl: string = (await call(`/stock/${product.id}`)).json.data.image_url;
    const name = imageUrl.slice(imageUrl.lastIndexOf('/') + 1);
    expect(await env.MEDIA.head(name)).not.toBeNull();

    const gif = await postMultipart(`${productPage(product.id)}/image`, operator.cookie, { image: new File(['GIF89a'], 'x.gif', { type: 'image/gif' }) });
    expect(gif.status).toBe(422);
    expect(gif.text).toContain('Content-Type must be one of');
    expect(await storedImage(product.id)).toBe(name);

    // The confirmation page says what will happen and changes nothing; only its Confirm removes.
    const page = await visit(productPage(product.id), { cookie: operator.cookie });
    expect(page.text).toMatch(new RegExp(`<form method="get" action="${productPage(product.id)}/image/remove/confirm"[^>]*>\\s*<button[^>]*>Remove image</button>`));
    const confirmation = await visit(`${productPage(product.id)}/image/remove/confirm`, { cookie: operator.cookie });
    expect(confirmation.status).toBe(200);
    expect(confirmation.text).toContain(`The image of &quot;${product.name}&quot; will be removed`);
    expect(confirmation.text).toContain(`<form method="post" action="${productPage(product.id)}/image/remove"`);
    expect(confirmation.text).toMatch(/<button type="submit" class="danger">Confirm<\/button>/);
    expect(confirmation.text).toContain(`href="${productPage(product.id)}" class="button secondary">Back</a>`);
    expect(await storedImage(product.id)).toBe(name);
    const removed = await visit(`${productPage(product.id)}/image/remove`, { cookie: operator.cookie, form: {} });
    expect(removed.status).toBe(303);
    expect(await storedImage(product.id)).toBeNull();
    expect((await call(`/stock/${product.id}`)).json.data.image_url).toBeNull(); // purged
    expect(await env.MEDIA.head(name)).toBeNull();

    const { results } = await env.DB.prepare("SELECT actor, action FROM audit_log WHERE target = ? AND action LIKE 'product.image%' ORDER BY id")
      .bind(`product:${product.id}`)
      .all();
    expect(results).toEqual([
      { actor: `user:${operator.id}`, action: 'product.image_set' },
      { actor: `user:${operator.id}`, action: 'product.image_removed' },
    ]);
  });

  it('a signed-in user who is not an operator gets 404 and changes nothing', async () => {
    const user = await signedInUser();
    const product = await newProduct();
    expect((await postMultipart(`${productPage(product.id)}/image`, user.cookie, { image: pngFile() })).status).toBe(404);
    expect((await visit(`${productPage(product.id)}/image/remove/confirm`, { cookie: user.cookie })).status).toBe(404);
    expect((await visit(`${productPage(product.id)}/image/remove`, { cookie: user.cookie, form: {} })).status).toBe(404);
    expect(await storedImage(product.id)).toBeNull();
  });
});
