import { describe, expect, it } from 'vitest';
import { buy, call, newProduct, newUser } from './helpers';

describe('smoke', () => {
  it('buys an item', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2.5, stock: 3 });
    const res = await buy(user, product.id, 2);
    expect(res.status, res.text).toBe(201);
    expect(res.json.data.stock_items).toHaveLength(2);
    const bal = await call('/wallet/balance', { key: user.key });
    expect(bal.json.data.balance).toBe(5);
  });
});
