import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/lib/crypto';
import { SELF } from '../../contract';
import { idempotencyKeyIn, ORIGIN, postMultipart, signedInUser, visit } from '../../dashboard-helpers';
import { balanceOf, call, newProduct, newUser, unique } from '../../helpers';
import { changedTables, snapshot } from '../../snapshot';
import { CONSOLE_PAGES, CONSOLE_POSTS, consoleFixtures, newOperator } from '../../console-helpers';

// The operator console (/dashboard/console): gating by role, the operator's idle expiry, its forms over the admin
// API's services (audited in their batch, idempotent), stock uploads, one round trip a page.

describe('the console answers only an operator', () => {
  it('every page: 200 for an operator, 404 for a signed-in user (nothing revealed), 303 to sign-in without a session or with an API key', async () => {
    const f = await consoleFixtures();
    const operator = await newOperator();
    const user = await signedInUser();
    for (const [name, path] of CONSOLE_PAGES) {
      const ok = await visit(path(f), { cookie: operator.cookie });
      expect(ok.status, `${name}: ${ok.text.slice(0, 300)}`).toBe(200);
      if (!path(f).endsWith('.csv') && !path(f).includes('.csv?')) expect(ok.text).toContain('aria-label="Console"');
      const hidden = await visit(path(f), { cookie: user.cookie });
      expect(hidden.status, name).toBe(404);
      expect(hidden.text).not.toContain('/dashboard/console');
      expect(hidden.text).not.toContain(f.buyer.email);
      const anonymous = await visit(path(f));
      expect(anonymous.status, name).toBe(303);
      expect(anonymous.location).toMatch(/^\/dashboard\/sign-in\?next=/);
      const withKey = await SELF.fetch(`${ORIGIN}${path(f)}`, { headers: { 'X-API-Key': operator.key }, redirect: 'manual' });
      expect(withKey.status, name).toBe(303);
    }
  });

  it('every form: 404 for a signed-in non-operator, nothing changed (no role, no money, no stock, no entry)', async () => {
    const f = await consoleFixtures();
    const user = await signedInUser();
    const before = await snapshot();
    for (const [name, post] of CONSOLE_POSTS) {
      const [path, form] = post(f);
      const res = await visit(path, { cookie: user.cookie, form });
      expect(res.status, `${name}: ${res.text.slice(0, 200)}`).toBe(404);
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('no user session makes an operator: a role field on the profile or sign-up form is ignored', async () => {
    const user = await signedInUser();
    expect((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Still a user', role: 'operator' } })).status).toBe(303);
    const email = `${unique('signup')}@example.com`;
    const form = { name: 'New', email, password: 'long enough 1', password_confirmation: 'long enough 1', role: 'operator' };
    expect((await visit('/dashboard/sign-up', { form })).status).toBe(303);
    const roles = await env.DB.prepare('SELECT role FROM users WHERE id = ? OR email = ?').bind(user.id, email).all<{ role: string }>();
    expect(roles.results.map((r) => r.role)).toEqual(['user', 'user']);
  });

  it('an operator link appears in an operator\'s dashboard only', async () => {
    const operator = await newOperator();
    const user = await signedInUser();
    expect((await visit('/dashboard', { cookie: operator.cookie })).text).toContain('href="/dashboard/console"');
    expect((await visit('/dashboard', { cookie: user.cookie })).text).not.toContain('/dashboard/console');
  });
});

describe("an operator's session", () => {
  const idleFor = async (cookie: string, minutes: number) =>
    env.DB.prepare('UPDATE sessions SET last_used_at = ? WHERE token_hash = ?')
      .bind(new Date(Date.now() - minutes * 60_000).toISOString(), await sha256Hex(cookie))
      .run();

  it('ends after 60 minutes without use (a user\'s does not)', async () => {
    const operator = await newOperator();
    await idleFor(operator.cookie, 59);
    expect((await visit('/dashboard/console', { cookie: operator.cookie })).status).toBe(200);
    await idleFor(operator.cookie, 62);
    const ended = await visit('/dashboard/console', { cookie: operator.cookie });
    expect(ended.status).toBe(303);
    expect(ended.location).toBe('/dashboard/sign-in?next=%2Fdashboard%2Fconsole');
    expect((await visit('/dashboard', { cookie: operator.cookie })).status).toBe(303);

    const user = await signedInUser();
    await idleFor(user.cookie, 62);
    expect((await visit('/dashboard', { cookie: user.cookie })).status).toBe(200);
  });
});

const stockOf = async (productId: number) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM stock_items WHERE product_id = ? AND status = 'available'").bind(productId).first<{ n: number }>())!.n;

describe('products and stock', () => {
  it('creates a product (303 to its page), saves it, audited as the operator', async () => {
    const operator = await newOperator();
    const sku = unique('CON');
    const form = await visit('/dashboard/console/products', { cookie: operator.cookie });
    const created = await visit('/dashboard/console/products', {
      cookie: operator.cookie,
      form: { name: 'Console card', sku, category: 'cards', price: '4.50', allowed_quantities: '1, 5', active: 'on', final_sale: 'on', idempotency_key: idempotencyKeyIn(form.text) },
    });
    expect(created.status, created.text).toBe(303);
    const id = Number(/\/products\/(\d+)\?done=product_created$/.exec(created.location!)![1]);
    const product = (await call('/admin/products', { admin: true })).json.data.find((p: { id: number }) => p.id === id);
    expect(product).toMatchObject({ sku, price: 4.5, allowed_quantities: [1, 5], active: true, cancellable: false, category: 'cards' });
    const saved = await visit(`/dashboard/console/products/${id}`, { cookie: operator.cookie, form: { name: 'Console card', sku, price: '5', allowed_quantities: '' } });
    expect(saved.status, saved.text).toBe(303);
    const after = (await call('/admin/products', { admin: true })).json.data.find((p: { id: number }) => p.id === id);
    expect(after).toMatchObject({ price: 5, allowed_quantities: null, active: false, cancellable: true, category: null });
    const log = (await call('/admin/audit-log?per_page=2', { admin: true })).json.data;
    expect(log.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ['product.updated', `user:${operator.id}`],
      ['product.created', `user:${operator.id}`],
    ]);
  });

  it('a bad field re-renders the form with its message (422), nothing created', async () => {
    const operator = await newOperator();
    const before = await snapshot();
    const res = await visit('/dashboard/console/products', { cookie: operator.cookie, form: { name: 'X', sku: unique('BAD'), price: '1.999', allowed_quantities: '1, two' } });
    expect(res.status).toBe(422);
    expect(res.text).toContain('price must have at most 2 decimal places');
    expect(res.text).toContain('allowed_quantities must be an array of integers');
    expect(res.text).toContain('value="X"');
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('uploads from the textarea and a .txt file: "Added N, skipped M"; a double post adds once', async () => {
    const operator = await newOperator();
    const product = await newProduct({ price: 1 });
    const page = await visit(`/dashboard/console/products/${product.id}`, { cookie: operator.cookie });
    const key = idempotencyKeyIn(page.text);
    const fields = { items: 'A-1\nA-2\n\nA-1', items_file: new File(['B-1\r\nA-2\nB-2\n'], 'codes.txt', { type: 'text/plain' }), idempotency_key: key };
    const first = await postMultipart(`/dashboard/console/products/${product.id}/stock`, operator.cookie, fields);
    expect(first.status, first.text).toBe(303);
    expect(first.location).toBe(`/dashboard/console/products/${product.id}?added=4&skipped=2`);
    const again = await postMultipart(`/dashboard/console/products/${product.id}/stock`, operator.cookie, fields);
    expect(again.location).toBe(first.location);
    expect(await stockOf(product.id)).toBe(4);
    const shown = await visit(first.location!, { cookie: operator.cookie });
    expect(shown.text).toContain('Added 4, skipped 2.');
    expect((await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0]).toMatchObject({ action: 'stock.added', details: { added: 4, skipped: 2 } });
  });

  it('refuses an upload over 10,000 lines whole, and a file that is not text (422, nothing added)', async () => {
    const operator = await newOperator();
    const product = await newProduct({ price: 1 });
    const path = `/dashboard/console/products/${product.id}/stock`;
    const lines = Array.from({ length: 10_001 }, (_, i) => `L-${i}`).join('\n');
    const over = await postMultipart(path, operator.cookie, { items: lines });
    expect(over.status).toBe(422);
    expect(over.text).toContain('at most 10000 items per call');
    const split = await postMultipart(path, operator.cookie, { items: 'X-1', items_file: new File([lines], 'big.txt', { type: 'text/plain' }) });
    expect(split.status).toBe(422);
    const png = await postMultipart(path, operator.cookie, { items_file: new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2])], 'x.txt', { type: 'text/plain' }) });
    expect(png.status).toBe(422);
    expect(png.text).toContain('must be a text file');
    const controls = await postMultipart(path, operator.cookie, { items_file: new File(['A-1\u0000\u0001\nA-2'], 'x.txt', { type: 'text/plain' }) });
    expect(controls.status).toBe(422);
    const image = await postMultipart(path, operator.cookie, { items_file: new File(['A-1'], 'x.png', { type: 'image/png' }) });
    expect(image.status).toBe(422);
    expect(await stockOf(product.id)).toBe(0);
  });
});

describe("a user's page", () => {
  it('adjusts the balance once per rendered form (a double click), audited as the operator', async () => {
    const operator = await newOperator();
    const buyer = await newUser();
    const page = await visit(`/dashboard/console/users/${buyer.id}/balance/confirm?amount=2.50&description=goodwill`, { cookie: operator.cookie });
    const form = { amount: '2.50', description: 'goodwill', idempotency_key: idempotencyKeyIn(page.text) };
    const [a, b] = [await visit(`/dashboard/console/users/${buyer.id}/balance`, { cookie: operator.cookie, form }), await visit(`/dashboard/console/users/${buyer.id}/balance`, { cookie: operator.cookie, form })];
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(b.location).toBe(`/dashboard/console/users/${buyer.id}?done=balance_adjusted`);
    expect(await balanceOf(buyer)).toBe(2.5);
    const entry = (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
    expect(entry).toMatchObject({ actor: `user:${operator.id}`, action: 'balance.adjusted', target: `user:${buyer.id}`, details: { amount: 2.5, description: 'goodwill' } });
  });

  it('a refused adjustment re-renders with the reason and leaves no entry; an unknown user is a 404', async () => {
    const operator = await newOperator();
    const buyer = await newUser();
    const before = await snapshot();
    const res = await visit(`/dashboard/console/users/${buyer.id}/balance`, { cookie: operator.cookie, form: { amount: '-1', description: 'too much', idempotency_key: crypto.randomUUID() } });
    expect(res.status).toBe(400);
    expect(res.text).toContain('below zero');
    const invalid = await visit(`/dashboard/console/users/${buyer.id}/balance`, { cookie: operator.cookie, form: { amount: '0', description: '', idempotency_key: crypto.randomUUID() } });
    expect(invalid.status).toBe(422);
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await visit('/dashboard/console/users/999999999', { cookie: operator.cookie })).status).toBe(404);
    expect((await visit('/dashboard/console/users/999999999/disable', { cookie: operator.cookie, form: {} })).status).toBe(404);
  });

  it('disables (the buyer\'s key stops at once) and enables; shows a reset link once', async () => {
    const operator = await newOperator();
    const buyer = await newUser();
    const disabled = await visit(`/dashboard/console/users/${buyer.id}/disable`, { cookie: operator.cookie, form: {} });
    expect(disabled.status).toBe(303);
    expect((await call('/wallet/balance', { key: buyer.key })).status).toBe(401);
    expect((await visit(`/dashboard/console/users/${buyer.id}`, { cookie: operator.cookie })).text).toContain('Enable account');
    await visit(`/dashboard/console/users/${buyer.id}/enable`, { cookie: operator.cookie, form: {} });
    expect((await call('/wallet/balance', { key: buyer.key })).status).toBe(200);
    const reset = await visit(`/dashboard/console/users/${buyer.id}/password-reset`, { cookie: operator.cookie, form: {} });
    expect(reset.status).toBe(200);
    const link = /http:\/\/localhost(\/dashboard\/reset-password\/[A-Za-z0-9_-]{43})/.exec(reset.text);
    expect(link).not.toBeNull();
    expect((await visit(`/dashboard/console/users/${buyer.id}`, { cookie: operator.cookie })).text).not.toContain(link![1]);
    expect((await visit(link![1])).status).toBe(200);
    const actions = (await call('/admin/audit-log?per_page=3', { admin: true })).json.data.map((e: { action: string; details: unknown }) => [e.action, e.details]);
    expect(actions).toEqual([['password_reset.created', expect.any(Object)], ['user.updated', { disabled: false }], ['user.updated', { disabled: true }]]);
  });
});

describe('orders and deposits', () => {
  it("finds a buyer's order by its number or the buyer's email", async () => {
    const operator = await newOperator();
    const f = await consoleFixtures();
    const order = (await call(`/admin/orders/${f.orderId}`, { admin: true })).json.data;
    for (const q of [order.order_number, f.buyer.email]) {
      const res = await visit(`/dashboard/console/orders?q=${encodeURIComponent(q)}`, { cookie: operator.cookie });
      expect(res.text).toContain(`href="/dashboard/console/orders/${f.orderId}"`);
    }
    const none = await visit('/dashboard/console/orders?q=ORD-NOPE', { cookie: operator.cookie });
    expect(none.text).toContain('No order matches.');
  });

  it('marks a pending deposit paid (credited once, audited)', async () => {
    const operator = await newOperator();
    const f = await consoleFixtures();
    const page = await visit('/dashboard/console/deposits?status=pending', { cookie: operator.cookie });
    expect(page.text).toContain(`/dashboard/console/deposits/${f.depositId}/mark-paid`);
    for (let i = 0; i < 2; i++) expect((await visit(`/dashboard/console/deposits/${f.depositId}/mark-paid`, { cookie: operator.cookie, form: {} })).status).toBe(303);
    expect(await balanceOf(f.buyer)).toBe(29);
    const entries = (await call('/admin/audit-log?per_page=5', { admin: true })).json.data.filter((e: { action: string }) => e.action === 'deposit.marked_paid');
    expect(entries.map((e: { target: string }) => e.target)).toEqual([`deposit:${f.depositId}`]);
  });

  it('the overview charts the last 30 days (an image with a title) with the same numbers in a table', async () => {
    const operator = await newOperator();
    const res = await visit('/dashboard/console', { cookie: operator.cookie });
    expect(res.text).toMatch(/<svg[^>]*role="img"[^>]*aria-labelledby="sales-chart-title sales-chart-desc"/);
    expect(res.text).toContain('<title id="sales-chart-title">');
    // the table lists only days with activity (newest first), each day at most once, today's purchase among them
    const days = [...res.text.matchAll(/<td role="cell" data-label="Day"><span>(\d{4}-\d{2}-\d{2})<\/span><\/td>/g)].map((m) => m[1]);
    expect(days.length).toBeLessThanOrEqual(30);
    expect(new Set(days).size).toBe(days.length);
    expect([...days].sort().reverse()).toEqual(days);
  });

  it('leads with today, 7 days and 30 days totals; the day table leaves out days without activity', async () => {
    const operator = await newOperator();
    const before = await visit('/dashboard/console', { cookie: operator.cookie });
    const revenue = (html: string, period: string) =>
      new RegExp(`data-label="Period"><span>${period}</span></td><td role="cell" class="num" data-label="Orders"><span>(\\d+)</span>`).exec(html)?.slice(1);
    const [ordersBefore] = revenue(before.text, 'Today')!;
    const buyer = await newUser({ balance: 10 });
    const product = await newProduct({ price: 2, stock: 1 });
    expect((await call('/orders', { key: buyer.key, body: { product_id: product.id, quantity: 1 } })).status).toBe(201);
    const after = await visit('/dashboard/console', { cookie: operator.cookie });
    for (const period of ['Today', 'Last 7 days', 'Last 30 days']) expect(Number(revenue(after.text, period)![0]), period).toBeGreaterThanOrEqual(Number(ordersBefore) + 1);
    const today = new Date().toISOString().slice(0, 10);
    expect(after.text).toContain(`<td role="cell" data-label="Day"><span>${today}</span></td>`);
    expect(after.text.indexOf('Sales totals')).toBeLessThan(after.text.indexOf('sales-chart-title'));
    // no day of the table is all zeros
    const dayRows = after.text.slice(after.text.indexOf('Sales per day (UTC)')).split('</table>')[0].split('<tr').slice(2);
    expect(dayRows.length).toBeGreaterThan(0);
    for (const row of dayRows) expect(row).not.toMatch(/Orders"><span>0<\/span>.*\$0\.00.*\$0\.00.*\$0\.00/);
  });
});
