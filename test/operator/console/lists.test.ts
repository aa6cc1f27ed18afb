import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { csvCell, csvFile, csvMoney } from '../../../src/lib/csv';
import { queryPlain } from '../../../src/services/caller';
import { exportQuery } from '../../../src/services/operator/exports';
import { newOperator } from '../../console-helpers';
import { visit } from '../../dashboard-helpers';
import { buy, call, expectError, newDeposit, newProduct, newUser, unique } from '../../helpers';

// The console's lists, second pass: people by name and email, the orders search (number prefix, part of an email or
// a product name), from/to days on orders, deposits and the audit log, and the CSV exports (formula-safe cells).

async function namedBuyer(name: string) {
  const buyer = await newUser({ balance: 50 });
  expect((await call(`/admin/users/${buyer.id}`, { admin: true, method: 'PATCH', body: { name } })).status).toBe(200);
  return buyer;
}

/** Moves a row to another day (the clock of the test runtime cannot be set per request). */
const backdate = (table: 'orders' | 'deposits' | 'wallet_transactions' | 'audit_log', id: number, iso: string) =>
  env.DB.prepare(`UPDATE ${table} SET created_at = ? WHERE id = ?`).bind(iso, id).run();

describe('people by name and email', () => {
  it('orders, deposits and the audit log show the buyer and the operator by name and email, in one page read', async () => {
    const operator = await newOperator();
    const name = unique('Ada Lovelace');
    const buyer = await namedBuyer(name);
    const product = await newProduct({ price: 1, stock: 2 });
    const order = (await buy(buyer, product.id)).json.data;
    await newDeposit(buyer);
    for (const path of [`/dashboard/console/orders?q=${order.order_number}`, `/dashboard/console/deposits?user_id=${buyer.id}`]) {
      const res = await visit(path, { cookie: operator.cookie });
      expect(res.text).toContain(`<a href="/dashboard/console/users/${buyer.id}">${name}</a> <span class="muted">${buyer.email}</span>`);
    }
    await visit(`/dashboard/console/users/${buyer.id}/balance`, { cookie: operator.cookie, form: { amount: '1', description: 'goodwill', idempotency_key: crypto.randomUUID() } });
    const audit = await visit('/dashboard/console/audit', { cookie: operator.cookie });
    expect(audit.text).toContain(`<a href="/dashboard/console/users/${operator.id}">Test User</a> <span class="muted">${operator.email}</span>`);
  });
});

describe('the orders search', () => {
  it('finds an order-number prefix, part of an email and part of a product name, case-insensitively (console and API)', async () => {
    const operator = await newOperator();
    const buyer = await namedBuyer('Grace');
    const productName = unique('Quantum Widget');
    const product = await newProduct({ price: 1, stock: 2, name: productName });
    const order = (await buy(buyer, product.id)).json.data;
    const emailPart = buyer.email.slice(3, 20).toUpperCase();
    const searches = [order.order_number.slice(0, -3).toLowerCase(), emailPart, productName.slice(2).toLowerCase()];
    for (const q of searches) {
      const api = await call(`/admin/orders?q=${encodeURIComponent(q)}`, { admin: true });
      expect(api.json.data.map((o: { id: number }) => o.id), q).toContain(order.id);
      const page = await visit(`/dashboard/console/orders?q=${encodeURIComponent(q)}`, { cookie: operator.cookie });
      expect(page.text, q).toContain(`href="/dashboard/console/orders/${order.id}"`);
    }
    // a prefix is a prefix: the middle of an order number finds nothing; LIKE wildcards are plain characters
    for (const q of [order.order_number.slice(4), '%', '_']) {
      expect((await call(`/admin/orders?q=${encodeURIComponent(q)}&user_id=${buyer.id}`, { admin: true })).json.data, q).toEqual([]);
    }
    // longer than D1's 50-byte LIKE limit: still an answer
    expect((await call(`/admin/orders?q=${'x'.repeat(200)}`, { admin: true })).status).toBe(200);
  });
});

