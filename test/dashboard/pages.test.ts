import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { freshIp, idempotencyKeyIn, newEmail, PASSWORD, sessionFrom, signedInUser, visit } from '../dashboard-helpers';
import { balanceOf, buy, call, fund, newProduct, newUser } from '../helpers';
import { changedTables, snapshot } from '../snapshot';

// Each dashboard page and form against the API it mirrors: same numbers, same rules, same refusals (shown next to
// the field, with the API's status), other users' ids a 404, money forms deduplicated.

/** The text of the field error tied to a control by aria-describedby. */
function fieldErrorOf(html: string, id: string): string | undefined {
  if (!new RegExp(`id="${id}"[^>]*aria-describedby="${id}-error"`).test(html)) return undefined;
  return new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(html)?.[1];
}

const alertOf = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe('sign-up', () => {
  it('creates a user with balance 0 and no API key, signed in', async () => {
    const email = newEmail();
    const res = await visit('/dashboard/sign-up', { form: { name: 'Ada Lovelace', email, password: PASSWORD, password_confirmation: PASSWORD } });
    expect(res.status, res.text).toBe(303);
    expect(res.location).toBe('/dashboard');
    const cookie = sessionFrom(res.setCookie)!;
    const overview = await visit('/dashboard', { cookie });
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('<dt>Balance</dt><dd><span class="money">$0.00</span></dd>');
    const user = await env.DB.prepare('SELECT id, name, balance_cents FROM users WHERE email = ?').bind(email).first<{ id: number; name: string; balance_cents: number }>();
    expect(user).toMatchObject({ name: 'Ada Lovelace', balance_cents: 0 });
    const keys = await env.DB.prepare('SELECT count(*) AS n FROM api_keys WHERE user_id = ?').bind(user!.id).first<{ n: number }>();
    expect(keys!.n).toBe(0);
    expect((await visit('/dashboard/keys', { cookie })).text).toContain('No active keys');
  });

  it('refuses a taken email (any case), a short password and a mismatched confirmation next to the field (422), creating nothing', async () => {
    const existing = await newUser();
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ name: 'Eve', email: existing.email.toUpperCase(), password: PASSWORD, password_confirmation: PASSWORD }, 'field-email', 'The email has already been taken.'],
      [{ name: 'Eve', email: newEmail(), password: 'short', password_confirmation: 'short' }, 'field-password', 'password must be at least 8 characters'],
      [{ name: 'Eve', email: newEmail(), password: PASSWORD, password_confirmation: 'something else' }, 'field-password_confirmation', 'The password confirmation does not match.'],
      [{ name: '', email: newEmail(), password: PASSWORD, password_confirmation: PASSWORD }, 'field-name', 'name may not be blank'],
      [{ name: 'Eve', email: 'not-an-email', password: PASSWORD, password_confirmation: PASSWORD }, 'field-email', 'email must be a valid email address'],
    ];
    const before = await snapshot();
    for (const [form, field, message] of cases) {
      const res = await visit('/dashboard/sign-up', { form });
      expect(res.status, message).toBe(422);
      expect(res.setCookie).toBeNull();
      expect(fieldErrorOf(res.text, field)).toBe(message);
      expect(res.text).not.toContain(PASSWORD);
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
  });
});

describe('overview', () => {
  it('shows the numbers of GET /user/dashboard, amounts as $1,234.56', async () => {
    const user = await signedInUser({ balance: 1234.56 });
    const product = await newProduct({ price: 2.5, stock: 5 });
    await buy(user, product.id, 2);
    const api = (await call('/user/dashboard', { key: user.key })).json.data;
    expect(api).toMatchObject({ balance: 1229.56, total_orders: 1, total_spent: 5, pending_orders: 1 });
    const html = (await visit('/dashboard', { cookie: user.cookie })).text;
    expect(html).toContain('<dt>Balance</dt><dd><span class="money">$1,229.56</span></dd>');
    expect(html).toContain('<dt>Total orders</dt><dd>1</dd>');
    expect(html).toContain('<dt>Total spent</dt><dd><span class="money">$5.00</span></dd>');
    expect(html).toContain('<dt>Pending orders</dt><dd>1</dd>');
    expect(html).toContain(api.recent_orders[0].order_number);
  });
});

