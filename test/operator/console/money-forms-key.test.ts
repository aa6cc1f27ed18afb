import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { balanceOf, buy, call, newProduct, newUser } from '../../helpers';
import { visit } from '../../dashboard-helpers';

// A console form that moves money (refund, balance adjustment, claim refund) without its idempotency_key is a 422 on
// that field and changes nothing (contract: "A revoked key buys nothing..."): a re-sent form never refunds twice.

describe('console money forms need their idempotency_key', () => {
  it('refund, balance adjustment and claim refund: 422 without it (nothing changes), done with it', async () => {
    const operator = await newOperator();
    const buyer = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 3 });
    expect((await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 72 } })).status).toBe(200);
    const order = (await buy(buyer, product.id, 2)).json.data;
    expect((await call(`/orders/${order.id}/items/0/report`, { key: buyer.key, body: { reason: 'Does not work' } })).status).toBe(201);
    const claimId = (await env.DB.prepare('SELECT id FROM claims WHERE order_id = ?').bind(order.id).first<{ id: number }>())!.id;
    const posts: Array<[string, Record<string, string>]> = [
      [`/dashboard/console/orders/${order.id}/refund`, { amount: '0.5', reason: 'goodwill' }],
      [`/dashboard/console/users/${buyer.id}/balance`, { amount: '1', description: 'goodwill' }],
      [`/dashboard/console/claims/${claimId}/refund`, {}],
    ];
    for (const [path, form] of posts) {
      for (const key of [undefined, '']) {
        const res = await visit(path, { cookie: operator.cookie, form: key === undefined ? form : { ...form, idempotency_key: key } });
        expect(res.status, path).toBe(422);
        expect(res.text).toContain('idempotency_key is required');
      }
    }
    expect(await balanceOf(buyer)).toBe(6);
    expect((await env.DB.prepare('SELECT status FROM claims WHERE id = ?').bind(claimId).first<{ status: string }>())!.status).toBe('open');
    // The claim's Refund goes through its confirmation page, whose Confirm form carries one.
    const page = await visit(`/dashboard/console/claims/${claimId}/refund/confirm`, { cookie: operator.cookie, form: {} });
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`action="/dashboard/console/claims/${claimId}/refund"[^>]*>(?:(?!</form>).)*<input type="hidden" name="idempotency_key" value="[0-9a-f-]{36}"`, 's'));
    for (const [path, form] of posts) {
      expect((await visit(path, { cookie: operator.cookie, form: { ...form, idempotency_key: crypto.randomUUID() } })).status, path).toBe(303);
    }
    expect(await balanceOf(buyer)).toBe(9.5);
  });
});
