import { env } from 'cloudflare:test';
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import type { Bindings } from '../../../src/env';
import { runScheduledJobs } from '../../../src/services/operator/jobs';
import { newOperator } from '../../console-helpers';
import { visit } from '../../dashboard-helpers';
import { balanceOf, call, expectError, newUser } from '../../helpers';
import { network } from '../../network';
import { apiUrl, depositRow, gatewayEventsOf, notify, nowpaymentsSignature, varsFor, vendorDeposit, vendorSays } from '../../vendors';

// NOWPayments is looked up by a payment id, which only its notifications (or the operator) give. Its API lags its IPN:
// a signed "finished" can arrive while GET /v1/payment/<id> still says "confirming". That notification is
// `unconfirmed`, and NOWPayments, answered 200, never sends it again: its payment id must be kept anyway, so a
// refresh and the scheduled poll can ask again. A deposit whose notifications never arrived is asked about with the
// payment id the operator copies from NOWPayments' dashboard.

const MINUTE = 60_000;
const NOWPAYMENTS = varsFor('nowpayments');

const finishedIpn = async (reference: string, paymentId: number, amount = 10) => {
  const payload = { payment_id: paymentId, payment_status: 'finished', order_id: reference, price_amount: amount, price_currency: 'usd', actually_paid_at_fiat: amount };
  return notify('nowpayments', JSON.stringify(payload), { 'x-nowpayments-sig': await nowpaymentsSignature(payload) });
};

/** NOWPayments' lookup of one payment id, answering that payment's status for `reference`. */
const paymentSays = (paymentId: string, reference: string, status: string, amount = 10) =>
  vendorSays('nowpayments', { reference, invoiceId: '', amount }, status, paymentId);

const refresh = (id: number, body?: unknown, vars: Record<string, string> = NOWPAYMENTS) =>
  call(`/admin/deposits/${id}/refresh`, { method: 'POST', admin: true, vars, ...(body === undefined ? {} : { body }) });

const newPaymentId = () => 6_000_000_000 + Math.floor(Math.random() * 900_000_000);

describe('a signed "finished" that the lagging NOWPayments API does not confirm yet', () => {
  it('is unconfirmed, but its payment id is kept: a refresh later credits the deposit once', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const paymentId = newPaymentId();
    paymentSays(String(paymentId), deposit.reference, 'confirming');
    expect((await finishedIpn(deposit.reference, paymentId)).status).toBe(200);
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'pending', vendor_payment_id: String(paymentId) });
    expect((await gatewayEventsOf(deposit.id)).map((e) => e.outcome)).toEqual(['unconfirmed']);

    network.resetHandlers();
    paymentSays(String(paymentId), deposit.reference, 'finished');
    const res = await refresh(deposit.id);
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ vendor_status: 'finished', outcome: 'credited', deposit: { status: 'paid' } });
    expect(await balanceOf(user)).toBe(10);
  });

  it('is credited by the scheduled poll alone', async () => {
    const now = Date.now() + 6 * MINUTE;
    // Other tests' open NOWPayments deposits would take the poll's places.
    await env.DB.prepare("UPDATE deposits SET last_checked_at = ? WHERE provider = 'nowpayments'").bind(new Date(now).toISOString()).run();
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const paymentId = newPaymentId();
    paymentSays(String(paymentId), deposit.reference, 'confirming');
    expect((await finishedIpn(deposit.reference, paymentId)).status).toBe(200);
    expect(await balanceOf(user)).toBe(0);

    network.resetHandlers();
    const asked = paymentSays(String(paymentId), deposit.reference, 'finished');
    const report = await runScheduledJobs({ ...env, ...NOWPAYMENTS, GATEWAY_POLL_LIMIT: '40' } as Bindings, now);
    expect(report.poll.changed).toBeGreaterThanOrEqual(1);
    expect(asked).toHaveLength(1);
    expect(await balanceOf(user)).toBe(10);
  });

  it('keeps its payment id even when the vendor cannot be reached to confirm it (503): the poll asks later', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const paymentId = newPaymentId();
    network.use(http.get(`${apiUrl('nowpayments')}/v1/payment/${paymentId}`, () => HttpResponse.json({}, { status: 502 })));
    expectError(await finishedIpn(deposit.reference, paymentId), 503, 'GATEWAY_UNAVAILABLE');
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'pending', vendor_payment_id: String(paymentId) });
    expect(await balanceOf(user)).toBe(0);
  });
});

