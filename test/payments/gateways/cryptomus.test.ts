import { describe, expect, it } from 'vitest';
import { balanceOf, newUser } from '../../helpers';
import { cryptomusSigned, depositRow, gatewayEventsOf, notify, useReference, VENDOR_VARS, vendorDeposit, vendorSays } from '../../vendors';

// Cryptomus payments and webhooks behind gateway_two (contract: "Real payment providers behind the three gateway slots").

// Made by PHP 8.2 itself: `$data['sign'] = md5(base64_encode(json_encode($data, JSON_UNESCAPED_UNICODE)) . $key)`,
// then sent as `json_encode($data)` (slashes and non-ASCII escaped), with the API key 'cryptomus-payment-key'. The
// body has a slash, accents, a float written `1.0` and nested objects: the verifier must re-encode it as PHP does.
const FIXTURE_PAID =
  '{"type":"payment","uuid":"62f88b36-a9d5-4fa6-aa26-e040c3dbf26d","order_id":"dep_FixtureCryptomusPaid0001","amount":"10.00","payment_amount":"10.00","payment_amount_usd":"10.00","merchant_amount":"9.80","commission":"0.20","is_final":true,"status":"paid","from":"TAaZxa2wd7AzR7D4yD1Wc5Vh6xr4FyCWzD","wallet_address_uuid":null,"network":"tron","currency":"USD","payer_currency":"USDT","additional_data":"Caf\\u00e9 \\/ d\\u00e9posit","convert":{"to_currency":"USDT","commission":null,"rate":"1.00000000","amount":"9.80"},"txid":"6f0d9fc0c5a1\\/abc","rate":1.0,"fee":0.25,"sign":"87a977e8915db2377a2354b3bab6532e"}';
// The same made by PHP for a wrong amount, sent unescaped (JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES).
const FIXTURE_WRONG_AMOUNT =
  '{"type":"payment","uuid":"62f88b36-a9d5-4fa6-aa26-e040c3dbf26d","order_id":"dep_FixtureCryptomusWrong001","amount":"10.00","payment_amount":"10.00","payment_amount_usd":"7.50","merchant_amount":"9.80","commission":"0.20","is_final":true,"status":"wrong_amount","from":"TAaZxa2wd7AzR7D4yD1Wc5Vh6xr4FyCWzD","wallet_address_uuid":null,"network":"tron","currency":"USD","payer_currency":"USDT","additional_data":"Café / déposit","convert":{"to_currency":"USDT","commission":null,"rate":"1.00000000","amount":"9.80"},"txid":"6f0d9fc0c5a1/abc","rate":1,"fee":0.25,"sign":"de72b647612ee1689c9489a739d37b8f"}';

