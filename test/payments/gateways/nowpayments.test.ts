import { describe, expect, it } from 'vitest';
import { balanceOf, call, newUser } from '../../helpers';
import {
  depositRow,
  depositTransactions,
  gatewayEventsOf,
  hmacSha512Hex,
  notify,
  nowpaymentsSignature,
  stripeSignature,
  useReference,
  VENDOR_VARS,
  vendorDeposit,
  vendorSays,
} from '../../vendors';

// NOWPayments invoices and IPN behind gateway_one (contract: "Real payment providers behind the three gateway slots").

// Signed outside this code base (Python's hmac over json.dumps(sort_keys=True, separators=(',', ':'))), sent with
// the keys unsorted and spaces after separators, as a re-serializing proxy might: only the sorted form verifies.
const FIXTURE_FINISHED = {
  body: '{"payment_id": 5077125051, "invoice_id": 4522625843, "payment_status": "finished", "pay_address": "TNDFkiSmBQorNFacb3735q8MnT29sbqHHK", "price_amount": 10, "price_currency": "usd", "pay_amount": 10.04, "actually_paid": 7.5, "actually_paid_at_fiat": 10, "pay_currency": "usdttrc20", "order_id": "dep_FixtureNowpaymentsPaid01", "order_description": "Wallet deposit", "purchase_id": "5312822613", "outcome_amount": 9.9, "outcome_currency": "usdttrc20", "fee": {"currency": "usdttrc20", "depositFee": 0.1, "withdrawalFee": 0, "serviceFee": 0}}',
  sig: 'e7331d36fd12b4a41a881404ebf12736d33bd8c6a137d49b56becbf4782a59259aee982030c0d60bddc11d33bb39fc0b7e42812eeaa2025cafd233031cf5b9df',
};
const FIXTURE_PARTIAL = {
  body: '{"payment_id": 5077125052, "invoice_id": 4522625843, "payment_status": "partially_paid", "pay_address": "TNDFkiSmBQorNFacb3735q8MnT29sbqHHK", "price_amount": 10, "price_currency": "usd", "pay_amount": 10.04, "actually_paid": 7.5, "actually_paid_at_fiat": 7.5, "pay_currency": "usdttrc20", "order_id": "dep_FixtureNowpaymentsPart01", "order_description": "Wallet deposit", "purchase_id": "5312822613", "outcome_amount": 9.9, "outcome_currency": "usdttrc20", "fee": {"currency": "usdttrc20", "depositFee": 0.1, "withdrawalFee": 0, "serviceFee": 0}}',
  sig: 'bd68bd7feae6de84093ea859d27bd8a9b5e17050405d24ed32ac70cc1d077761001929457f07ac6f3cc8b29f542923e999d081ab070c24a9f9cfe724d5e33bf6',
};

const ipn = (reference: string, fields: Record<string, unknown> = {}) => ({
  payment_id: 5077125000 + Math.floor(Math.random() * 1000),
  payment_status: 'finished',
  order_id: reference,
  price_amount: 10,
  price_currency: 'usd',
  actually_paid_at_fiat: 10,
  ...fields,
});

async function send(payload: Record<string, unknown>, secret?: string) {
  return notify('nowpayments', JSON.stringify(payload), { 'x-nowpayments-sig': await nowpaymentsSignature(payload, secret) });
}

describe('NOWPayments: creating the deposit', () => {
  it('creates an invoice with the API key, the reference as order id and our IPN URL, and stores its page and id', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user, 25.5);
    const [request] = deposit.seen;
    expect(request.headers.get('x-api-key')).toBe(VENDOR_VARS.nowpayments.GATEWAY_ONE_API_KEY);
    expect(JSON.parse(request.body)).toMatchObject({
      price_amount: 25.5,
      price_currency: 'usd',
      order_id: deposit.reference,
      ipn_callback_url: 'http://localhost/api/v2/webhooks/gateway_one',
      success_url: 'http://localhost/dashboard/wallet',
    });
    expect((await depositRow(deposit.id)).external_id).toBe(deposit.invoiceId);
  });
});

