import { describe, expect, it } from 'vitest';
import { balanceOf, call, newUser, signedWebhook } from '../../helpers';
import { apiUrl, depositRow, depositTransactions, fakeVendor, gatewayEventsOf, INVOICE_ENDPOINT, notify, stripeSignature, VENDOR_VARS, vendorDeposit, vendorSays, varsFor } from '../../vendors';

// Stripe Checkout behind gateway_three (contract: "Real payment providers behind the three gateway slots").

const session = (reference: string, fields: Record<string, unknown> = {}) => ({
  id: 'cs_test_a1b2c3',
  object: 'checkout.session',
  client_reference_id: reference,
  amount_total: 1000,
  currency: 'usd',
  payment_intent: `pi_${reference}`,
  payment_status: 'paid',
  status: 'complete',
  ...fields,
});

const event = (type: string, object: unknown) =>
  JSON.stringify({ id: `evt_${crypto.randomUUID().slice(0, 12)}`, object: 'event', api_version: '2024-06-20', type, data: { object } });

async function send(body: string, options: { secret?: string; t?: number } = {}) {
  return notify('stripe', body, { 'Stripe-Signature': await stripeSignature(body, options) });
}

describe('Stripe: creating the deposit', () => {
  it('creates a Checkout Session keyed on the reference and stores its page and id', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user, 12.34);
    const [request] = deposit.seen;
    expect(request.headers.get('authorization')).toBe(`Bearer ${VENDOR_VARS.stripe.GATEWAY_THREE_API_KEY}`);
    expect(request.headers.get('idempotency-key')).toBe(deposit.reference);
    expect(request.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(request.body);
    expect(form.get('mode')).toBe('payment');
    expect(form.get('client_reference_id')).toBe(deposit.reference);
    expect(form.get('line_items[0][price_data][currency]')).toBe('usd');
    expect(form.get('line_items[0][price_data][unit_amount]')).toBe('1234');
    expect(form.get('line_items[0][price_data][product_data][name]')).toBeTruthy();
    expect(form.get('line_items[0][quantity]')).toBe('1');
    expect(form.get('success_url')).toBe('http://localhost/dashboard/wallet');
    expect(form.get('cancel_url')).toBe('http://localhost/dashboard/wallet');
    const ahead = Number(form.get('expires_at')) - Date.now() / 1000;
    expect(ahead).toBeGreaterThanOrEqual(30 * 60);
    expect(ahead).toBeLessThanOrEqual(24 * 3600);
    const row = await depositRow(deposit.id);
    expect(row.external_id).toBe(deposit.invoiceId);
    expect(row.payment_url).toBe(`https://pay.stripe.test/${deposit.invoiceId}`);
  });

  it("keeps expires_at inside Stripe's range when the deposit lives shorter or longer", async () => {
    const user = await newUser();
    for (const [ttl, min, max] of [['5', 30 * 60, 32 * 60], ['5000', 23 * 3600, 24 * 3600]] as const) {
      const deposit = await vendorDepositWith(user, { DEPOSIT_TTL_MINUTES: ttl });
      const ahead = Number(new URLSearchParams(deposit).get('expires_at')) - Date.now() / 1000;
      expect(ahead).toBeGreaterThanOrEqual(min);
      expect(ahead).toBeLessThanOrEqual(max);
    }
  });
});

async function vendorDepositWith(user: { key: string }, vars: Record<string, string>) {
  const seen = fakeVendor('post', `${apiUrl('stripe')}${INVOICE_ENDPOINT.stripe.path}`, INVOICE_ENDPOINT.stripe.answer('https://pay.stripe.test/x', 'cs_x'));
  const res = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_three' }, vars: { ...varsFor('stripe'), ...vars } });
  expect(res.status, res.text).toBe(200);
  return seen[0].body;
}

