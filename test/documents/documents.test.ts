import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, balanceOf, buy, call, expectError, newDeposit, newProduct, newUser, unique, type TestUser } from '../helpers';

// Documents for the books (contract: "Documents for the books"; docs/documents.md): every money movement to or from a
// buyer gets its document in the batch that moves the money, numbered gap-free per type.

const documentsOf = async (user: TestUser, query = '') => {
  const res = await call(`/documents${query}`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json as { data: any[]; meta: { total: number } };
};

const lastNumber = async (type: string) =>
  (await env.DB.prepare('SELECT last_number AS n FROM document_sequences WHERE type = ?').bind(type).first<{ n: number }>())!.n;

const setInvoicing = async (body: Record<string, unknown>) => {
  const res = await call('/admin/settings/invoicing', { method: 'PUT', admin: true, body });
  expect(res.status, res.text).toBe(200);
  return res.json.data;
};

const NONE = { legal_name: 'Example Shop GmbH', address: ['1 Main Street', '10115 Berlin'], country: 'DE', tax_id: 'DE123456789', tax_mode: 'none' };

describe('an invoice for every order', () => {
  it('issues INV-number with the order, seller and buyer snapshot, no tax under tax_mode none', async () => {
    await setInvoicing(NONE);
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 4.99, stock: 3 });
    const before = await lastNumber('invoice');
    const order = await buy(user, product.id, 2);
    expect(order.status, order.text).toBe(201);
    const { data, meta } = await documentsOf(user);
    expect(meta.total).toBe(1);
    expect(data).toHaveLength(1);
    const [invoice] = data;
    expect(invoice).toMatchObject({
      type: 'invoice',
      number: `INV-${String(before + 1).padStart(6, '0')}`,
      order_id: order.json.data.id,
      deposit_id: null,
      corrects: null,
      seller: { legal_name: 'Example Shop GmbH', address: ['1 Main Street', '10115 Berlin'], country: 'DE', tax_id: 'DE123456789' },
      buyer: { name: 'Test User', company: null, address: [], country: null, vat_id: null, email: user.email },
      lines: [{ description: product.name, quantity: 2, unit_amount: 4.99, amount: 9.98 }],
      net_amount: 9.98,
      tax_rate: 0,
      tax_amount: 0,
      total_amount: 9.98,
      currency: 'USD',
      tax_note: null,
      evidence: { billing_country: null, ip_country: null },
    });
    expect((await call(`/documents/${invoice.id}`, { key: user.key })).json.data).toEqual(invoice);
  });
});
