import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { PASSWORD, signIn, visit } from '../dashboard-helpers';
import { alertEmailsTo, alertLines, callWithQueue, emailsTo, scheduledRun, send, type SentEmail } from '../email-helpers';
import { balanceOf, buy, call, expectError, newProduct, newUser, unique, type TestUser } from '../helpers';
import { depositRow, notify, paidNotification, stripeSignature, vendorDeposit, vendorSays } from '../vendors';

// What the email contract promises at its edges: names that are HTML or carry line breaks, a payment taken back after
// its credit, and an account whose address changes while verification is required.

const REQUIRED = { EMAIL_VERIFICATION: 'required' };
const DAY_MS = 24 * 3_600_000;

/** Hostile names, and how an HTML text node must show them (written out here, not computed by the code under test). */
const USER_NAME = '<img src=x onerror=alert(1)> "quotes" & <b>';
const USER_NAME_HTML = '&lt;img src=x onerror=alert(1)&gt; &quot;quotes&quot; &amp; &lt;b&gt;';
const PRODUCT_NAME = 'Gift <b>card</b> & "more" <img src=x onerror=alert(2)>';
const PRODUCT_NAME_HTML = 'Gift &lt;b&gt;card&lt;/b&gt; &amp; &quot;more&quot; &lt;img src=x onerror=alert(2)&gt;';

/** The text part shows the value as it is; the HTML part only escaped, with no tag of the data's own. */
function expectShownAsText(message: SentEmail, raw: string, html: string) {
  expect(message.text).toContain(raw);
  expect(message.html).toContain(html);
  expect(message.html).not.toMatch(/<img|<b>|<\/b>/i);
}

describe('hostile names', () => {
  it('receipts, reset links, email-change notices and verification links show them as text', async () => {
    const user = await newUser({ balance: 10, name: USER_NAME });
    const product = await newProduct({ price: 1, stock: 2, name: PRODUCT_NAME });
    const bought = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    expect(bought.res.status, bought.res.text).toBe(201);
    const reset = await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
    const moved = await callWithQueue('/user/profile', { key: user.key, method: 'PUT', body: { email: `${unique('moved')}@example.org` }, vars: REQUIRED });
    expect(moved.res.status, moved.res.text).toBe(200);
    const { sent } = await send([...bought.jobs, ...reset.jobs, ...moved.jobs]);
    expect(sent.map((m) => m.subject)).toEqual([
      `Test Shop: receipt for order ${bought.res.json.data.order_number}`,
      'Test Shop: reset your password',
      'Test Shop: your email address was changed',
      'Test Shop: confirm your email address',
    ]);
    for (const message of sent) expectShownAsText(message, `Hello ${USER_NAME},`, `Hello ${USER_NAME_HTML},`);
    expectShownAsText(sent[0], `Product: ${PRODUCT_NAME}`, `Product: ${PRODUCT_NAME_HTML}`);
  });

  it("an operator alert shows the product's name (and the operator's own) as text", async () => {
    const operator = await newOperator();
    expect((await call(`/admin/users/${operator.id}`, { admin: true, method: 'PATCH', body: { name: USER_NAME } })).status).toBe(200);
    const product = await newProduct({ price: 1, stock: 11, name: PRODUCT_NAME });
    expect((await buy(await newUser({ balance: 1 }), product.id, 1)).status).toBe(201); // 10 left: the threshold
    const jobs = await scheduledRun(Date.now() + 40 * DAY_MS);
    const [alert] = await alertEmailsTo(operator.email, 'low_stock');
    const { sent } = await send(jobs.filter((job) => job.email_id === alert.id));
    expect(sent).toHaveLength(1);
    expectShownAsText(sent[0], `Product #${product.id} ${PRODUCT_NAME}: 10 left`, `Product #${product.id} ${PRODUCT_NAME_HTML}: 10 left`);
    expectShownAsText(sent[0], `Hello ${USER_NAME},`, `Hello ${USER_NAME_HTML},`);
  });

  it('a name with CR/LF adds no header and leaves To and Subject whole; an address with CR/LF is refused', async () => {
    const name = 'Eve\r\nBcc: victim@example.net\r\nSubject: pwned';
    // The API refuses such a name now (human text); one stored before that rule still changes no header.
    expectError(await call('/admin/users', { admin: true, body: { name, email: `${unique('eve')}@example.com`, password: 'correct horse battery' } }), 422, 'VALIDATION_FAILED');
    const user = await newUser({ balance: 5 });
    await env.DB.prepare('UPDATE users SET name = ? WHERE id = ?').bind(name, user.id).run();
    const product = await newProduct({ price: 1, stock: 1 });
    const bought = await callWithQueue('/orders', { key: user.key, body: { product_id: product.id, quantity: 1 } });
    const reset = await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
    const { sent } = await send([...bought.jobs, ...reset.jobs]);
    expect(sent.map((m) => [m.from, m.to, m.subject])).toEqual([
      ['Test Shop <shop@example.com>', user.email, `Test Shop: receipt for order ${bought.res.json.data.order_number}`],
      ['Test Shop <shop@example.com>', user.email, 'Test Shop: reset your password'],
    ]);
    for (const message of sent) {
      expect(Object.keys(message).sort()).toEqual(['from', 'html', 'subject', 'text', 'to']);
      expect(message.text).toContain(`Hello ${name},`); // in the body, where it is only text
    }
    const injected = `${unique('eve')}@example.com\r\nBcc: victim@example.net`;
    expectError(await call('/user/profile', { key: user.key, method: 'PUT', body: { email: injected } }), 422, 'VALIDATION_FAILED');
    expectError(await call('/auth/forgot-password', { body: { email: injected } }), 422, 'VALIDATION_FAILED');
    expectError(await call('/admin/users', { admin: true, body: { name: 'Eve', email: injected, password: 'correct horse battery' } }), 422, 'VALIDATION_FAILED');
  });
});

