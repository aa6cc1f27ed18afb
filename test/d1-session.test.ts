import { SELF } from './contract';
import { describe, expect, it } from 'vitest';
import { BASE, newProduct, newUser } from './helpers';

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

describe('D1 sessions (read replicas)', () => {
  it('returns a bookmark with every authenticated response and reads its own writes with it', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 3 });
    const write = await SELF.fetch(`${BASE}/orders`, {
      method: 'POST',
      headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ product_id: product.id, quantity: 1 }),
    });
    expect(write.status).toBe(201);
    const bookmark = write.headers.get('X-D1-Bookmark');
    expect(bookmark).toMatch(BOOKMARK);
    const order = ((await write.json()) as any).data;

    const read = await SELF.fetch(`${BASE}/orders/${order.id}`, { headers: { 'X-API-Key': user.key, 'X-D1-Bookmark': bookmark! } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as any).data.order_number).toBe(order.order_number);
    const next = read.headers.get('X-D1-Bookmark');
    expect(next).toMatch(BOOKMARK);
    expect(next! >= bookmark!).toBe(true);
  });

  it('ignores a malformed bookmark (falls back to the primary) instead of failing', async () => {
    const user = await newUser({ balance: 2 });
    const res = await SELF.fetch(`${BASE}/wallet/balance`, { headers: { 'X-API-Key': user.key, 'X-D1-Bookmark': 'not a bookmark' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.balance).toBe(2);
  });

  it('public responses carry no bookmark (they are cached for everyone)', async () => {
    const res = await SELF.fetch(`${BASE}/stock`);
    expect(res.status).toBe(200);
    expect(res.headers.get('X-D1-Bookmark')).toBeNull();
  });
});
