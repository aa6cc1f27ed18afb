import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { toStatement } from '../../src/db/batch';
import { orders } from '../../src/db/schema';
import { newEvent, recordEvent } from '../../src/services/events/log';

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

  it("checks an event was not already recorded through the once-per-object index, never by reading the whole log", async () => {
    // Every purchase, cancel, credit and refund writes its event with this statement: a scan here grows with every
    // event the shop has ever written (the full bench of 2026-11-28 found 540 rows read per purchase).
    const plan = await planOf(recordEvent(newEvent('order.created', new Date().toISOString()), orders, sql`order_number = ${'ORD-1'}`));
    expect(plan).toContain('USING COVERING INDEX events_once_per_object');
    expect(plan).not.toMatch(/SCAN e\b/);
  });
});
