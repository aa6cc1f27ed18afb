import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { createCheckedApp, SELF } from '../contract';
import { faultyD1, type BatchFault } from '../faults';
import { newOperator } from '../console-helpers';
import { signedInUser, visit } from '../dashboard-helpers';
import { BASE, buy, call, deliverWebhook, expectError, newDeposit, newProduct, newUser, unique, type TestUser } from '../helpers';

// Documents for the books (contract: "Documents for the books"; docs/documents.md): every money movement to or from a
// buyer gets its document in the batch that moves the money, numbered gap-free per type.

const documentsOf = async (user: TestUser, query = '') => {
  const res = await call(`/documents${query}`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json as { data: any[]; meta: { total: number; current_page: number; per_page: number; total_pages: number } };
};

const lastNumber = async (type: string) =>
  (await env.DB.prepare('SELECT coalesce(max(sequence), 0) AS n FROM documents WHERE type = ?').bind(type).first<{ n: number }>())!.n;

const setInvoicing = async (body: Record<string, unknown>) => {
  const res = await call('/admin/settings/invoicing', { method: 'PUT', admin: true, body });
  expect(res.status, res.text).toBe(200);
  return res.json.data;
};

const setBilling = async (user: TestUser, body: Record<string, unknown>) => {
  const res = await call('/user/billing', { method: 'PUT', key: user.key, body });
  expect(res.status, res.text).toBe(200);
  return res.json.data;
};

const SELLER = { legal_name: 'Example Shop GmbH', address: ['1 Main Street', '10115 Berlin'], country: 'DE', tax_id: 'DE123456789' };
const NONE = { ...SELLER, tax_mode: 'none' };
const VAT = { ...SELLER, tax_mode: 'vat', vat_rates: { DE: 19, FR: 20, LU: 17 } };

/** A purchase from a Cloudflare country (request.cf), through the worker's real fetch handler. */
async function buyFrom(user: TestUser, productId: number, quantity: number, country?: string) {
  const request = new Request(`${BASE}/orders`, {
    method: 'POST',
    headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ product_id: productId, quantity }),
    ...(country ? { cf: { country } } : {}),
  } as RequestInit);
  const res = await SELF.fetch(request);
  const json = (await res.json()) as any;
  expect(res.status, JSON.stringify(json)).toBe(201);
  return json.data as { id: number; order_number: string; total_amount: number };
}

const invoiceOf = async (user: TestUser, orderId: number) => (await documentsOf(user, '?type=invoice')).data.find((d) => d.order_id === orderId);
const expectAuditClean = async () => expect(await auditLedger(env.DB)).toEqual([]);

