import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { enqueueEvents } from '../../src/services/events/outbox';
import type { DeliveryMessage } from '../../src/services/events/delivery';
import { SELF } from '../contract';
import { ADMIN_TOKEN, BASE, buy, call, newProduct, newUser, restock, type TestUser } from '../helpers';

// Catalogue events: shop-wide, to every user with an endpoint subscribed to the type by name, never through "*".
// Storage is shared by the tests of this file, so each test looks only at its own product's events.

const CATALOGUE = ['product.restocked', 'product.price_changed', 'product.unavailable'];

async function withEndpoint(events: string[]): Promise<TestUser & { endpointId: number }> {
  const user = await newUser({ balance: 50 });
  const res = await call('/webhook-endpoints', { key: user.key, body: { url: 'https://hooks.example.com/catalogue', events } });
  expect(res.status, res.text).toBe(201);
  // Delivery itself is test/events/delivery.test.ts's: an IP-address URL (stored before the URL rule, as it were) is
  // never called, so the queue consumer makes no request here.
  await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://192.0.2.1/hook' WHERE id = ?").bind(res.json.data.id).run();
  return { ...user, endpointId: res.json.data.id };
}

async function productEvents(user: TestUser, productId: number) {
  const res = await call('/events?per_page=100', { key: user.key });
  expect(res.status, res.text).toBe(200);
  return (res.json.data as Array<{ id: string; type: string; data: { object: any } }>).filter(
    (e) => e.type.startsWith('product.') && e.data.object.product_id === productId,
  );
}

// The list's entry: /stock/{id} adds the description, which an event does not carry.
const stockEntry = async (productId: number) => {
  const { description: _, ...entry } = (await call(`/stock/${productId}`)).json.data;
  return entry;
};

async function subscribers() {
  return { named: await withEndpoint(CATALOGUE), star: await withEndpoint(['*']), other: await withEndpoint(['order.created']) };
}

async function expectOnlyNamed(s: Awaited<ReturnType<typeof subscribers>>, productId: number, types: string[]) {
  const events = await productEvents(s.named, productId);
  expect(events.map((e) => e.type)).toEqual(types);
  expect(await productEvents(s.star, productId)).toEqual([]);
  expect(await productEvents(s.other, productId)).toEqual([]);
  return events;
}

const patch = (productId: number, body: Record<string, unknown>) => call(`/admin/products/${productId}`, { admin: true, method: 'PATCH', body });