describe('a payment taken back after its credit (reversed)', () => {
  const ledgerOf = (user: TestUser) =>
    env.DB.prepare('SELECT count(*) AS n, sum(amount_cents) AS cents FROM wallet_transactions WHERE user_id = ?').bind(user.id).first();

  it('alerts the operators once, however often Stripe repeats the refund; it credits and debits nothing', async () => {
    const operator = await newOperator();
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    expect((await notify('stripe', ...(await paidNotification('stripe', deposit)))).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    const ledger = await ledgerOf(user);

    const charge = { id: 'ch_reversed', object: 'charge', payment_intent: `pi_${deposit.reference}`, amount: 1000, amount_refunded: 1000 };
    const refund = JSON.stringify({ id: 'evt_refund', object: 'event', type: 'charge.refunded', data: { object: charge } });
    for (let delivery = 0; delivery < 2; delivery++) {
      expect((await notify('stripe', refund, { 'Stripe-Signature': await stripeSignature(refund) })).status).toBe(200);
    }
    expect(await balanceOf(user)).toBe(10);
    expect(await ledgerOf(user)).toEqual(ledger);
    expect((await depositRow(deposit.id)).status).toBe('paid');
    const line = `Deposit #${deposit.id} via gateway_three: reversed (reported charge.refunded, 10.00 USD)`;
    expect(await alertLines('payment', `Deposit #${deposit.id} %`)).toEqual([line]);

    const jobs = await scheduledRun(Date.now() + 50 * DAY_MS);
    const [alert] = await alertEmailsTo(operator.email, 'payment');
    const { sent } = await send(jobs.filter((job) => job.email_id === alert.id));
    expect(sent.map((m) => [m.to, m.subject])).toEqual([[operator.email, 'Test Shop alert: Payments that need a look']]);
    expect(sent[0].text.split(line)).toHaveLength(2); // quoted once
  });
});

describe('EMAIL_VERIFICATION=required: a changed email', () => {
  const changeEmail = (user: TestUser, email: string) => callWithQueue('/user/profile', { key: user.key, method: 'PUT', body: { email }, vars: REQUIRED });
  const linkIn = (jobs: Array<{ link?: string }>) => new URL(jobs.find((job) => job.link)!.link!).pathname;
  const deposit = (user: TestUser) => call('/wallet/deposit', { key: user.key, body: { amount: 5, gateway: 'gateway_one' }, vars: REQUIRED });
  const purchase = (user: TestUser, productId: number) => call('/orders', { key: user.key, body: { product_id: productId, quantity: 1 }, vars: REQUIRED });

  it('is unverified again: the link goes to the new address, an earlier link no longer verifies, money waits for the new one', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 2 });
    const [first, second] = [`${unique('first')}@example.org`, `${unique('second')}@example.org`];
    const toFirst = await changeEmail(user, first);
    expect(toFirst.res.json.data).toMatchObject({ email: first, email_verified: false });
    const toSecond = await changeEmail(user, second);
    expect(toSecond.res.json.data).toMatchObject({ email: second, email_verified: false });
    const { sent } = await send([...toFirst.jobs, ...toSecond.jobs]);
    expect(sent.map((m) => [m.to, m.subject])).toEqual([
      [user.email, 'Test Shop: your email address was changed'],
      [first, 'Test Shop: confirm your email address'],
      [first, 'Test Shop: your email address was changed'],
      [second, 'Test Shop: confirm your email address'],
    ]);

    const refused = async () => {
      expectError(await purchase(user, product.id), 403, 'EMAIL_NOT_VERIFIED');
      expectError(await deposit(user), 403, 'EMAIL_NOT_VERIFIED');
    };
    await refused();
    expect((await visit(linkIn(toFirst.jobs), { vars: REQUIRED })).status).toBe(404); // the address the account left
    await refused();
    expect((await visit(linkIn(toSecond.jobs), { vars: REQUIRED })).status).toBe(200);
    expect((await call('/user/profile', { key: user.key, vars: REQUIRED })).json.data.email_verified).toBe(true);
    expect((await purchase(user, product.id)).status).toBe(201);
    expect((await deposit(user)).status).toBe(200);
  });

  it('an address the account comes back to (A → B → A) is verified by its newest link only, not one sent before', async () => {
    const user = await newUser({ balance: 10 });
    const [a, b] = [`${unique('a')}@example.org`, `${unique('b')}@example.org`];
    const toA = await changeEmail(user, a);
    await changeEmail(user, b);
    const backToA = await changeEmail(user, a);
    expect(backToA.res.json.data).toMatchObject({ email: a, email_verified: false });
    expect((await visit(linkIn(toA.jobs), { vars: REQUIRED })).status).toBe(404);
    expect((await call('/user/profile', { key: user.key, vars: REQUIRED })).json.data.email_verified).toBe(false);
    expect((await visit(linkIn(backToA.jobs), { vars: REQUIRED })).status).toBe(200);
    expect((await call('/user/profile', { key: user.key, vars: REQUIRED })).json.data.email_verified).toBe(true);
  });

  it('the dashboard profile: saving a new address does the same; saving the same one changes nothing', async () => {
    const user = await newUser({ balance: 10 });
    const product = await newProduct({ price: 1, stock: 1 });
    const cookie = await signIn(user.email);
    const save = (email: string) => visit('/dashboard/profile', { cookie, form: { name: 'Test User', email, email_receipts: 'on', current_password: PASSWORD }, vars: REQUIRED });
    expect((await save(user.email)).status).toBe(303);
    expect((await call('/user/profile', { key: user.key, vars: REQUIRED })).json.data.email_verified).toBe(true);
    const moved = `${unique('dash')}@example.org`;
    expect((await save(moved)).status).toBe(303);
    expect((await visit('/dashboard/profile', { cookie, vars: REQUIRED })).text).toContain('Resend verification email');
    expect((await emailsTo(moved)).map((row) => row.template)).toEqual(['email_verification']);
    expectError(await purchase(user, product.id), 403, 'EMAIL_NOT_VERIFIED');
  });
});