describe('refresh with the payment id the operator gives', () => {
  it('credits a deposit none of whose notifications arrived, and stores the id', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    // Without an id there is nothing to ask: in progress.
    expect((await refresh(deposit.id)).json.data).toMatchObject({ vendor_status: null, outcome: 'in_progress' });
    const paymentId = String(newPaymentId());
    const asked = paymentSays(paymentId, deposit.reference, 'finished');
    const res = await refresh(deposit.id, { payment_id: paymentId });
    expect(res.status, res.text).toBe(200);
    expect(res.json.data).toMatchObject({ vendor_status: 'finished', outcome: 'credited' });
    expect(asked).toHaveLength(1);
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'paid', vendor_payment_id: paymentId });
    expect(await balanceOf(user)).toBe(10);
  });

  it("stores an id that names the deposit even when nothing is paid yet: the poll asks about it", async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const paymentId = String(newPaymentId());
    paymentSays(paymentId, deposit.reference, 'waiting');
    expect((await refresh(deposit.id, { payment_id: paymentId })).json.data.outcome).toBe('in_progress');
    expect((await depositRow(deposit.id)).vendor_payment_id).toBe(paymentId);
  });

  it("refuses another deposit's payment with a 422 on payment_id, and changes nothing", async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const paymentId = String(newPaymentId());
    paymentSays(paymentId, 'dep_somebody_elses_deposit', 'finished');
    const res = await refresh(deposit.id, { payment_id: paymentId });
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.payment_id[0]).toContain(paymentId);
    expect(await depositRow(deposit.id)).toMatchObject({ status: 'pending', vendor_payment_id: null, last_checked_at: null });
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
    expect(await balanceOf(user)).toBe(0);
  });

  it('refuses a payment id for another provider, or one that is not an id, with a 422', async () => {
    const user = await newUser();
    const stripe = await vendorDeposit('stripe', user);
    const res = await refresh(stripe.id, { payment_id: '5077125051' }, varsFor('stripe'));
    expectError(res, 422, 'VALIDATION_FAILED');
    expect(res.json.errors.payment_id[0]).toContain('NOWPayments');
    expect(await depositRow(stripe.id)).toMatchObject({ status: 'pending', last_checked_at: null });
    const nowpayments = await vendorDeposit('nowpayments', user);
    for (const payment_id of ['', '../invoice', 5077125051, 'x'.repeat(65)]) expectError(await refresh(nowpayments.id, { payment_id }), 422, 'VALIDATION_FAILED');
  });
});

describe('the console\'s "Ask the vendor" with a "Vendor payment id"', () => {
  it('offers the field on a NOWPayments deposit only, and credits with the id typed in', async () => {
    const buyer = await newUser();
    const deposit = await vendorDeposit('nowpayments', buyer);
    const stripe = await vendorDeposit('stripe', buyer);
    const operator = await newOperator();
    const vars = { ...NOWPAYMENTS, ...varsFor('stripe') };
    const page = await visit(`/dashboard/console/deposits?user_id=${buyer.id}`, { cookie: operator.cookie, vars });
    const rowOf = (id: number) => new RegExp(`<tr role="row" id="deposit-${id}">[\\s\\S]*?</tr>`).exec(page.text)?.[0] ?? '';
    expect(rowOf(deposit.id)).toContain(`<label for="deposit-${deposit.id}-payment_id">Vendor payment id</label>`);
    expect(rowOf(deposit.id)).toContain('name="payment_id"');
    expect(rowOf(stripe.id)).toContain('Ask the vendor');
    expect(rowOf(stripe.id)).not.toContain('payment_id');

    const paymentId = String(newPaymentId());
    paymentSays(paymentId, deposit.reference, 'finished');
    const asked = await visit(`/dashboard/console/deposits/${deposit.id}/refresh`, { cookie: operator.cookie, vars, form: { payment_id: ` ${paymentId} ` } });
    expect(asked.status, asked.text.slice(0, 300)).toBe(303);
    expect(asked.location).toContain('outcome=credited');
    expect(await balanceOf(buyer)).toBe(10);

    // Another deposit's payment: the page again with the reason, nothing changed.
    const other = await vendorDeposit('nowpayments', buyer);
    paymentSays(paymentId, deposit.reference, 'finished');
    const refused = await visit(`/dashboard/console/deposits/${other.id}/refresh`, { cookie: operator.cookie, vars, form: { payment_id: paymentId } });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain(`is not a payment of deposit ${other.id}`);
    expect(await depositRow(other.id)).toMatchObject({ status: 'pending', vendor_payment_id: null });
  });
});