describe('an invoice for every order', () => {
  it('issues the next INV number with the order, the seller and the buyer as they are; no tax under tax_mode none', async () => {
    await setInvoicing(NONE);
    const user = await newUser({ balance: 50 });
    const product = await newProduct({ price: 4.99, stock: 3 });
    const before = await lastNumber('invoice');
    const order = await buy(user, product.id, 2);
    expect(order.status, order.text).toBe(201);
    const { data, meta } = await documentsOf(user);
    expect(meta.total).toBe(1);
    const [invoice] = data;
    expect(invoice).toMatchObject({
      type: 'invoice',
      number: `INV-${String(before + 1).padStart(6, '0')}`,
      order_id: order.json.data.id,
      deposit_id: null,
      corrects: null,
      seller: SELLER,
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
    await expectAuditClean();
  });

  it('VAT: the billing country before the request country, both kept; tax rounded half up from the total', async () => {
    await setInvoicing(VAT);
    const user = await newUser({ balance: 100 });
    const product = await newProduct({ price: 9.98, stock: 5 });
    // No billing details: the request's Cloudflare country decides (FR, 20 %).
    const fromFrance = await buyFrom(user, product.id, 1, 'FR');
    expect(await invoiceOf(user, fromFrance.id)).toMatchObject({
      tax_rate: 20, total_amount: 9.98, tax_amount: 1.66, net_amount: 8.32, evidence: { billing_country: null, ip_country: 'FR' },
    });
    // A billing country wins over the request's (DE, 19 %): 998 x 19 / 119 = 159.34 -> 1.59.
    await setBilling(user, { name: 'Jane Doe', country: 'DE' });
    const fromGermany = await buyFrom(user, product.id, 1, 'FR');
    expect(await invoiceOf(user, fromGermany.id)).toMatchObject({
      tax_rate: 19, tax_amount: 1.59, net_amount: 8.39, tax_note: null, evidence: { billing_country: 'DE', ip_country: 'FR' },
      buyer: { name: 'Jane Doe', country: 'DE' },
    });
    // A country without a rate: 0.
    await setBilling(user, { name: 'Jane Doe', country: 'US' });
    const fromUs = await buyFrom(user, product.id, 1);
    expect(await invoiceOf(user, fromUs.id)).toMatchObject({ tax_rate: 0, tax_amount: 0, net_amount: 9.98 });
    await expectAuditClean();
  });

  it('rounds half up in integers: 0.03 at 20 % is 0.005 of tax, so 0.01', async () => {
    await setInvoicing(VAT);
    const user = await newUser({ balance: 1 });
    await setBilling(user, { name: 'Half', country: 'FR' });
    const product = await newProduct({ price: 0.03, stock: 1 });
    const order = await buyFrom(user, product.id, 1);
    expect(await invoiceOf(user, order.id)).toMatchObject({ tax_rate: 20, total_amount: 0.03, tax_amount: 0.01, net_amount: 0.02 });
  });

  it('reverse charge: a VAT id in another country than the seller\'s; none in the seller\'s own', async () => {
    await setInvoicing(VAT);
    const user = await newUser({ balance: 20 });
    const product = await newProduct({ price: 5, stock: 2 });
    await setBilling(user, { name: 'Jean', company: 'Société SA', address: ['1 rue X'], country: 'FR', vat_id: 'FR12345678901' });
    const abroad = await buyFrom(user, product.id, 1);
    expect(await invoiceOf(user, abroad.id)).toMatchObject({
      tax_rate: 0, tax_amount: 0, net_amount: 5, tax_note: 'Reverse charge: VAT to be accounted for by the recipient.',
      buyer: { company: 'Société SA', address: ['1 rue X'], vat_id: 'FR12345678901' },
    });
    await setBilling(user, { name: 'Hans', country: 'DE', vat_id: 'DE999999999' });
    const home = await buyFrom(user, product.id, 1);
    expect(await invoiceOf(user, home.id)).toMatchObject({ tax_rate: 19, tax_amount: 0.8, tax_note: null });
  });

  it('a document never changes: later settings and billing edits leave issued documents as they were', async () => {
    await setInvoicing(NONE);
    const user = await newUser({ balance: 10 });
    await setBilling(user, { name: 'Before', country: 'DE' });
    const product = await newProduct({ price: 2, stock: 1 });
    const order = await buyFrom(user, product.id, 1);
    const issued = await invoiceOf(user, order.id);
    await setInvoicing({ ...VAT, legal_name: 'Renamed Ltd', address: ['Elsewhere'] });
    await setBilling(user, { name: 'After', country: 'FR', vat_id: 'FR1' });
    expect(await invoiceOf(user, order.id)).toEqual(issued);
    expect(issued).toMatchObject({ seller: { legal_name: SELLER.legal_name }, buyer: { name: 'Before', country: 'DE', vat_id: null }, tax_rate: 0 });
  });

  it('20 parallel purchases get 20 consecutive numbers, each used once', async () => {
    await setInvoicing(NONE);
    const product = await newProduct({ price: 1, stock: 20 });
    const users = await Promise.all(Array.from({ length: 20 }, () => newUser({ balance: 5 })));
    const before = await lastNumber('invoice');
    const results = await Promise.all(users.map((u) => buy(u, product.id, 1)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(await lastNumber('invoice')).toBe(before + 20);
    const { results: rows } = await env.DB.prepare('SELECT sequence, number FROM documents WHERE type = ? AND sequence > ? ORDER BY sequence')
      .bind('invoice', before)
      .all<{ sequence: number; number: string }>();
    expect(rows.map((r) => r.sequence)).toEqual(Array.from({ length: 20 }, (_, i) => before + 1 + i));
    expect(rows.map((r) => r.number)).toEqual(rows.map((r) => `INV-${String(r.sequence).padStart(6, '0')}`));
    await expectAuditClean();
  });

  it('a refused purchase takes no number; an idempotent replay issues nothing new', async () => {
    const user = await newUser({ balance: 1 });
    const product = await newProduct({ price: 5, stock: 2 });
    const before = await lastNumber('invoice');
    expectError(await buy(user, product.id, 1), 400, 'INSUFFICIENT_BALANCE');
    expect(await lastNumber('invoice')).toBe(before);
    const cheap = await newProduct({ price: 0.5, stock: 2 });
    const key = unique('idem');
    const first = await call('/orders', { key: user.key, body: { product_id: cheap.id, quantity: 1 }, headers: { 'Idempotency-Key': key } });
    const again = await call('/orders', { key: user.key, body: { product_id: cheap.id, quantity: 1 }, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(await lastNumber('invoice')).toBe(before + 1);
    expect((await documentsOf(user)).meta.total).toBe(1);
  });
});

describe('a receipt for every credited deposit', () => {
  it('a webhook credit issues one RCT receipt (no tax, the deposit\'s country as evidence); a repeated notification none', async () => {
    await setInvoicing(VAT);
    const user = await newUser();
    const deposit = await newDeposit(user, { amount: 25.5 });
    const before = await lastNumber('receipt');
    const paid = { deposit_id: deposit.deposit_id, status: 'paid', amount: 25.5, transaction_id: unique('tx') };
    expect((await deliverWebhook('gateway_one', paid)).status).toBe(200);
    expect((await deliverWebhook('gateway_one', paid)).status).toBe(200);
    const { data } = await documentsOf(user, '?type=receipt');
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      type: 'receipt', number: `RCT-${String(before + 1).padStart(6, '0')}`, deposit_id: deposit.deposit_id, order_id: null,
      lines: [{ quantity: 1, unit_amount: 25.5, amount: 25.5 }], tax_rate: 0, tax_amount: 0, net_amount: 25.5, total_amount: 25.5,
    });
    expect(data[0].lines[0].description).toBe(`Wallet top-up: deposit #${deposit.deposit_id} via gateway_one`);
    expect(await lastNumber('receipt')).toBe(before + 1);
    await expectAuditClean();
  });

  it('mark paid issues the receipt; a balance adjustment issues none', async () => {
    const user = await newUser({ balance: 3 });
    const deposit = await newDeposit(user, { amount: 10 });
    expect((await call(`/admin/deposits/${deposit.deposit_id}/mark-paid`, { admin: true, method: 'POST' })).status).toBe(200);
    const { data } = await documentsOf(user);
    expect(data.map((d) => d.type)).toEqual(['receipt']);
    await expectAuditClean();
  });

  it('a deposit that pays for an order: a receipt and an invoice in its credit\'s batch', async () => {
    await setInvoicing(VAT);
    const user = await newUser();
    await setBilling(user, { name: 'Payer', country: 'LU' });
    const product = await newProduct({ price: 2.5, stock: 2 });
    const res = await call('/wallet/deposit', { key: user.key, body: { amount: 5, gateway: 'gateway_one', order: { product_id: product.id, quantity: 2, expected_total: 5 } } });
    expect(res.status, res.text).toBe(200);
    const paid = { deposit_id: res.json.data.deposit_id, status: 'paid', amount: 5, transaction_id: unique('tx') };
    expect((await deliverWebhook('gateway_one', paid)).status).toBe(200);
    const { data } = await documentsOf(user);
    expect(data.map((d) => d.type).sort()).toEqual(['invoice', 'receipt']);
    const invoice = data.find((d) => d.type === 'invoice');
    // 500 x 17 / 117 = 72.65 -> 0.73
    expect(invoice).toMatchObject({ total_amount: 5, tax_rate: 17, tax_amount: 0.73, net_amount: 4.27, evidence: { billing_country: 'LU' } });
    await expectAuditClean();
  });
});

describe('a credit note for every refund, naming the invoice it corrects, at its rate', () => {
  async function orderWithInvoice(price = 6, quantity = 2) {
    await setInvoicing(VAT);
    const user = await newUser({ balance: 100 });
    await setBilling(user, { name: 'Refunded', country: 'DE' });
    const product = await newProduct({ price, stock: quantity + 2 });
    await call(`/admin/products/${product.id}`, { method: 'PATCH', admin: true, body: { warranty_hours: 48 } });
    const order = await buyFrom(user, product.id, quantity);
    const invoice = await invoiceOf(user, order.id);
    // The rate changes afterwards: a credit note keeps its invoice's.
    await setInvoicing({ ...VAT, vat_rates: { DE: 7 } });
    return { user, order, invoice };
  }

  const creditNotes = async (user: TestUser) => (await documentsOf(user, '?type=credit_note')).data;

  it("the buyer's cancel", async () => {
    const { user, order, invoice } = await orderWithInvoice();
    const before = await lastNumber('credit_note');
    expect((await call(`/orders/${order.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    expect(await creditNotes(user)).toEqual([
      expect.objectContaining({
        type: 'credit_note', number: `CN-${String(before + 1).padStart(6, '0')}`, corrects: invoice.number, order_id: order.id,
        total_amount: 12, tax_rate: 19, tax_amount: 1.92, net_amount: 10.08, evidence: invoice.evidence,
      }),
    ]);
    // A second cancel refunds nothing and issues nothing.
    expect((await call(`/orders/${order.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(400);
    expect(await lastNumber('credit_note')).toBe(before + 1);
    await expectAuditClean();
  });

  it("the operator's cancel (console)", async () => {
    const { user, order, invoice } = await orderWithInvoice();
    const operator = await newOperator();
    const res = await visit(`/dashboard/console/orders/${order.id}/cancel`, { cookie: operator.cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(res.status, res.text.slice(0, 300)).toBe(303);
    expect(await creditNotes(user)).toEqual([expect.objectContaining({ corrects: invoice.number, total_amount: 12, tax_rate: 19, tax_amount: 1.92 })]);
    await expectAuditClean();
  });

  it("an operator's refund, part of the order", async () => {
    const { user, order, invoice } = await orderWithInvoice();
    const res = await call(`/admin/orders/${order.id}/refund`, { admin: true, body: { amount: 2.5, reason: 'goodwill' } });
    expect(res.status, res.text).toBe(200);
    expect(await creditNotes(user)).toEqual([expect.objectContaining({ corrects: invoice.number, total_amount: 2.5, tax_rate: 19, tax_amount: 0.4 })]);
    await expectAuditClean();
  });

  it("a warranty claim's refund", async () => {
    const { user, order, invoice } = await orderWithInvoice();
    const reported = await call(`/orders/${order.id}/items/0/report`, { key: user.key, body: { reason: 'Does not work.' } });
    expect(reported.status, reported.text).toBe(201);
    const resolved = await call(`/admin/claims/${reported.json.data.id}/refund`, { admin: true, method: 'POST' });
    expect(resolved.status, resolved.text).toBe(200);
    expect(await creditNotes(user)).toEqual([expect.objectContaining({ corrects: invoice.number, total_amount: 6, tax_rate: 19, tax_amount: 0.96 })]);
    await expectAuditClean();
  });
});

describe('settings and billing details', () => {
  it('round trip; defaults; bad input is a 422 that changes nothing', async () => {
    const user = await newUser({ name: 'Account Name' });
    expect((await call('/user/billing', { key: user.key })).json.data).toEqual({ name: 'Account Name', company: null, address: [], country: null, vat_id: null });
    const saved = await setBilling(user, { name: 'Jane', company: 'ACME', address: ['a', 'b'], country: 'FR', vat_id: 'FR1' });
    expect(saved).toEqual({ name: 'Jane', company: 'ACME', address: ['a', 'b'], country: 'FR', vat_id: 'FR1' });
    expect((await call('/user/billing', { key: user.key })).json.data).toEqual(saved);
    expectError(await call('/user/billing', { method: 'PUT', key: user.key, body: { name: 'x', country: 'france' } }), 422, 'VALIDATION_FAILED');
    expectError(await call('/user/billing', { method: 'PUT', key: user.key, body: { country: 'FR' } }), 422, 'VALIDATION_FAILED');
    expect((await call('/user/billing', { key: user.key })).json.data).toEqual(saved);

    const settings = await setInvoicing({ ...VAT, vat_rates: { DE: 19, NL: 7.5 } });
    expect(settings).toEqual({ ...SELLER, tax_mode: 'vat', vat_rates: { DE: 19, NL: 7.5 } });
    expect((await call('/admin/settings/invoicing', { admin: true })).json.data).toEqual(settings);
    for (const bad of [{ ...VAT, vat_rates: { DE: 50.01 } }, { ...VAT, vat_rates: { DE: 19.123 } }, { ...VAT, tax_mode: 'gst' }, { ...VAT, vat_rates: { de: 19 } }]) {
      expectError(await call('/admin/settings/invoicing', { method: 'PUT', admin: true, body: bad }), 422, 'VALIDATION_FAILED');
    }
    expect((await call('/admin/settings/invoicing', { admin: true })).json.data).toEqual(settings);
    const entry = (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
    expect(entry).toMatchObject({ action: 'settings.invoicing_updated' });
  });
});

describe('reads', () => {
  it('lists newest first with a type filter and pagination; another user\'s document is a 404; the page prints', async () => {
    await setInvoicing(NONE);
    const user = await newUser({ balance: 20 });
    const other = await newUser();
    const product = await newProduct({ price: 1, stock: 3 });
    for (let i = 0; i < 3; i++) expect((await buy(user, product.id, 1)).status).toBe(201);
    const page = await documentsOf(user, '?per_page=2&page=2');
    expect(page.meta).toEqual({ current_page: 2, per_page: 2, total: 3, total_pages: 2 });
    const all = await documentsOf(user);
    expect(all.data.map((d) => d.id)).toEqual([...all.data.map((d) => d.id)].sort((a, b) => b - a));
    expect((await documentsOf(user, '?type=receipt')).meta.total).toBe(0);
    expectError(await call('/documents?type=bill', { key: user.key }), 422, 'VALIDATION_FAILED');
    expectError(await call(`/documents/${all.data[0].id}`, { key: other.key }), 404, 'NOT_FOUND');
    expectError(await call(`/documents/${all.data[0].id}/html`, { key: other.key }), 404, 'NOT_FOUND');

    const html = await call(`/documents/${all.data[0].id}/html`, { key: user.key });
    expect(html.status).toBe(200);
    expect(html.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(html.headers.get('Content-Security-Policy')).toContain("frame-ancestors 'none'");
    expect(html.text).toContain(all.data[0].number);
    expect(html.text).toContain('$1.00');
    expect(html.text).not.toContain('TEST');

    const admin = await call(`/admin/documents?user_id=${user.id}&per_page=1`, { admin: true });
    expect(admin.status, admin.text).toBe(200);
    expect(admin.json.meta.total).toBe(3);
    expect(admin.json.data[0]).toMatchObject({ id: all.data[0].id, user_id: user.id });
    const today = new Date().toISOString().slice(0, 10);
    const csv = await call(`/admin/exports/documents.csv?from=${today}&to=${today}`, { admin: true });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\r\n')[0]).toBe(
      'number,type,issued_at,corrects,user_id,buyer_name,buyer_company,buyer_country,buyer_vat_id,order_id,deposit_id,net_amount,tax_rate,tax_amount,total_amount,currency,tax_note,billing_country,ip_country',
    );
    expect(csv.text).toContain(all.data[0].number);
  });
});

describe('faults', () => {
  const app = createCheckedApp();

  const buyThrough = async (fault: BatchFault, user: TestUser, productId: number) => {
    const d1 = faultyD1(env.DB, fault);
    const res = await app.request(
      '/api/v2/orders',
      { method: 'POST', headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json' }, body: JSON.stringify({ product_id: productId, quantity: 1 }) },
      { ...env, DB: d1.db },
    );
    expect(d1.fired()).toBe(true);
    return res;
  };

  it('a purchase whose commit a lost connection hid issues its invoice once, with the next number', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const before = await lastNumber('invoice');
    const res = await buyThrough('lost-after-commit', user, product.id);
    expect(res.status, await res.clone().text()).toBe(201);
    const { data } = await documentsOf(user);
    expect(data.map((d) => d.number)).toEqual([`INV-${String(before + 1).padStart(6, '0')}`]);
    expect(await lastNumber('invoice')).toBe(before + 1);
    await expectAuditClean();
  });

  it('a purchase that never ran (503) takes no number: the retry takes the next one', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const before = await lastNumber('invoice');
    const res = await buyThrough('lost-before-run', user, product.id);
    expect(res.status).toBe(503);
    expect(await lastNumber('invoice')).toBe(before);
    expect((await buy(user, product.id, 1)).status).toBe(201);
    expect((await documentsOf(user)).data.map((d) => d.number)).toEqual([`INV-${String(before + 1).padStart(6, '0')}`]);
    await expectAuditClean();
  });
});

describe('pages', () => {
  it("the dashboard: Documents lists and opens them, an order's page links its invoice and credit notes, the profile saves billing details", async () => {
    await setInvoicing(NONE);
    const user = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 2 });
    const order = (await buy(user, product.id, 1)).json.data;
    expect((await call(`/orders/${order.id}/cancel`, { key: user.key, method: 'POST' })).status).toBe(200);
    const { data } = await documentsOf(user);
    const [creditNote, invoice] = data;

    const list = await visit('/dashboard/documents', { cookie: user.cookie });
    expect(list.status).toBe(200);
    expect(list.text).toContain(`<a href="/dashboard/documents/${invoice.id}">${invoice.number}</a>`);
    expect(list.text).toContain(`<a href="/dashboard/documents/${creditNote.id}">${creditNote.number}</a>`);
    const invoices = await visit('/dashboard/documents?type=invoice', { cookie: user.cookie });
    expect(invoices.text).toContain(invoice.number);
    expect(invoices.text).not.toContain(creditNote.number);

    const orderPage = await visit(`/dashboard/orders/${order.id}`, { cookie: user.cookie });
    expect(orderPage.text).toContain(`<a href="/dashboard/documents/${invoice.id}">${invoice.number}</a>`);
    expect(orderPage.text).toContain(`<a href="/dashboard/documents/${creditNote.id}">${creditNote.number}</a>`);

    const sheet = await visit(`/dashboard/documents/${creditNote.id}`, { cookie: user.cookie });
    expect(sheet.status).toBe(200);
    expect(sheet.text).toContain(`Credit note ${creditNote.number}`);
    expect(sheet.text).toContain(`Corrects invoice`);
    expect(sheet.text).toContain(invoice.number);
    expect(sheet.text).toContain('class="no-print"');
    const other = await signedInUser();
    expect((await visit(`/dashboard/documents/${creditNote.id}`, { cookie: other.cookie })).status).toBe(404);

    const profile = await visit('/dashboard/profile', { cookie: user.cookie });
    expect(profile.text).toContain('Billing details');
    const saved = await visit('/dashboard/billing', { cookie: user.cookie, form: { name: 'Page Buyer', company: '', address: 'Line 1\r\nLine 2', country: 'fr', vat_id: '' } });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    expect(saved.location).toBe('/dashboard/profile?done=billing_saved');
    expect((await call('/user/billing', { key: user.key })).json.data).toEqual({ name: 'Page Buyer', company: null, address: ['Line 1', 'Line 2'], country: 'FR', vat_id: null });
    const refused = await visit('/dashboard/billing', { cookie: user.cookie, form: { name: '', country: 'XYZ' } });
    expect(refused.status).toBe(422);
  });

  it("the console: Documents lists every buyer's, opens any, exports a range; Invoicing saves the settings, audited", async () => {
    const operator = await newOperator();
    const buyer = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 1 });
    expect((await buy(buyer, product.id, 1)).status).toBe(201);
    const [invoice] = (await documentsOf(buyer)).data;
    const list = await visit(`/dashboard/console/documents?user_id=${buyer.id}`, { cookie: operator.cookie });
    expect(list.status).toBe(200);
    expect(list.text).toContain(`<a href="/dashboard/console/documents/${invoice.id}">${invoice.number}</a>`);
    expect(list.text).toContain('1 document(s)');
    const sheet = await visit(`/dashboard/console/documents/${invoice.id}`, { cookie: operator.cookie });
    expect(sheet.text).toContain(`Invoice ${invoice.number}`);
    expect((await visit(`/dashboard/console/documents/${invoice.id}`, { cookie: (await signedInUser()).cookie })).status).toBe(404);

    const form = { legal_name: 'Console Shop SARL', address: '2 Rue Y\n75001 Paris', country: 'fr', tax_id: 'FR999', tax_mode: 'vat', vat_rates: 'FR 20\nde 19\nNL 7.5' };
    const saved = await visit('/dashboard/console/invoicing', { cookie: operator.cookie, form });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    expect((await call('/admin/settings/invoicing', { admin: true })).json.data).toEqual({
      legal_name: 'Console Shop SARL', address: ['2 Rue Y', '75001 Paris'], country: 'FR', tax_id: 'FR999', tax_mode: 'vat', vat_rates: { FR: 20, DE: 19, NL: 7.5 },
    });
    const page = await visit('/dashboard/console/invoicing', { cookie: operator.cookie });
    expect(page.text).toContain('NL 7.5');
    const bad = await visit('/dashboard/console/invoicing', { cookie: operator.cookie, form: { ...form, vat_rates: 'FR twenty' } });
    expect(bad.status).toBe(422);
    const entry = (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
    expect(entry).toMatchObject({ action: 'settings.invoicing_updated', actor: `user:${operator.id}` });
    await setInvoicing(NONE);
  });
});

describe('test mode', () => {
  it('a test key\'s purchase and test-gateway credit issue sandbox documents, marked TEST on the page; live numbers are untouched', async () => {
    const live = await newUser();
    const created = await call('/api-keys', { key: live.key, body: { name: 'sandbox', mode: 'test' } });
    expect(created.status, created.text).toBe(201);
    const test = { ...live, key: created.json.data.key as string };
    const liveBefore = await lastNumber('receipt');
    const deposit = await call('/wallet/deposit', { key: test.key, body: { amount: 20, gateway: 'gateway_one' } });
    expect(deposit.status, deposit.text).toBe(200);
    expect((await call(`/test/deposits/${deposit.json.data.deposit_id}/pay`, { key: test.key, method: 'POST' })).status).toBe(200);
    const { data } = await documentsOf(test);
    expect(data.map((d) => d.type)).toEqual(['receipt']);
    expect(await lastNumber('receipt')).toBe(liveBefore);
    expect((await documentsOf(live)).meta.total).toBe(0);
    const html = await call(`/documents/${data[0].id}/html`, { key: test.key });
    expect(html.status).toBe(200);
    expect(html.text).toContain('TEST');
    // The sandbox's reset deletes the test documents; their numbers are not given again.
    const number = data[0].number;
    expect((await call('/test/reset', { key: test.key, method: 'POST' })).status).toBe(200);
    expect((await documentsOf(test)).meta.total).toBe(0);
    const again = await call('/wallet/deposit', { key: test.key, body: { amount: 5, gateway: 'gateway_one' } });
    expect((await call(`/test/deposits/${again.json.data.deposit_id}/pay`, { key: test.key, method: 'POST' })).status).toBe(200);
    const [next] = (await documentsOf(test)).data;
    expect(next.number > number).toBe(true);
  });
});