describe('API keys page', () => {
  it('creates a key shown once in a 200 page, usable at once, never shown again; revokes it', async () => {
    const user = await signedInUser();
    const res = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'laptop' } });
    expect(res.status).toBe(200);
    expect(res.location).toBeNull();
    expect(res.setCookie).toBeNull();
    const key = /<code class="secret" id="new-api-key">(sk_live_[0-9A-Za-z]{40})<\/code>/.exec(res.text)![1];
    expect((await call('/wallet/balance', { key })).status).toBe(200);

    const list = await visit('/dashboard/keys', { cookie: user.cookie });
    expect(list.text).not.toContain(key);
    expect(list.text).toContain(`sk_live_****${key.slice(-4)}`);
    expect(list.text).toContain('laptop');

    const created = (await call('/api-keys', { key })).json.data.find((k: { name: string }) => k.name === 'laptop');
    const revoke = await visit(`/dashboard/keys/${created.id}/revoke`, { cookie: user.cookie, form: {} });
    expect(revoke.status).toBe(303);
    expect(revoke.location).toBe('/dashboard/keys');
    expect((await call('/wallet/balance', { key })).status).toBe(401);
  });

  it('refuses an empty name (422, next to the field) and a 6th key (400, the API reason)', async () => {
    const user = await signedInUser();
    const empty = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: '   ' } });
    expect(empty.status).toBe(422);
    expect(fieldErrorOf(empty.text, 'field-name')).toBe('name may not be blank');
    for (let i = 2; i <= 5; i++) expect((await visit('/dashboard/keys', { cookie: user.cookie, form: { name: `key ${i}` } })).status).toBe(200);
    const before = await snapshot();
    const sixth = await visit('/dashboard/keys', { cookie: user.cookie, form: { name: 'one too many' } });
    expect(sixth.status).toBe(400);
    expect(alertOf(sixth.text)).toBe('A user can have at most 5 active API keys. Revoke one first.');
    expect(sixth.text).not.toMatch(/sk_live_[0-9A-Za-z]{40}/);
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('another user\'s key id, an unknown or malformed one: 404, nothing revoked', async () => {
    const user = await signedInUser();
    const victim = await newUser();
    const victimKeyId = (await call('/api-keys', { key: victim.key })).json.data[0].id;
    const before = await snapshot();
    for (const id of [victimKeyId, 999_999_999, 'abc', '0', '1e3']) {
      const res = await visit(`/dashboard/keys/${id}/revoke`, { cookie: user.cookie, form: {} });
      expect(res.status, String(id)).toBe(404);
      expect(res.text).toContain('Page not found');
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await call('/wallet/balance', { key: victim.key })).status).toBe(200);
  });
});

