import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { auditLedger } from '../src/services/audit';
import { buy, call, newProduct, newUser } from './helpers';

// Each check must pass on a consistent database and catch its own kind of corruption.
describe('auditLedger', () => {
  it('passes after real activity and catches each corruption', async () => {
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 1.25, stock: 6 });
    const first = await buy(user, product.id, 2);
    await buy(user, product.id, 1);
    await call(`/orders/${first.json.data.id}/cancel`, { key: user.key, method: 'POST' });
    expect(await auditLedger(env.DB)).toEqual([]);

    const corrupt = async (statement: string, expectedCheck: string, undo: string) => {
      await env.DB.prepare(statement).run();
      const violations = await auditLedger(env.DB);
      await env.DB.prepare(undo).run();
      expect(violations.map((v) => v.check)).toContain(expectedCheck);
    };
    await corrupt(
      `UPDATE users SET balance_cents = balance_cents + 1 WHERE id = ${user.id}`,
      'balance equals the sum of the ledger',
      `UPDATE users SET balance_cents = balance_cents - 1 WHERE id = ${user.id}`,
    );
    await corrupt(
      `UPDATE products SET stock_count = stock_count + 1 WHERE id = ${product.id}`,
      'stock_count equals the available items',
      `UPDATE products SET stock_count = stock_count - 1 WHERE id = ${product.id}`,
    );
    await corrupt(
      `UPDATE wallet_transactions SET balance_after_cents = balance_after_cents + 5 WHERE id = (SELECT min(id) FROM wallet_transactions WHERE user_id = ${user.id})`,
      'balance_after chains by ascending id',
      `UPDATE wallet_transactions SET balance_after_cents = balance_after_cents - 5 WHERE id = (SELECT min(id) FROM wallet_transactions WHERE user_id = ${user.id})`,
    );
    await corrupt(
      `UPDATE wallet_transactions SET type = 'adjustment' WHERE type = 'refund' AND order_id = ${first.json.data.id}`,
      'a cancelled order is refunded exactly once, in full; no other order is refunded',
      `UPDATE wallet_transactions SET type = 'refund' WHERE type = 'adjustment' AND order_id = ${first.json.data.id}`,
    );
    const revokedAt = `(SELECT updated_at FROM orders WHERE id = ${first.json.data.id})`;
    await corrupt(
      `UPDATE stock_items SET status = 'sold', revoked_at = NULL WHERE order_id = ${first.json.data.id}`,
      'items of cancelled orders are revoked, of other orders sold',
      `UPDATE stock_items SET status = 'revoked', revoked_at = ${revokedAt} WHERE order_id = ${first.json.data.id}`,
    );
    await corrupt(
      `UPDATE stock_items SET revoked_at = NULL WHERE order_id = ${first.json.data.id}`,
      'revoked items, and only they, carry revoked_at',
      `UPDATE stock_items SET revoked_at = ${revokedAt} WHERE order_id = ${first.json.data.id}`,
    );
    await corrupt(
      `UPDATE orders SET cancellable = 0 WHERE id = ${first.json.data.id}`,
      'no final-sale order is cancelled',
      `UPDATE orders SET cancellable = 1 WHERE id = ${first.json.data.id}`,
    );
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});