describe('Stripe: webhook events', () => {
  it('checkout.session.completed with payment_status paid credits the deposit once; a replay is a duplicate', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    const body = event('checkout.session.completed', session(deposit.reference));
    const first = await send(body);
    expect(first.status, first.text).toBe(200);
    expect(first.json.data).toMatchObject({ id: deposit.id, status: 'paid' });
    expect((await send(body)).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect(await depositTransactions(deposit.id)).toBe(1);
    const events = await gatewayEventsOf(deposit.id);
    expect(events.map((e) => e.outcome).sort()).toEqual(['credited', 'duplicate']);
    expect(events[0]).toMatchObject({ status: 'checkout.session.completed', amount: 10, transaction_id: `pi_${deposit.reference}` });
    expect((await depositRow(deposit.id)).vendor_payment_id).toBe(`pi_${deposit.reference}`);
  });

  it('credits the deposit amount, never more: an over-payment is on record only', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    const res = await send(event('checkout.session.completed', session(deposit.reference, { amount_total: 5000 })));
    expect(res.status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect((await gatewayEventsOf(deposit.id))[0]).toMatchObject({ amount: 50, outcome: 'credited' });
  });

  it('payment_status unpaid is in progress; async_payment_succeeded then credits; async_payment_failed fails', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    expect((await send(event('checkout.session.completed', session(deposit.reference, { payment_status: 'unpaid' })))).status).toBe(200);
    expect(await balanceOf(user)).toBe(0);
    expect((await gatewayEventsOf(deposit.id))[0].outcome).toBe('in_progress');
    vendorSays('stripe', deposit, 'paid');
    expect((await send(event('checkout.session.async_payment_succeeded', session(deposit.reference)))).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);

    const other = await vendorDeposit('stripe', user);
    expect((await send(event('checkout.session.async_payment_failed', session(other.reference, { payment_status: 'unpaid' })))).status).toBe(200);
    expect((await depositRow(other.id)).status).toBe('failed');
    expect((await gatewayEventsOf(other.id))[0].outcome).toBe('closed');
  });

  it('checkout.session.expired closes the pending deposit', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    const res = await send(event('checkout.session.expired', session(deposit.reference, { payment_status: 'unpaid', status: 'expired' })));
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe('expired');
    expect((await gatewayEventsOf(deposit.id))[0]).toMatchObject({ status: 'checkout.session.expired', outcome: 'closed' });
  });

  it('charge.refunded and charge.dispute.created of a credited deposit are reversed, with no balance change', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    await send(event('checkout.session.completed', session(deposit.reference)));
    const refunded = await send(event('charge.refunded', { id: 'ch_1', object: 'charge', payment_intent: `pi_${deposit.reference}`, amount: 1000, amount_refunded: 400 }));
    expect(refunded.status, refunded.text).toBe(200);
    const disputed = await send(event('charge.dispute.created', { id: 'dp_1', object: 'dispute', payment_intent: `pi_${deposit.reference}`, charge: 'ch_1', amount: 1000 }));
    expect(disputed.status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    const events = await gatewayEventsOf(deposit.id);
    expect(events.filter((e) => e.outcome === 'reversed').map((e) => [e.status, e.amount]).sort()).toEqual([
      ['charge.dispute.created', 10],
      ['charge.refunded', 4],
    ]);
  });

  it('a refund of a payment intent the service never credited is 200 and not recorded', async () => {
    const res = await send(event('charge.refunded', { id: 'ch_2', object: 'charge', payment_intent: 'pi_unknown_to_us', amount_refunded: 100 }));
    expect(res.status).toBe(200);
    expect(res.json.data).toBeNull();
  });

  it("events of other kinds and sessions the service did not create are 200 and ignored", async () => {
    for (const body of [
      event('customer.created', { id: 'cus_1', object: 'customer' }),
      event('checkout.session.completed', session('dep_not_ours_at_all_000000')),
      event('checkout.session.completed', session('', { client_reference_id: null })),
    ]) {
      const res = await send(body);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toBeNull();
    }
  });

  it('a signature with a wrong secret, a stale or future timestamp, a re-encoded body or no header is 401 and changes nothing', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    const body = event('checkout.session.completed', session(deposit.reference));
    const now = Math.floor(Date.now() / 1000);
    const attempts = [
      await notify('stripe', body, { 'Stripe-Signature': await stripeSignature(body, { secret: 'whsec_other' }) }),
      await notify('stripe', body, { 'Stripe-Signature': await stripeSignature(body, { t: now - 301 }) }),
      await notify('stripe', body, { 'Stripe-Signature': await stripeSignature(body, { t: now + 301 }) }),
      await notify('stripe', JSON.stringify(JSON.parse(body), null, 1), { 'Stripe-Signature': await stripeSignature(body) }),
      await notify('stripe', body, {}),
    ];
    // The generic adapter's format, signed with the slot's secret, on a Stripe slot.
    const generic = await signedWebhook('gateway_three', { deposit_id: deposit.id, status: 'paid', amount: 10, transaction_id: 'x' }, { secret: VENDOR_VARS.stripe.GATEWAY_THREE_WEBHOOK_SECRET });
    attempts.push(await notify('stripe', generic.body, generic.headers));
    for (const res of attempts) expect(res.status, res.text).toBe(401);
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it('accepts the event when any of several v1 signatures matches (secret rotation), within 300 s', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('stripe', user);
    vendorSays('stripe', deposit, 'paid');
    const body = event('checkout.session.completed', session(deposit.reference));
    const t = Math.floor(Date.now() / 1000) - 295;
    const good = (await stripeSignature(body, { t })).split('v1=')[1];
    const res = await notify('stripe', body, { 'Stripe-Signature': `t=${t},v1=${'0'.repeat(64)},v0=abc,v1=${good}` });
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(10);
  });

  it('a Stripe event for a deposit of another slot is unknown there', async () => {
    const user = await newUser();
    const generic = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_one' } });
    const reference = (await depositRow(generic.json.data.deposit_id)).reference;
    const res = await send(event('checkout.session.completed', session(reference)));
    expect(res.status).toBe(200);
    expect(res.json.data).toBeNull();
    expect(await balanceOf(user)).toBe(0);
  });
});
