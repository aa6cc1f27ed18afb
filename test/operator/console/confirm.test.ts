import { describe, expect, it } from 'vitest';
import { newOperator } from '../../console-helpers';
import { idempotencyKeyIn, signIn, visit } from '../../dashboard-helpers';
import { balanceOf, buy, call, newDeposit, newProduct, newUser } from '../../helpers';
import { changedTables, snapshot } from '../../snapshot';

// Confirmation pages before the console's money and access actions: the button opens a page saying exactly what will
// happen; showing it (and "Back") changes nothing; only "Confirm" acts, once per rendered page.

const hiddenFields = (html: string) => Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2].replaceAll('&quot;', '"').replaceAll('&amp;', '&')]));
const confirmForm = (html: string) => /<form method="post" action="([^"]+)" class="row">/.exec(html)?.[1];
const backLink = (html: string) => /<a href="([^"]+)" class="button secondary">Back<\/a>/.exec(html)?.[1];

async function namedUser(name: string, balance = 0) {
  const user = await newUser({ balance });
  await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { name } });
  return user;
}

describe('confirmation pages', () => {
  it('"Mark paid": the button opens a page naming the amount and whose wallet; it and Back change nothing; Confirm credits once', async () => {
    const operator = await newOperator();
    const buyer = await namedUser('Ada Deposit');
    const { deposit_id: id } = await newDeposit(buyer, { amount: 25 });
    const list = await visit('/dashboard/console/deposits?status=pending', { cookie: operator.cookie });
    expect(list.text).toContain(`<form method="get" action="/dashboard/console/deposits/${id}/mark-paid/confirm" class="inline">`);

    const before = await snapshot();
    const confirm = await visit(`/dashboard/console/deposits/${id}/mark-paid/confirm`, { cookie: operator.cookie });
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<h1>Mark deposit #${id} paid?</h1>`);
    expect(confirm.text).toMatch(new RegExp(`This credits <span class="money">\\$25\\.00</span> to the wallet of Ada Deposit &lt;${buyer.email}&gt;`));
    expect(confirmForm(confirm.text)).toBe(`/dashboard/console/deposits/${id}/mark-paid`);
    expect(backLink(confirm.text)).toBe(`/dashboard/console/deposits#deposit-${id}`);
    await visit(backLink(confirm.text)!, { cookie: operator.cookie });
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect(await balanceOf(buyer)).toBe(0);

    const form = { idempotency_key: idempotencyKeyIn(confirm.text) };
    for (let i = 0; i < 2; i++) expect((await visit(`/dashboard/console/deposits/${id}/mark-paid`, { cookie: operator.cookie, form })).status).toBe(303);
    expect(await balanceOf(buyer)).toBe(25);
    // paid now: nothing left to confirm, back to the list
    expect((await visit(`/dashboard/console/deposits/${id}/mark-paid/confirm`, { cookie: operator.cookie })).location).toBe(`/dashboard/console/deposits#deposit-${id}`);
  });

  it('"Adjust balance": the page says credit or debit, how much, whose account and the balance after; Confirm posts the same fields once', async () => {
    const operator = await newOperator();
    const user = await namedUser('Bob Balance', 10);
    const before = await snapshot();
    const debit = await visit(`/dashboard/console/users/${user.id}/balance/confirm?amount=-2.5&description=${encodeURIComponent('Chargeback "fee"')}`, { cookie: operator.cookie });
    expect(debit.status).toBe(200);
    expect(debit.text).toContain("<h1>Debit Bob Balance&#39;s wallet?</h1>");
    expect(debit.text).toMatch(/This debits <span class="money">\$2\.50<\/span> from the wallet of Bob Balance &lt;[^&]+&gt; \(balance now <span class="money">\$10\.00<\/span>, then <span class="money">\$7\.50<\/span>\)/);
    expect(backLink(debit.text)).toBe(`/dashboard/console/users/${user.id}`);
    const fields = hiddenFields(debit.text);
    expect(fields).toMatchObject({ amount: '-2.5', description: 'Chargeback "fee"' });
    expect(changedTables(before, await snapshot())).toEqual([]);

    for (let i = 0; i < 2; i++) expect((await visit(confirmForm(debit.text)!, { cookie: operator.cookie, form: fields })).status).toBe(303);
    expect(await balanceOf(user)).toBe(7.5);

    // an invalid amount never reaches a confirmation: the user's page with the message, nothing changed
    const bad = await visit(`/dashboard/console/users/${user.id}/balance/confirm?amount=0&description=x`, { cookie: operator.cookie });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('amount must not be zero');
    expect(bad.text).not.toContain('Confirm');
  });

  it('"Disable account": the page names the account; Back changes nothing; Confirm disables', async () => {
    const operator = await newOperator();
    const user = await namedUser('Eve Fraud');
    const userPage = await visit(`/dashboard/console/users/${user.id}`, { cookie: operator.cookie });
    expect(userPage.text).toContain(`action="/dashboard/console/users/${user.id}/disable/confirm"`);
    expect(userPage.text).toContain(`<form method="get" action="/dashboard/console/users/${user.id}/balance/confirm">`);
    const before = await snapshot();
    const confirm = await visit(`/dashboard/console/users/${user.id}/disable/confirm`, { cookie: operator.cookie });
    expect(confirm.text).toContain(`This disables the account of Eve Fraud &lt;${user.email}&gt;`);
    expect(changedTables(before, await snapshot())).toEqual([]);
    expect((await call('/wallet/balance', { key: user.key })).status).toBe(200);
    expect((await visit(confirmForm(confirm.text)!, { cookie: operator.cookie, form: hiddenFields(confirm.text) })).status).toBe(303);
    expect((await call('/wallet/balance', { key: user.key })).status).toBe(401);
  });

  it('confirmation pages are the console\'s: a user\'s session gets 404, none goes to sign-in', async () => {
    const user = await newUser();
    const cookie = await signIn(user.email);
    const { deposit_id: id } = await newDeposit(user);
    for (const path of [`/dashboard/console/deposits/${id}/mark-paid/confirm`, `/dashboard/console/users/${user.id}/disable/confirm`, `/dashboard/console/users/${user.id}/balance/confirm?amount=1&description=x`]) {
      expect((await visit(path, { cookie })).status, path).toBe(404);
      expect((await visit(path)).status, path).toBe(303);
    }
  });
});