describe('NOWPayments: IPN', () => {
  it('verifies an IPN signed outside this code base over the key-sorted body, and finished credits once', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    await useReference(deposit.id, 'dep_FixtureNowpaymentsPaid01');
    vendorSays('nowpayments', { ...deposit, reference: 'dep_FixtureNowpaymentsPaid01' }, 'finished', '5077125051');
    const first = await notify('nowpayments', FIXTURE_FINISHED.body, { 'x-nowpayments-sig': FIXTURE_FINISHED.sig });
    expect(first.status, first.text).toBe(200);
    expect(first.json.data.status).toBe('paid');
    expect((await notify('nowpayments', FIXTURE_FINISHED.body, { 'x-nowpayments-sig': FIXTURE_FINISHED.sig })).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect(await depositTransactions(deposit.id)).toBe(1);
    const events = await gatewayEventsOf(deposit.id);
    expect(events.map((e) => e.outcome).sort()).toEqual(['credited', 'duplicate']);
    expect(events[0]).toMatchObject({ status: 'finished', amount: 10, transaction_id: '5077125051' });
  });

  it('partially_paid is an amount mismatch on record with actually_paid_at_fiat, nothing credited', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    await useReference(deposit.id, 'dep_FixtureNowpaymentsPart01');
    const res = await notify('nowpayments', FIXTURE_PARTIAL.body, { 'x-nowpayments-sig': FIXTURE_PARTIAL.sig });
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(0);
    expect((await depositRow(deposit.id)).status).toBe('pending');
    expect(await gatewayEventsOf(deposit.id)).toMatchObject([{ status: 'partially_paid', amount: 7.5, outcome: 'amount_mismatch' }]);
  });

  it('progress statuses are in_progress and remember the payment id; failed and expired close the deposit', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    for (const status of ['waiting', 'confirming', 'confirmed', 'sending', 'refunded']) {
      expect((await send(ipn(deposit.reference, { payment_status: status, payment_id: 42 }))).status).toBe(200);
    }
    expect((await gatewayEventsOf(deposit.id)).map((e) => e.outcome)).toEqual(Array(5).fill('in_progress'));
    expect((await depositRow(deposit.id)).vendor_payment_id).toBe('42');
    for (const status of ['failed', 'expired']) {
      const other = await vendorDeposit('nowpayments', user);
      expect((await send(ipn(other.reference, { payment_status: status }))).json.data.status).toBe(status);
      expect((await gatewayEventsOf(other.id))[0]).toMatchObject({ status, outcome: 'closed', amount: null });
    }
    expect(await balanceOf(user)).toBe(0);
  });

  it('accepts an HMAC of the raw body as sent (NOWPayments usually sends it sorted)', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    // Spaces and unsorted keys: only the raw bytes carry this signature.
    vendorSays('nowpayments', deposit, 'finished', '777');
    const body = JSON.stringify(ipn(deposit.reference, { payment_id: 777 }), null, 1);
    const res = await notify('nowpayments', body, { 'x-nowpayments-sig': await hmacSha512Hex(VENDOR_VARS.nowpayments.GATEWAY_ONE_WEBHOOK_SECRET, body) });
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(10);
  });

  it('a wrong secret, an altered body, no header or a Stripe-signed body is 401 and changes nothing', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('nowpayments', user);
    const payload = ipn(deposit.reference);
    const body = JSON.stringify(payload);
    const sig = await nowpaymentsSignature(payload);
    for (const res of [
      await send(payload, 'another-secret'),
      await notify('nowpayments', body.replace('"price_amount":10', '"price_amount":1000'), { 'x-nowpayments-sig': sig }),
      await notify('nowpayments', body, {}),
      await notify('nowpayments', body, { 'x-nowpayments-sig': 'zz' }),
      await notify('nowpayments', body, { 'Stripe-Signature': await stripeSignature(body, { secret: VENDOR_VARS.nowpayments.GATEWAY_ONE_WEBHOOK_SECRET }) }),
    ]) {
      expect(res.status, res.text).toBe(401);
    }
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it('an IPN for an order the service does not know, or a deposit of another slot, is 200 and not recorded', async () => {
    const user = await newUser();
    const generic = await call('/wallet/deposit', { key: user.key, body: { amount: 10, gateway: 'gateway_two' } });
    const reference = (await depositRow(generic.json.data.deposit_id)).reference;
    for (const payload of [ipn('dep_not_a_deposit_of_ours_0'), ipn(reference), { payment_status: 'finished' }]) {
      const res = await send(payload);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toBeNull();
    }
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(generic.json.data.deposit_id)).toEqual([]);
  });
});