describe('catalogue events', () => {
  it('product.restocked when stock goes from 0 to more, with the public stock entry; not again while in stock', async () => {
    const s = await subscribers();
    const product = await newProduct({ price: 2, stock: 0 });
    await restock(product.id, 3);
    const [restocked] = await expectOnlyNamed(s, product.id, ['product.restocked']);
    expect(restocked.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    expect(restocked.data.object).toEqual(await stockEntry(product.id));
    await restock(product.id, 2);
    await expectOnlyNamed(s, product.id, ['product.restocked']);
    // Sold out, then stocked again: restocked again.
    expect((await buy(s.other, product.id, 5)).status).toBe(201);
    await restock(product.id, 1);
    await expectOnlyNamed(s, product.id, ['product.restocked', 'product.unavailable', 'product.restocked']);
  });

  it('product.price_changed with previous_price; not for the same price or another field', async () => {
    const s = await subscribers();
    const product = await newProduct({ price: 2, stock: 1 });
    expect((await patch(product.id, { price: 2 })).status).toBe(200);
    expect((await patch(product.id, { name: 'Renamed' })).status).toBe(200);
    expect((await patch(product.id, { price: 1.5 })).status).toBe(200);
    const [changed] = await expectOnlyNamed(s, product.id, ['product.price_changed', 'product.restocked']);
    expect(changed.data.object).toEqual({ ...(await stockEntry(product.id)), previous_price: 2 });
    expect(changed.data.object.price).toBe(1.5);
  });

  it('product.price_changed when only the volume prices change, carrying the new tiers', async () => {
    const s = await subscribers();
    const product = await newProduct({ price: 2, stock: 1 });
    const tiers = [{ min_quantity: 10, price: 1.5 }];
    expect((await patch(product.id, { volume_prices: tiers })).status).toBe(200);
    expect((await patch(product.id, { volume_prices: tiers })).status).toBe(200);
    const [changed] = await expectOnlyNamed(s, product.id, ['product.price_changed', 'product.restocked']);
    expect(changed.data.object).toMatchObject({ price: 2, previous_price: 2, volume_prices: tiers });
  });

  it('product.unavailable on deactivation and on a purchase that sells the last item', async () => {
    const s = await subscribers();
    const deactivated = await newProduct({ price: 1, stock: 2 });
    expect((await patch(deactivated.id, { active: false })).status).toBe(200);
    const [gone] = await expectOnlyNamed(s, deactivated.id, ['product.unavailable', 'product.restocked']);
    expect(gone.data.object).toMatchObject({ product_id: deactivated.id, stock_count: 2 });

    const soldOut = await newProduct({ price: 1, stock: 3 });
    expect((await buy(s.other, soldOut.id, 2)).status).toBe(201);
    await expectOnlyNamed(s, soldOut.id, ['product.restocked']);
    expect((await buy(s.other, soldOut.id, 1)).status).toBe(201);
    const [last] = await expectOnlyNamed(s, soldOut.id, ['product.unavailable', 'product.restocked']);
    expect(last.data.object).toMatchObject({ product_id: soldOut.id, stock_count: 0, in_stock: false });
  });

  it('carry the image as public stock does: an absolute URL on the origin the change was made through', async () => {
    const s = await subscribers();
    const product = await newProduct({ price: 2, stock: 0 });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...crypto.getRandomValues(new Uint8Array(16))]);
    const put = await SELF.fetch(`${BASE}/admin/products/${product.id}/image`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'image/png' },
      body: png,
    });
    expect(put.status).toBe(200);
    await restock(product.id, 1);
    expect((await patch(product.id, { price: 1.5 })).status).toBe(200);
    expect((await buy(s.other, product.id, 1)).status).toBe(201);
    const events = await expectOnlyNamed(s, product.id, ['product.unavailable', 'product.price_changed', 'product.restocked']);
    const entry = await stockEntry(product.id);
    expect(entry.image_url).toMatch(new RegExp(`^${new URL(BASE).origin}/media/[0-9a-f]{64}\\.png$`));
    for (const event of events) expect(event.data.object.image_url, event.type).toBe(entry.image_url);
  });

  it('go to the outbox and are delivered to the named endpoint only, not to the same user\'s "*" endpoint', async () => {
    const s = await subscribers();
    const star = await call('/webhook-endpoints', { key: s.named.key, body: { url: 'https://hooks.example.com/all', events: ['*'] } });
    expect(star.status).toBe(201);
    await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://192.0.2.1/hook' WHERE id = ?").bind(star.json.data.id).run();
    const product = await newProduct({ price: 1, stock: 0 });
    await restock(product.id, 1);
    const [event] = await productEvents(s.named, product.id);
    // The request published it; handed over again, it goes to the named endpoint alone.
    await env.DB.prepare('UPDATE events SET enqueued_at = NULL WHERE id = ?').bind(event.id).run();
    const sent: DeliveryMessage[] = [];
    const queue = { sendBatch: async (messages: Array<{ body: DeliveryMessage }>) => void sent.push(...messages.map((m) => m.body)) };
    await enqueueEvents(env.DB, queue as unknown as Queue<DeliveryMessage>, [event.id]);
    expect(sent).toEqual([{ event_id: event.id, endpoint_id: s.named.endpointId }]);
  });

  it('an endpoint may subscribe to them; GET /events filters by them', async () => {
    const s = await subscribers();
    const product = await newProduct({ price: 1, stock: 0 });
    await restock(product.id, 1);
    const res = await call('/events?type=product.restocked', { key: s.named.key });
    expect(res.status).toBe(200);
    expect(res.json.data.some((e: any) => e.data.object.product_id === product.id)).toBe(true);
  });
});
