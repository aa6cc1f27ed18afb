import { describe, expect, it } from 'vitest';
import { newOperator } from '../console-helpers';
import { visit } from '../dashboard-helpers';
import { balanceOf, call, expectError, newUser } from '../helpers';
import { apiUrl, depositRow, fakeVendor, VENDOR_VARS, varsFor, vendorDeposit, vendorSays } from '../vendors';

// An operator's refresh (the admin API's, the console's "Ask the vendor") that credits or closes a deposit is on the
// audit log as `deposit.refreshed` with `{ outcome, vendor_status }`, written in the batch of that change. And the
// vendor asked is the one the deposit was made with, even after its slot changed provider; when no slot has that
// provider any more, the refresh says so (422).

const STRIPE = varsFor('stripe');

const refresh = (id: number, vars: Record<string, string>) => call(`/admin/deposits/${id}/refresh`, { method: 'POST', admin: true, vars });

async function auditOf(depositId: number) {
  const res = await call('/admin/audit-log?per_page=100', { admin: true });
  expect(res.status, res.text).toBe(200);
  return (res.json.data as Array<{ action: string; actor: string; target: string; details: Record<string, unknown> }>).filter((e) => e.target === `deposit:${depositId}`);
}

describe('deposit.refreshed on the audit log', () => {
  it('a refresh that credits writes one entry (admin token); a repeat that changes nothing writes none', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    expect((await refresh(deposit.id, STRIPE)).json.data.outcome).toBe('credited');
    expect((await refresh(deposit.id, STRIPE)).json.data.outcome).toBe('duplicate');
    expect(await auditOf(deposit.id)).toEqual([
      expect.objectContaining({ action: 'deposit.refreshed', actor: 'admin_token', details: { outcome: 'credited', vendor_status: 'paid' } }),
    ]);
  });

  it('a refresh that closes writes one; one that finds the payment still in progress writes none', async () => {
    const user = await newUser();
    const open = await vendorDeposit('stripe', user);
    vendorSays('stripe', open, 'unpaid');
    expect((await refresh(open.id, STRIPE)).json.data.outcome).toBe('in_progress');
    expect(await auditOf(open.id)).toEqual([]);
    const expired = await vendorDeposit('stripe', user);
    vendorSays('stripe', expired, 'expired');
    expect((await refresh(expired.id, STRIPE)).json.data.outcome).toBe('closed');
    expect(await auditOf(expired.id)).toEqual([
      expect.objectContaining({ action: 'deposit.refreshed', actor: 'admin_token', details: { outcome: 'closed', vendor_status: 'expired' } }),
    ]);
  });

  it("the console's Ask the vendor is audited under the operator who asked", async () => {
    const buyer = await newUser();
    const deposit = await vendorDeposit('stripe', buyer);
    const operator = await newOperator();
    vendorSays('stripe', deposit, 'paid');
    const asked = await visit(`/dashboard/console/deposits/${deposit.id}/refresh`, { cookie: operator.cookie, vars: STRIPE, form: {} });
    expect(asked.status).toBe(303);
    expect(await balanceOf(buyer)).toBe(10);
    expect(await auditOf(deposit.id)).toEqual([
      expect.objectContaining({ action: 'deposit.refreshed', actor: `user:${operator.id}`, details: { outcome: 'credited', vendor_status: 'paid' } }),
    ]);
  });
});

describe('a refresh after the slot changed provider', () => {
  // A Cryptomus deposit made on gateway_two; gateway_two is now the generic adapter and Cryptomus serves gateway_one.
  const CRYPTOMUS = VENDOR_VARS.cryptomus;
  const moved = {
    GATEWAY_TWO_PROVIDER: 'generic',
    GATEWAY_ONE_PROVIDER: 'cryptomus',
    GATEWAY_ONE_API_KEY: CRYPTOMUS.GATEWAY_TWO_API_KEY,
    GATEWAY_ONE_ACCOUNT: CRYPTOMUS.GATEWAY_TWO_ACCOUNT,
    GATEWAY_ONE_API_URL: CRYPTOMUS.GATEWAY_TWO_API_URL,
  };

  it('asks the vendor the deposit was made with, and credits it under its own slot', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('cryptomus', user);
    const asked = vendorSays('cryptomus', deposit, 'paid');
    const res = await refresh(deposit.id, moved);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ outcome: 'credited', deposit: { status: 'paid' } });
    expect(asked).toHaveLength(1);
    expect(asked[0].headers.get('merchant')).toBe(CRYPTOMUS.GATEWAY_TWO_ACCOUNT);
    expect(await balanceOf(user)).toBe(10);
    const events = (await call(`/admin/gateway-events?deposit_id=${deposit.id}`, { admin: true })).json.data;
    expect(events).toMatchObject([{ gateway: 'gateway_two', outcome: 'credited', source: 'lookup' }]);
  });

  it('says that provider is no longer configured when no slot has it (422), and changes nothing', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    // Any call to Stripe would be answered "paid": none must be made.
    const asked = fakeVendor('get', `${apiUrl('stripe')}/v1/checkout/sessions/${deposit.invoiceId}`, {});
    const res = await refresh(deposit.id, { GATEWAY_THREE_PROVIDER: 'generic' });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.id[0]).toBe(`Deposit ${deposit.id} was made with stripe, which is no longer configured on any gateway slot: it cannot be asked.`);
    expect(asked).toHaveLength(0);
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'pending', last_checked_at: null });
  });
});
