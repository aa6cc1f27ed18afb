import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client';
import { SELF } from '../contract';
import { newProduct, newUser } from '../helpers';

// The typed client (hono/client over the app's route types) against the worker under test.
const fetchWorker: typeof fetch = (input, init) => SELF.fetch(input as RequestInfo, init);

describe('typed client', () => {
  it('buys an item, reads it back and sees the balance drop', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2.5, stock: 2 });
    const api = createClient('http://localhost', user.key, { fetch: fetchWorker });

    const bought = await api.api.v2.orders.$post({ json: { product_id: product.id, quantity: 2 } });
    expect(bought.status).toBe(201);
    if (bought.status !== 201) return;
    const order = (await bought.json()).data;
    expect(order.stock_items).toHaveLength(2);
    expect(order.total_amount).toBe(5);

    const fetched = await api.api.v2.orders[':id'].$get({ param: { id: String(order.id) } });
    expect(fetched.status).toBe(200);
    if (fetched.status === 200) expect((await fetched.json()).data.stock_items).toEqual(order.stock_items);

    const balance = await api.api.v2.wallet.balance.$get();
    if (balance.status === 200) expect((await balance.json()).data).toEqual({ balance: 5, currency: 'USD' });
    else throw new Error(`balance: ${balance.status}`);
  });

  it('surfaces contract errors as typed error bodies', async () => {
    const user = await newUser({ balance: 1 });
    const product = await newProduct({ price: 2, stock: 1 });
    const api = createClient('http://localhost', user.key, { fetch: fetchWorker });
    const res = await api.api.v2.orders.$post({ json: { product_id: product.id, quantity: 1 } });
    expect(res.status).toBe(400);
    if (res.status === 400) expect((await res.json()).code).toBe('INSUFFICIENT_BALANCE');
  });

  it('reads public stock without a key', async () => {
    const product = await newProduct({ stock: 3 });
    const api = createClient('http://localhost', undefined, { fetch: fetchWorker });
    const res = await api.api.v2.stock[':product_id'].$get({ param: { product_id: String(product.id) } });
    if (res.status !== 200) throw new Error(`stock: ${res.status}`);
    expect((await res.json()).data.stock_count).toBe(3);
  });
});
