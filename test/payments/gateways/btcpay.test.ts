import { describe, expect, it } from 'vitest';
import { balanceOf, newUser } from '../../helpers';
import { btcpaySignature, depositRow, gatewayEventsOf, notify, VENDOR_VARS, vendorDeposit, vendorSays } from '../../vendors';

// BTCPay Server Greenfield invoices and webhooks behind gateway_one (contract: "Real payment providers behind the three
// gateway slots").

const delivery = (invoiceId: string, type: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    deliveryId: `d-${crypto.randomUUID()}`,
    webhookId: 'wh-1',
    originalDeliveryId: 'd-0',
    isRedelivery: false,
    type,
    timestamp: Math.floor(Date.now() / 1000),
    storeId: VENDOR_VARS.btcpay.GATEWAY_ONE_ACCOUNT,
    invoiceId,
    metadata: {},
    ...extra,
  });

async function send(body: string, secret?: string) {
  return notify('btcpay', body, { 'BTCPay-Sig': await btcpaySignature(body, secret) });
}

describe('BTCPay: creating the deposit', () => {
  it("creates an invoice in the store with `token` auth and the reference as orderId, and stores checkoutLink and id", async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('btcpay', user, 99.99);
    const [request] = deposit.seen;
    expect(request.url).toBe('https://btcpay.vendor.test/api/v1/stores/StoreAbc123/invoices');
    expect(request.headers.get('authorization')).toBe(`token ${VENDOR_VARS.btcpay.GATEWAY_ONE_API_KEY}`);
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({ amount: '99.99', currency: 'USD', metadata: { orderId: deposit.reference }, checkout: { redirectURL: 'http://localhost/dashboard/wallet' } });
    expect(body.checkout.expirationMinutes).toBe(60);
    expect((await depositRow(deposit.id)).external_id).toBe(deposit.invoiceId);
  });
});

describe('BTCPay: webhooks', () => {
  it('InvoiceSettled credits the deposit named by its invoice id once', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('btcpay', user);
    vendorSays('btcpay', deposit, 'Settled');
    const body = delivery(deposit.invoiceId, 'InvoiceSettled', { overPaid: false, manuallyMarked: false });
    expect((await send(body)).json.data.status).toBe('paid');
    expect((await send(body)).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect((await gatewayEventsOf(deposit.id)).map((e) => [e.status, e.amount, e.outcome]).sort()).toEqual([
      ['InvoiceSettled', null, 'credited'],
      ['InvoiceSettled', null, 'duplicate'],
    ]);
  });

  it('InvoiceExpired expires, or with partiallyPaid is a mismatch (amount null); InvoiceInvalid fails; others progress', async () => {
    const user = await newUser();
    const cases = [
      ['InvoiceExpired', { partiallyPaid: false }, 'expired', 'closed'],
      ['InvoiceExpired', { partiallyPaid: true }, 'pending', 'amount_mismatch'],
      ['InvoiceInvalid', {}, 'failed', 'closed'],
      ['InvoiceReceivedPayment', {}, 'pending', 'in_progress'],
      ['InvoiceProcessing', {}, 'pending', 'in_progress'],
    ] as const;
    for (const [type, extra, status, outcome] of cases) {
      const deposit = await vendorDeposit('btcpay', user);
      const res = await send(delivery(deposit.invoiceId, type, extra));
      expect(res.status, res.text).toBe(200);
      expect((await depositRow(deposit.id)).status).toBe(status);
      expect(await gatewayEventsOf(deposit.id)).toMatchObject([{ status: type, amount: null, outcome }]);
    }
    expect(await balanceOf(user)).toBe(0);
  });

  it('a wrong secret, a signature without `sha256=`, an altered body or none is 401 and changes nothing', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('btcpay', user);
    const body = delivery(deposit.invoiceId, 'InvoiceSettled');
    const good = await btcpaySignature(body);
    for (const res of [
      await send(body, 'another-secret'),
      await notify('btcpay', body, { 'BTCPay-Sig': good.slice('sha256='.length) }),
      await notify('btcpay', body.replace('InvoiceSettled', 'InvoiceSettled '), { 'BTCPay-Sig': good }),
      await notify('btcpay', body, {}),
    ]) {
      expect(res.status, res.text).toBe(401);
    }
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it("an unknown invoice, another store's invoice or a non-invoice event is 200 and not recorded", async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('btcpay', user);
    for (const body of [
      delivery('UnknownInvoice1', 'InvoiceSettled'),
      delivery(deposit.invoiceId, 'InvoiceSettled', { storeId: 'AnotherStore' }),
      delivery(deposit.invoiceId, 'PayoutCreated'),
    ]) {
      const res = await send(body);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toBeNull();
    }
    expect(await balanceOf(user)).toBe(0);
  });
});
