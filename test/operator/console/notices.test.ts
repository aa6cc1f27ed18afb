import { describe, expect, it } from 'vitest';
import { plainNumber } from '../../../src/dashboard/forms';
import { newOperator } from '../../console-helpers';
import { idempotencyKeyIn, signedInUser, visit } from '../../dashboard-helpers';
import { balanceOf, call, deliverWebhook, newDeposit, newUser, unique } from '../../helpers';

// Success notices after the console's forms and "Save profile", and amounts typed as people write them.

const notice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];

async function follow(res: { location: string | null }, cookie: string) {
  expect(res.location).not.toBeNull();
  return visit(res.location!, { cookie });
}

describe('amounts typed with a dollar sign', () => {
  it('reads $14.99, $1,234.56 and -$2.50 exactly; a decimal comma or a bad grouping stays refused', () => {
    expect(['$14.99', '$1,234.56', '-$2.50', '1,000', '$0.07', '12'].map(plainNumber)).toEqual(['14.99', '1234.56', '-2.50', '1000', '0.07', '12']);
    expect(['14,99', '1,23', '$1,2345', '$$1', '1.2.3', '$', '-$-1', '1 000', ' $1'].map(plainNumber)).toEqual(['14,99', '1,23', '$1,2345', '$$1', '1.2.3', '$', '-$-1', '1 000', ' $1']);
  });

  it('the console\'s product form takes "$1,234.56" as 123456 cents and refuses "14,99" (nothing created)', async () => {
    const operator = await newOperator();
    const sku = unique('DOLLAR');
    const created = await visit('/dashboard/console/products', {
      cookie: operator.cookie,
      form: { name: 'Dollar typed', sku, price: '$1,234.56', active: 'on', idempotency_key: crypto.randomUUID() },
    });
    expect(created.status, created.text).toBe(303);
    const products = (await call('/admin/products', { admin: true })).json.data as Array<{ sku: string; price: number }>;
    expect(products.find((p) => p.sku === sku)?.price).toBe(1234.56);
    const refused = await visit('/dashboard/console/products', { cookie: operator.cookie, form: { name: 'Comma', sku: unique('COMMA'), price: '14,99', idempotency_key: crypto.randomUUID() } });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain('price must be a number');
  });

  it('"Adjust balance" takes -$2.50', async () => {
    const operator = await newOperator();
    const user = await newUser({ balance: 10 });
    const confirm = await visit(`/dashboard/console/users/${user.id}/balance/confirm?amount=${encodeURIComponent('-$2.50')}&description=fee`, { cookie: operator.cookie });
    expect(confirm.status).toBe(200);
    const posted = await visit(`/dashboard/console/users/${user.id}/balance`, { cookie: operator.cookie, form: { amount: '-$2.50', description: 'fee', idempotency_key: idempotencyKeyIn(confirm.text) } });
    expect(posted.status).toBe(303);
    expect(await balanceOf(user)).toBe(7.5);
  });
});

describe('success notices', () => {
  it('after Create product, Save product, Adjust balance, Disable/Enable account and Mark paid', async () => {
    const operator = await newOperator();
    const { cookie } = operator;
    const sku = unique('NOTICE');
    const created = await visit('/dashboard/console/products', { cookie, form: { name: 'Noticed', sku, price: '$2', active: 'on', idempotency_key: crypto.randomUUID() } });
    expect(created.location).toMatch(/^\/dashboard\/console\/products\/\d+\?done=product_created$/);
    expect(notice((await follow(created, cookie)).text)).toBe('Product created. Upload its stock below.');
    const productPath = created.location!.split('?')[0];
    const saved = await visit(productPath, { cookie, form: { name: 'Noticed again', sku, price: '3', active: 'on' } });
    expect(notice((await follow(saved, cookie)).text)).toBe('Product saved.');

    const user = await newUser({ balance: 1 });
    const confirm = await visit(`/dashboard/console/users/${user.id}/balance/confirm?amount=1&description=thanks`, { cookie });
    const adjusted = await visit(`/dashboard/console/users/${user.id}/balance`, { cookie, form: { amount: '1', description: 'thanks', idempotency_key: idempotencyKeyIn(confirm.text) } });
    expect(notice((await follow(adjusted, cookie)).text)).toBe('Balance adjusted: the transaction is listed below and on the audit log.');
    const disabled = await visit(`/dashboard/console/users/${user.id}/disable`, { cookie, form: {} });
    expect(notice((await follow(disabled, cookie)).text)).toBe('Account disabled: its API keys and sessions no longer work.');
    const enabled = await visit(`/dashboard/console/users/${user.id}/enable`, { cookie, form: {} });
    expect(notice((await follow(enabled, cookie)).text)).toBe('Account enabled: its API keys and sign-in work again.');

    const first = await newDeposit(user, { amount: 5 });
    const paid = await visit(`/dashboard/console/deposits/${first.deposit_id}/mark-paid`, { cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(paid.location).toBe(`/dashboard/console/deposits?done=deposit_paid#deposit-${first.deposit_id}`);
    expect(notice((await follow(paid, cookie)).text)).toBe('Deposit marked paid: its amount is credited to the wallet, once.');
    // paid by its gateway meanwhile: the post credits nothing and says so
    const second = await newDeposit(user, { amount: 5 });
    expect((await deliverWebhook('gateway_one', { deposit_id: second.deposit_id, status: 'paid', amount: 5, transaction_id: unique('tx') })).status).toBe(200);
    const again = await visit(`/dashboard/console/deposits/${second.deposit_id}/mark-paid`, { cookie, form: { idempotency_key: crypto.randomUUID() } });
    expect(notice((await follow(again, cookie)).text)).toBe('The deposit was already paid: nothing was credited again.');
    expect(await balanceOf(user)).toBe(12);
  });

  it('after "Save profile" on the dashboard; an unknown notice name shows nothing', async () => {
    const user = await signedInUser();
    const saved = await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Renamed Person', email: user.email } });
    expect(saved.location).toBe('/dashboard/profile?done=profile_saved');
    expect(notice((await follow(saved, user.cookie)).text)).toBe('Profile saved.');
    expect(notice((await visit('/dashboard/profile?done=<script>', { cookie: user.cookie })).text)).toBeUndefined();
    expect(notice((await visit('/dashboard/profile?done=constructor', { cookie: user.cookie })).text)).toBeUndefined();
  });
});