/** A webhook body as PHP encodes it for signing (ASCII only here, so JSON.stringify plus `\/` is PHP's form). */
const phpBody = (fields: Record<string, unknown>) => JSON.stringify(fields).replace(/\//g, '\\/');
const webhook = (reference: string, status: string, extra: Record<string, unknown> = {}) =>
  cryptomusSigned(phpBody({ type: 'payment', uuid: `uuid-${reference}`, order_id: reference, amount: '10.00', payment_amount_usd: '10.00', status, url: 'https://x.test/a/b', ...extra }));

describe('Cryptomus: creating the deposit', () => {
  it('signs the call with merchant and md5(base64(body) + key), keyed on the reference', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('cryptomus', user, 10.5);
    const [request] = deposit.seen;
    expect(request.headers.get('merchant')).toBe(VENDOR_VARS.cryptomus.GATEWAY_TWO_ACCOUNT);
    const digest = await crypto.subtle.digest('MD5', new TextEncoder().encode(btoa(request.body) + VENDOR_VARS.cryptomus.GATEWAY_TWO_API_KEY));
    expect(request.headers.get('sign')).toBe([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join(''));
    expect(JSON.parse(request.body)).toMatchObject({
      amount: '10.50',
      currency: 'USD',
      order_id: deposit.reference,
      url_callback: 'http://localhost/api/v2/webhooks/gateway_two',
      to_currency: 'USDT',
    });
    expect((await depositRow(deposit.id)).external_id).toBe(deposit.invoiceId);
  });
});

describe('Cryptomus: webhooks', () => {
  it("verifies a webhook signed by PHP's own json_encode (escaped slashes and unicode, a float) and paid credits once", async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('cryptomus', user);
    await useReference(deposit.id, 'dep_FixtureCryptomusPaid0001');
    vendorSays('cryptomus', { ...deposit, reference: 'dep_FixtureCryptomusPaid0001' }, 'paid');
    const res = await notify('cryptomus', FIXTURE_PAID, {});
    expect(res.status, res.text).toBe(200);
    expect(res.json.data.status).toBe('paid');
    expect((await notify('cryptomus', FIXTURE_PAID, {})).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect((await gatewayEventsOf(deposit.id)).map((e) => [e.status, e.outcome, e.transaction_id]).sort()).toEqual([
      ['paid', 'credited', '62f88b36-a9d5-4fa6-aa26-e040c3dbf26d'],
      ['paid', 'duplicate', '62f88b36-a9d5-4fa6-aa26-e040c3dbf26d'],
    ]);
  });

  it('wrong_amount (a PHP-signed body sent unescaped) is an amount mismatch with payment_amount_usd, nothing credited', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('cryptomus', user);
    await useReference(deposit.id, 'dep_FixtureCryptomusWrong001');
    const res = await notify('cryptomus', FIXTURE_WRONG_AMOUNT, {});
    expect(res.status, res.text).toBe(200);
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(deposit.id)).toMatchObject([{ status: 'wrong_amount', amount: 7.5, outcome: 'amount_mismatch' }]);
  });

  it('paid_over credits the deposit amount; cancel expires; fail and system_fail fail; others are in progress', async () => {
    const user = await newUser();
    const over = await vendorDeposit('cryptomus', user);
    vendorSays('cryptomus', over, 'paid_over');
    expect((await notify('cryptomus', await webhook(over.reference, 'paid_over', { payment_amount_usd: '12.00' }), {})).status).toBe(200);
    expect(await balanceOf(user)).toBe(10);
    expect((await gatewayEventsOf(over.id))[0]).toMatchObject({ amount: 12, outcome: 'credited' });
    for (const [status, expected] of [['cancel', 'expired'], ['fail', 'failed'], ['system_fail', 'failed'], ['check', 'pending'], ['confirm_check', 'pending']]) {
      const deposit = await vendorDeposit('cryptomus', user);
      const res = await notify('cryptomus', await webhook(deposit.reference, status), {});
      expect(res.status, res.text).toBe(200);
      expect((await depositRow(deposit.id)).status).toBe(expected);
      expect((await gatewayEventsOf(deposit.id))[0].outcome).toBe(expected === 'pending' ? 'in_progress' : 'closed');
    }
    expect(await balanceOf(user)).toBe(10);
  });

  it('a sign over JSON.stringify (slashes not escaped), a wrong key, an altered body or no sign is 401', async () => {
    const user = await newUser();
    const deposit = await vendorDeposit('cryptomus', user);
    const fields = { type: 'payment', uuid: 'u-1', order_id: deposit.reference, status: 'paid', url: 'https://x.test/a/b' };
    const good = await cryptomusSigned(phpBody(fields));
    for (const body of [
      await cryptomusSigned(JSON.stringify(fields)),
      await cryptomusSigned(phpBody(fields), 'another-key'),
      good.replace('"status":"paid"', '"status":"paid_over"'),
      phpBody(fields),
      'not json',
    ]) {
      const res = await notify('cryptomus', body, {});
      expect(res.status, res.text).toBe(401);
    }
    expect(await balanceOf(user)).toBe(0);
    expect(await gatewayEventsOf(deposit.id)).toEqual([]);
  });

  it('a webhook for an unknown order or a static wallet top-up is 200 and not recorded', async () => {
    for (const body of [await webhook('dep_unknown_to_this_service', 'paid'), await webhook('dep_unknown_2', 'paid', { type: 'wallet' })]) {
      const res = await notify('cryptomus', body, {});
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toBeNull();
    }
  });
});