describe("an operator's Cancel order", () => {
  it('confirms the refund and whose wallet; Back changes nothing; Confirm cancels once through the buyer\'s cancel, audited in its batch', async () => {
    const operator = await newOperator();
    const buyer = await namedUser('Olga Order', 10);
    const product = await newProduct({ price: 3, stock: 2 });
    const order = (await buy(buyer, product.id, 2)).json.data;
    const orderPage = await visit(`/dashboard/console/orders/${order.id}`, { cookie: operator.cookie });
    expect(orderPage.text).toContain(`<form method="get" action="/dashboard/console/orders/${order.id}/cancel/confirm" class="inline">`);

    const before = await snapshot();
    const confirm = await visit(`/dashboard/console/orders/${order.id}/cancel/confirm`, { cookie: operator.cookie });
    expect(confirm.text).toMatch(new RegExp(`This cancels order ${order.order_number} of Olga Order &lt;${buyer.email}&gt; and refunds <span class="money">\\$6\\.00</span> to their wallet now, once\\. Its 2 delivered item\\(s\\) are revoked`));
    expect(backLink(confirm.text)).toBe(`/dashboard/console/orders/${order.id}`);
    expect(changedTables(before, await snapshot())).toEqual([]);

    const form = hiddenFields(confirm.text);
    for (let i = 0; i < 2; i++) {
      const res = await visit(confirmForm(confirm.text)!, { cookie: operator.cookie, form });
      expect(res.status, res.text.slice(0, 200)).toBe(303);
      expect(res.location).toBe(`/dashboard/console/orders/${order.id}?done=order_cancelled`);
    }
    expect(await balanceOf(buyer)).toBe(10);
    expect((await call(`/orders/${order.id}`, { key: buyer.key })).json.data.status).toBe('cancelled');
    const entry = (await call('/admin/audit-log?per_page=1', { admin: true })).json.data[0];
    expect(entry).toMatchObject({ actor: `user:${operator.id}`, action: 'order.cancelled', target: `order:${order.id}`, details: { order_number: order.order_number, user_id: buyer.id, refunded: 6 } });
    const events = (await call('/events?type=order.cancelled', { key: buyer.key })).json.data;
    expect(events.map((e: { data: { object: { id: number } } }) => e.data.object.id)).toContain(order.id);
    // cancelled: nothing left to confirm
    expect((await visit(`/dashboard/console/orders/${order.id}/cancel/confirm`, { cookie: operator.cookie })).location).toBe(`/dashboard/console/orders/${order.id}`);
  });

  it("keeps the buyer's rules (final sale refused, shown on the order; no button) but not the buyer's daily cap; a user's session changes nothing", async () => {
    const operator = await newOperator();
    const buyer = await namedUser('Fin Al', 10);
    const finalSale = await newProduct({ price: 1, stock: 1, cancellable: false });
    const order = (await buy(buyer, finalSale.id)).json.data;
    expect((await visit(`/dashboard/console/orders/${order.id}`, { cookie: operator.cookie })).text).not.toContain('/cancel/confirm');
    const before = await snapshot();
    const refused = await visit(`/dashboard/console/orders/${order.id}/cancel`, { cookie: operator.cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('is final sale and cannot be cancelled');
    expect(changedTables(before, await snapshot())).toEqual([]);

    const capped = await namedUser('Cap Ped', 10);
    const product = await newProduct({ price: 1, stock: 1 });
    const another = (await buy(capped, product.id)).json.data;
    const cancelled = await visit(`/dashboard/console/orders/${another.id}/cancel`, { cookie: operator.cookie, form: {}, vars: { MAX_CANCELS_PER_DAY: '0' } });
    expect(cancelled.status, cancelled.text.slice(0, 300)).toBe(303);
    expect(await balanceOf(capped)).toBe(10);

    const user = await newUser();
    const cookie = await signIn(user.email);
    const third = (await buy(buyer, (await newProduct({ price: 1, stock: 1 })).id)).json.data;
    const untouched = await snapshot();
    expect((await visit(`/dashboard/console/orders/${third.id}/cancel`, { cookie, form: {} })).status).toBe(404);
    expect(changedTables(untouched, await snapshot())).toEqual([]);
  });
});
