import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { toStatement } from '../src/db/batch';

// Hot statements and the indexes they must use (issue 17). A plan that falls back to a scan still gives the right
// answer, so only this says the purchase and the order reads stay proportional to the order, not to the stock.

async function planOf(query: ReturnType<typeof sql>): Promise<string> {
  const explained = toStatement(env.DB, sql`EXPLAIN QUERY PLAN ${query}`);
  const { results } = await explained.all<{ detail: string }>();
  return results.map((r) => r.detail).join(' | ');
}

describe('query plans', () => {
  it('indexes sold items only, and finds an order\'s items through that index', async () => {
    const { results } = await env.DB.prepare('PRAGMA index_list(stock_items)').all<{ name: string; partial: number }>();
    expect(results.find((i) => i.name === 'stock_items_order')?.partial).toBe(1);
    const byOrder = await planOf(sql`SELECT content FROM stock_items WHERE order_id = (SELECT id FROM orders WHERE order_number = ${'ORD-1'}) ORDER BY id`);
    expect(byOrder).toContain('USING INDEX stock_items_order');
    expect(byOrder).not.toContain('TEMP B-TREE');
    const count = await planOf(sql`SELECT count(*) FROM stock_items WHERE order_id = ${1}`);
    expect(count).toContain('stock_items_order');
  });
});