describe('wallet page', () => {
  it('lists balance, transactions and deposits; "Add funds" creates a deposit and goes to its payment page', async () => {
    const user = await signedInUser({ balance: 3 });
    const page = await visit('/dashboard/wallet', { cookie: user.cookie });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<span class="money">$3.00</span>');
    const res = await visit('/dashboard/wallet/deposit', {
      cookie: user.cookie,
      form: { amount: '1234.50', gateway: 'gateway_two', crypto_currency: 'BTC', idempotency_key: idempotencyKeyIn(page.text) },
    });
    expect(res.status, res.text).toBe(303);
    const deposits = (await call('/wallet/deposits', { key: user.key })).json.data;
    expect(deposits).toHaveLength(1);
    expect(deposits[0]).toMatchObject({ amount: 1234.5, payment_method: 'gateway_two', crypto_currency: 'BTC', status: 'pending' });
    expect(res.location).toBe(deposits[0].payment_url);
    const after = await visit('/dashboard/wallet', { cookie: user.cookie });
    expect(after.text).toContain('$1,234.50');
    expect(after.text).toContain(`href="${deposits[0].payment_url}"`);
  });

  it('a re-sent form creates one deposit and answers the first redirect; a reused key with another amount is refused', async () => {
    const user = await signedInUser();
    const form = { amount: '25', gateway: 'gateway_one', crypto_currency: 'USDT', idempotency_key: crypto.randomUUID() };
    const [a, b] = await Promise.all([visit('/dashboard/wallet/deposit', { cookie: user.cookie, form }), visit('/dashboard/wallet/deposit', { cookie: user.cookie, form })]);
    const c = await visit('/dashboard/wallet/deposit', { cookie: user.cookie, form });
    expect([a.status, b.status, c.status]).toEqual([303, 303, 303]);
    expect(new Set([a.location, b.location, c.location]).size).toBe(1);
    expect((await call('/wallet/deposits', { key: user.key })).json.data).toHaveLength(1);
    const reused = await visit('/dashboard/wallet/deposit', { cookie: user.cookie, form: { ...form, amount: '26' } });
    expect(reused.status).toBe(422);
    expect(alertOf(reused.text)).toBe('This idempotency_key was already used with a different request.');
    expect((await call('/wallet/deposits', { key: user.key })).json.data).toHaveLength(1);
  });

  it('shows the API\'s messages next to invalid fields (422), creating nothing', async () => {
    const user = await signedInUser();
    const base = { gateway: 'gateway_one', crypto_currency: 'USDT', idempotency_key: crypto.randomUUID() };
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ ...base, amount: 'ten' }, 'field-amount', 'amount must be a number'],
      [{ ...base, amount: '$1,000' }, 'field-amount', 'amount must be a number'],
      [{ ...base, amount: '0x10' }, 'field-amount', 'amount must be a number'],
      [{ ...base, amount: ' 10' }, 'field-amount', 'amount must be a number'],
      [{ ...base, amount: '0.5' }, 'field-amount', 'amount must be between 1.00 and 10000.00'],
      [{ ...base, amount: '10.001' }, 'field-amount', 'amount must have at most 2 decimal places'],
      [{ ...base, amount: '10', gateway: 'paypal' }, 'field-gateway', 'gateway must be one of gateway_one, crypto, gateway_two, gateway_three'],
      [{ ...base, amount: '10', crypto_currency: 'DOGE' }, 'field-crypto_currency', 'crypto_currency must be one of USDT, USDC, BTC, ETH, LTC'],
      [{ ...base, amount: '10', idempotency_key: '' }, 'alert', 'Please correct the fields marked below. idempotency_key must be 1 to 255 printable ASCII characters.'],
    ];
    const before = await snapshot();
    for (const [form, field, message] of cases) {
      const res = await visit('/dashboard/wallet/deposit', { cookie: user.cookie, form });
      expect(res.status, JSON.stringify(form)).toBe(422);
      expect(field === 'alert' ? alertOf(res.text) : fieldErrorOf(res.text, field)).toBe(message);
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await visit('/dashboard/wallet?page=zero', { cookie: user.cookie })).status).toBe(422);
  });
});