describe('from / to', () => {
  it('keeps whole UTC days, both inclusive, on orders, deposits and the audit log; a malformed day is a 422', async () => {
    const operator = await newOperator();
    const buyer = await namedBuyer('Range');
    const product = await newProduct({ price: 1, stock: 3 });
    const early = (await buy(buyer, product.id)).json.data;
    const late = (await buy(buyer, product.id)).json.data;
    await backdate('orders', early.id, '2020-03-01T00:00:00.000Z');
    await backdate('orders', late.id, '2020-03-02T23:59:59.999Z');
    const ids = async (query: string) => (await call(`/admin/orders?user_id=${buyer.id}&${query}`, { admin: true })).json.data.map((o: { id: number }) => o.id);
    expect(await ids('from=2020-03-01&to=2020-03-01')).toEqual([early.id]);
    expect(await ids('from=2020-03-02&to=2020-03-02')).toEqual([late.id]);
    expect(await ids('from=2020-03-01&to=2020-03-02')).toEqual([late.id, early.id]);
    expect(await ids('to=2020-02-29')).toEqual([]);
    expect(await ids('from=2020-03-03')).toEqual([]);

    const deposit = await newDeposit(buyer);
    await backdate('deposits', deposit.deposit_id, '2020-03-05T12:00:00.000Z');
    const depositIds = async (query: string) => (await call(`/admin/deposits?user_id=${buyer.id}&${query}`, { admin: true })).json.data.map((d: { id: number }) => d.id);
    expect(await depositIds('from=2020-03-05&to=2020-03-05')).toEqual([deposit.deposit_id]);
    expect(await depositIds('from=2020-03-06')).toEqual([]);

    const entry = (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
    await backdate('audit_log', entry.id, '2020-03-07T08:00:00.000Z');
    expect((await call('/admin/audit-log?from=2020-03-07&to=2020-03-07', { admin: true })).json.data.map((a: { id: number }) => a.id)).toEqual([entry.id]);

    const consolePage = await visit(`/dashboard/console/orders?q=${encodeURIComponent(buyer.email)}&from=2020-03-02&to=2020-03-02`, { cookie: operator.cookie });
    expect(consolePage.text).toContain(`/dashboard/console/orders/${late.id}"`);
    expect(consolePage.text).not.toContain(`/dashboard/console/orders/${early.id}"`);

    for (const bad of ['from=2020-3-1', 'to=2020-02-30', 'from=yesterday', 'to=2020-03-01T00:00:00Z']) {
      for (const path of ['/admin/orders', '/admin/deposits', '/admin/audit-log', '/admin/exports/orders.csv']) {
        const res = await call(`${path}?${bad}`, { admin: true });
        expectError(res, 422, 'VALIDATION_FAILED');
        expect(Object.keys(res.json.errors), `${path}?${bad}`).toEqual([bad.split('=')[0]]);
      }
      expect((await visit(`/dashboard/console/deposits?${bad}`, { cookie: operator.cookie })).status).toBe(422);
    }
  });
});

describe('CSV exports', () => {
  it('cells: RFC 4180 quoting, money as decimals, formula-safe except plain numbers', () => {
    expect(csvCell('=HYPERLINK("http://evil","x")')).toBe(`"'=HYPERLINK(""http://evil"",""x"")"`);
    expect(['+1', '-cmd', '@SUM(A1)', '\tx', '\rx'].map(csvCell)).toEqual(["'+1", "'-cmd", "'@SUM(A1)", "'\tx", `"'\rx"`]);
    expect([-4.99, '-4.99', '12', 'a,b', 'line\nbreak', null, true].map(csvCell)).toEqual(['-4.99', '-4.99', '12', '"a,b"', '"line\nbreak"', '', 'true']);
    expect([0, 7, -499, 123456].map(csvMoney)).toEqual(['0.00', '0.07', '-4.99', '1234.56']);
    expect(csvFile(['a', 'b'], [[1, 'x']])).toBe('a,b\r\n1,x\r\n');
  });

  it('orders, deposits and the ledger as CSV (admin token or an operator session), within the range, never a stock item', async () => {
    const operator = await newOperator();
    const buyer = await namedBuyer('=cmd|calc');
    const product = await newProduct({ price: 4.99, stock: 1, name: `=HYPERLINK("http://evil.example/${unique('x')}","click")` });
    const order = (await buy(buyer, product.id)).json.data;
    const item: string = order.stock_items[0];
    await call(`/orders/${order.id}/cancel`, { key: buyer.key, method: 'POST' });
    const deposit = await newDeposit(buyer, { amount: 12.5 });
    for (const [table, id] of [['orders', order.id], ['deposits', deposit.deposit_id]] as const) await backdate(table, id, '2020-04-10T10:00:00.000Z');
    const { results } = await env.DB.prepare('SELECT id FROM wallet_transactions WHERE user_id = ?').bind(buyer.id).all<{ id: number }>();
    for (const { id } of results) await backdate('wallet_transactions', id, '2020-04-10T11:00:00.000Z');

    const orders = await call('/admin/exports/orders.csv?from=2020-04-10&to=2020-04-10', { admin: true });
    expect(orders.status).toBe(200);
    expect(orders.headers.get('Content-Type')).toBe('text/csv; charset=utf-8');
    expect(orders.headers.get('Content-Disposition')).toBe('attachment; filename="orders-from-2020-04-10-to-2020-04-10.csv"');
    const lines = orders.text.split('\r\n');
    expect(lines[0]).toBe(
      'order_number,created_at,status,user_id,user_name,user_email,product_id,product_name,quantity,unit_price,total_amount,final_sale,list_unit_price,discount_amount,coupon',
    );
    expect(lines).toContain(
      `${order.order_number},2020-04-10T10:00:00.000Z,cancelled,${buyer.id},'=cmd|calc,${buyer.email},${product.id},"'${product.name.replaceAll('"', '""')}",1,4.99,4.99,false,4.99,0.00,`,
    );
    expect(orders.text).not.toContain(item);

    const ledger = await call('/admin/exports/transactions.csv?from=2020-04-10&to=2020-04-10', { admin: true });
    const mine = ledger.text.split('\r\n').filter((l) => l.includes(buyer.email));
    expect(mine.map((l) => l.split(',').slice(5, 8).join(','))).toEqual(['adjustment,50.00,50.00', 'purchase,-4.99,45.01', 'refund,4.99,50.00']);
    expect(ledger.text).not.toContain(item);

    const depositsPage = await visit('/dashboard/console/deposits?from=2020-04-10&to=2020-04-10', { cookie: operator.cookie });
    expect(depositsPage.text).toContain('href="/dashboard/console/exports/deposits.csv?from=2020-04-10&amp;to=2020-04-10"');
    expect(depositsPage.text).toContain('href="/dashboard/console/exports/transactions.csv?from=2020-04-10&amp;to=2020-04-10" download="">Export wallet transactions CSV</a>');
    const ledgerCsv = await visit('/dashboard/console/exports/transactions.csv?from=2020-04-10&to=2020-04-10', { cookie: operator.cookie });
    expect(ledgerCsv.text).toBe(ledger.text);
    const depositsCsv = await visit('/dashboard/console/exports/deposits.csv?from=2020-04-10', { cookie: operator.cookie });
    expect(depositsCsv.status).toBe(200);
    expect(depositsCsv.text).toMatch(new RegExp(`^${deposit.deposit_id},[^,]*,2020-04-10T10:00:00.000Z,pending,,${buyer.id},'=cmd\\|calc,${buyer.email},gateway_one,generic,12.50,`, 'm'));

    // outside the range: only the header
    expect((await call('/admin/exports/orders.csv?from=2020-04-11&to=2020-04-11', { admin: true })).text.split('\r\n').filter(Boolean)).toHaveLength(1);
    // the session rules: a user's session 404, none → sign-in, no admin token → 401
    const user = await newUser();
    const { signIn } = await import('../../dashboard-helpers');
    expect((await visit('/dashboard/console/exports/orders.csv', { cookie: await signIn(user.email) })).status).toBe(404);
    expect((await visit('/dashboard/console/exports/orders.csv')).status).toBe(303);
    expect((await visit('/dashboard/console/exports/stock.csv', { cookie: operator.cookie })).status).toBe(404);
    expect((await call('/admin/exports/orders.csv')).status).toBe(401);
    expectError(await call('/admin/exports/stock.csv', { admin: true }), 422, 'VALIDATION_FAILED');
  });

  it('a range with more rows than a file holds is refused whole (422 on from), never cut short', async () => {
    const range = { from: '2020-04-10', to: '2020-04-10' };
    const [file] = await queryPlain(env.DB, [exportQuery('transactions', range, 10_000)]);
    const rows = file.split('\r\n').filter(Boolean).length - 1;
    expect(rows).toBeGreaterThanOrEqual(3);
    await expect(queryPlain(env.DB, [exportQuery('transactions', range, rows - 1)])).rejects.toMatchObject({ status: 422, errors: { from: [expect.stringContaining('export a shorter range')] } });
    const [exact] = await queryPlain(env.DB, [exportQuery('transactions', range, rows)]);
    expect(exact).toBe(file);
  });
});