describe('shop', () => {
  it('lists active products with price, stock and pack sizes; "Buy" places the order like POST /orders', async () => {
    const user = await signedInUser({ balance: 50 });
    const single = await newProduct({ price: 4.99, stock: 3, name: `Single ${crypto.randomUUID()}` });
    const packed = await newProduct({ price: 0.75, stock: 30, allowedQuantities: [5, 10], name: `Packed ${crypto.randomUUID()}` });
    const hidden = await newProduct({ price: 1, stock: 3, active: false, name: `Hidden ${crypto.randomUUID()}` });
    const shop = await visit('/dashboard/shop', { cookie: user.cookie });
    expect(shop.text).toContain(single.name);
    expect(shop.text).toContain('3 in stock');
    expect(shop.text).toContain('Sold in packs of 5, 10');
    expect(shop.text).not.toContain(hidden.name);

    const res = await visit('/dashboard/shop', { cookie: user.cookie, form: { product_id: String(packed.id), quantity: '10', idempotency_key: idempotencyKeyIn(shop.text) } });
    expect(res.status, res.text).toBe(303);
    const [order] = (await call('/orders', { key: user.key })).json.data;
    expect(order).toMatchObject({ product_id: packed.id, quantity: 10, total_amount: 7.5 });
    expect(res.location).toBe(`/dashboard/orders/${order.id}?notice=charged`);
    expect(await balanceOf(user)).toBe(42.5);
  });

  it('a double-clicked Buy buys once and both answers go to the same order', async () => {
    const user = await signedInUser({ balance: 10 });
    const product = await newProduct({ price: 3, stock: 5 });
    const form = { product_id: String(product.id), quantity: '1', idempotency_key: crypto.randomUUID() };
    const answers = await Promise.all([1, 2, 3].map(() => visit('/dashboard/shop', { cookie: user.cookie, form })));
    const replay = await visit('/dashboard/shop', { cookie: user.cookie, form });
    expect([...answers, replay].map((r) => r.status)).toEqual([303, 303, 303, 303]);
    expect(new Set([...answers, replay].map((r) => r.location)).size).toBe(1);
    expect((await call('/orders', { key: user.key })).json.data).toHaveLength(1);
    expect(await balanceOf(user)).toBe(7);
    // The same key through the API's header is the same key (one key space per user): another request, refused.
    const api = await call('/orders', { key: user.key, body: { product_id: product.id, quantity: 2 }, headers: { 'Idempotency-Key': form.idempotency_key } });
    expect(api.status).toBe(422);
    expect(api.json.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('refusals show the API\'s reason on the page (400) or next to the field (422), and change nothing', async () => {
    const user = await signedInUser({ balance: 5 });
    const product = await newProduct({ price: 4, stock: 2 });
    const packed = await newProduct({ price: 0.5, stock: 20, allowedQuantities: [5, 10] });
    const inactive = await newProduct({ price: 1, stock: 2, active: false });
    const post = (product_id: string, quantity: string) => visit('/dashboard/shop', { cookie: user.cookie, form: { product_id, quantity, idempotency_key: crypto.randomUUID() } });
    const before = await snapshot();

    const poor = await post(String(product.id), '2');
    expect(poor.status).toBe(400);
    expect(alertOf(poor.text)).toBe('Insufficient wallet balance.');
    const short = await post(String(product.id), '3');
    expect(short.status).toBe(400);
    expect(alertOf(short.text)).toBe('Only 2 item(s) in stock.');
    const pack = await post(String(packed.id), '3');
    expect(pack.status).toBe(400);
    expect(alertOf(pack.text)).toBe('This product is sold in packs of 5, 10.');
    const unavailable = await post(String(inactive.id), '1');
    expect(unavailable.status).toBe(400);
    expect(alertOf(unavailable.text)).toBe('This product is not available for sale.');

    for (const [quantity, message] of [['two', 'quantity must be an integer'], ['', 'quantity must be an integer'], ['1.5', 'quantity must be an integer'], ['0', 'quantity must be at least 1'], ['1001', 'quantity may not be greater than 1000']]) {
      const res = await post(String(product.id), quantity);
      expect(res.status, quantity).toBe(422);
      expect(fieldErrorOf(res.text, `product-${product.id}-quantity`)).toBe(message);
    }
    const badProduct = await post('x', '1');
    expect(badProduct.status).toBe(422);
    expect(alertOf(badProduct.text)).toBe('Please correct the fields marked below. product_id must be an integer');
    expect((await post('999999999', '1')).status).toBe(404);
    expect(changedTables(before, await snapshot())).toEqual([]);
  });
});

describe('orders', () => {
  it('shows an order with its items, exports the API\'s text file, and cancels with a refund', async () => {
    const user = await signedInUser({ balance: 20 });
    const product = await newProduct({ price: 2.25, stock: 4 });
    const order = (await buy(user, product.id, 2)).json.data;
    const list = await visit('/dashboard/orders', { cookie: user.cookie });
    expect(list.text).toContain(`href="/dashboard/orders/${order.id}"`);
    const detail = await visit(`/dashboard/orders/${order.id}`, { cookie: user.cookie });
    expect(detail.status).toBe(200);
    for (const item of order.stock_items) expect(detail.text).toContain(`<li>${item}</li>`);

    const mine = await visit(`/dashboard/orders/${order.id}/export`, { cookie: user.cookie });
    const api = await call(`/orders/${order.id}/export`, { key: user.key });
    expect(mine.status).toBe(200);
    expect(mine.text).toBe(api.text);
    for (const header of ['Content-Type', 'Content-Disposition']) expect(mine.headers.get(header)).toBe(api.headers.get(header));

    // "Cancel order" asks first: its confirmation page carries the cancel's form.
    expect(detail.text).toContain(`action="/dashboard/orders/${order.id}/cancel/confirm"`);
    const confirm = await visit(`/dashboard/orders/${order.id}/cancel/confirm`, { cookie: user.cookie });
    const form = { idempotency_key: idempotencyKeyIn(confirm.text) };
    const cancel = await visit(`/dashboard/orders/${order.id}/cancel`, { cookie: user.cookie, form });
    expect(cancel.status).toBe(303);
    expect(cancel.location).toBe(`/dashboard/orders/${order.id}?notice=refunded`);
    expect(await balanceOf(user)).toBe(20);
    // A re-sent cancel answers the same redirect; a new attempt is the API's refusal.
    expect((await visit(`/dashboard/orders/${order.id}/cancel`, { cookie: user.cookie, form })).location).toBe(`/dashboard/orders/${order.id}?notice=refunded`);
    const again = await visit(`/dashboard/orders/${order.id}/cancel`, { cookie: user.cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(again.status).toBe(400);
    expect(alertOf(again.text)).toBe(`Order ${order.order_number} is cancelled and cannot be cancelled.`);
    expect(await balanceOf(user)).toBe(20);
    const transactions = (await call('/wallet/transactions', { key: user.key })).json.data;
    expect(transactions.filter((t: { type: string }) => t.type === 'refund')).toHaveLength(1);
  });

  it('another user\'s order is a 404 on every page and form, and nothing changes', async () => {
    const user = await signedInUser({ balance: 5 });
    const victim = await newUser({ balance: 5 });
    const product = await newProduct({ price: 1, stock: 2 });
    const theirs = (await buy(victim, product.id)).json.data;
    const before = await snapshot();
    for (const path of [`/dashboard/orders/${theirs.id}`, `/dashboard/orders/${theirs.id}/export`, '/dashboard/orders/999999999', '/dashboard/orders/abc']) {
      const res = await visit(path, { cookie: user.cookie });
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain(theirs.stock_items[0]);
    }
    const cancel = await visit(`/dashboard/orders/${theirs.id}/cancel`, { cookie: user.cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(cancel.status).toBe(404);
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect(await balanceOf(victim)).toBe(4);
  });
});

describe('profile and password', () => {
  it('updates name and email; a taken email is refused next to the field', async () => {
    const user = await signedInUser();
    const other = await newUser();
    const email = newEmail();
    const res = await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Grace Hopper', email, current_password: PASSWORD } });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/profile?done=profile_saved');
    expect((await call('/user/profile', { key: user.key })).json.data).toMatchObject({ name: 'Grace Hopper', email });
    const before = await snapshot();
    const taken = await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Grace', email: other.email.toUpperCase(), current_password: PASSWORD } });
    expect(taken.status).toBe(422);
    expect(fieldErrorOf(taken.text, 'field-email')).toBe('The email has already been taken.');
    expect(taken.text).toContain(`value="${other.email.toUpperCase()}"`);
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('refuses a wrong current password, a short or unconfirmed new one (422 next to the field), changing nothing', async () => {
    const user = await signedInUser();
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ current_password: 'nope nope', new_password: 'fresh password', new_password_confirmation: 'fresh password' }, 'field-current_password', 'The current password is incorrect.'],
      [{ current_password: PASSWORD, new_password: 'short', new_password_confirmation: 'short' }, 'field-new_password', 'new_password must be at least 8 characters'],
      [{ current_password: PASSWORD, new_password: 'fresh password', new_password_confirmation: 'fresh passw0rd' }, 'field-new_password', 'The new_password confirmation does not match.'],
    ];
    const before = await snapshot();
    for (const [form, field, message] of cases) {
      const res = await visit('/dashboard/password', { cookie: user.cookie, form });
      expect(res.status).toBe(422);
      expect(fieldErrorOf(res.text, field)).toBe(message);
      expect(res.text).not.toContain(form.new_password);
    }
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await visit('/dashboard/sign-in', { form: { email: user.email, password: PASSWORD }, ip: freshIp() })).status).toBe(303);
  });
});

describe('money shown to people', () => {
  it('groups thousands: $1,234.56', async () => {
    const user = await signedInUser();
    await fund(user, 1_000_000);
    expect((await visit('/dashboard/wallet', { cookie: user.cookie })).text).toContain('$1,000,000.00');
  });
});
