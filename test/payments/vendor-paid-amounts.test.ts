import { describe, expect, it } from 'vitest';
import { leastPaidCents } from '../../src/lib/money';
import { newOperator } from '../console-helpers';
import { visit } from '../dashboard-helpers';
import { balanceOf, call, newUser } from '../helpers';
import {
  depositRow,
  gatewayEventsOf,
  notify,
  nowpaymentsSignature,
  paidNotification,
  varsFor,
  vendorDeposit,
  vendorSays,
  type Vendor,
} from '../vendors';

// A vendor's "paid" that reports a USD amount below the deposit's less 1 % (rounded down to the cent) credits nothing:
// it is an `amount_mismatch`, listed with the console's mismatches, on the notification path and on the lookup path,
// for each vendor that reports an amount (BTCPay reports none). A $40 Cryptomus deposit whose lookup said paid with
// `payment_amount_usd: "1.00"` used to credit $40.

const REPORTING: Vendor[] = ['nowpayments', 'cryptomus', 'stripe'];
const PAID: Record<string, string> = { nowpayments: 'finished', cryptomus: 'paid', stripe: 'paid' };

const refresh = (vendor: Vendor, id: number) => call(`/admin/deposits/${id}/refresh`, { method: 'POST', admin: true, vars: varsFor(vendor) });

/** A deposit of $40 whose NOWPayments payment id is known (NOWPayments is looked up by it). */
async function fortyDollarDeposit(vendor: Vendor) {
  const user = await newUser();
  const deposit = await vendorDeposit(vendor, user, 40);
  if (vendor === 'nowpayments') {
    const payload = { payment_id: 5077125051, payment_status: 'waiting', order_id: deposit.reference, price_amount: 40 };
    expect((await notify('nowpayments', JSON.stringify(payload), { 'x-nowpayments-sig': await nowpaymentsSignature(payload) })).status).toBe(200);
  }
  return { user, deposit };
}

describe('the least a "paid" may report', () => {
  it('is the amount less 1 %, rounded down to the cent, in integer cents', () => {
    expect(leastPaidCents(4000)).toBe(3960);
    expect(leastPaidCents(1000)).toBe(990);
    expect(leastPaidCents(50)).toBe(49); // 49.5 rounded down
    expect(leastPaidCents(1)).toBe(0);
    expect(leastPaidCents(123_456_789)).toBe(122_222_221);
  });
});

for (const vendor of REPORTING) {
  describe(`${vendor}: a "paid" reporting too little`, () => {
    it('as a notification: 200, amount_mismatch, nothing credited, the deposit as it was', async () => {
      const { user, deposit } = await fortyDollarDeposit(vendor);
      const [body, headers] = await paidNotification(vendor, deposit, 1);
      const res = await notify(vendor, body, headers);
      expect(res.status, res.text).toBe(200);
      expect(await balanceOf(user)).toBe(0);
      expect((await depositRow(deposit.id)).status).toBe('pending');
      expect((await gatewayEventsOf(deposit.id)).find((e) => e.outcome === 'amount_mismatch')).toMatchObject({ amount: 1, source: 'notification' });
    });

    it("as the vendor's answer to a full-amount notification: amount_mismatch, nothing credited", async () => {
      const { user, deposit } = await fortyDollarDeposit(vendor);
      vendorSays(vendor, { ...deposit, amount: 39.59 }, PAID[vendor]);
      const [body, headers] = await paidNotification(vendor, deposit, 40);
      expect((await notify(vendor, body, headers)).status).toBe(200);
      expect(await balanceOf(user)).toBe(0);
      expect((await gatewayEventsOf(deposit.id)).map((e) => e.outcome)).toContain('amount_mismatch');
    });

    it('as a lookup (refresh): amount_mismatch, nothing credited, listed with the console mismatches', async () => {
      const { user, deposit } = await fortyDollarDeposit(vendor);
      vendorSays(vendor, { ...deposit, amount: 1 }, PAID[vendor]);
      const res = await refresh(vendor, deposit.id);
      expect(res.status, res.text).toBe(200);
      expect(res.json.data).toMatchObject({ outcome: 'amount_mismatch', deposit: { status: 'pending' } });
      expect(await balanceOf(user)).toBe(0);
      expect((await gatewayEventsOf(deposit.id)).find((e) => e.outcome === 'amount_mismatch')).toMatchObject({ amount: 1, source: 'lookup' });
      const operator = await newOperator();
      const page = await visit(`/dashboard/console/deposits?user_id=${user.id}`, { cookie: operator.cookie, vars: varsFor(vendor) });
      expect(page.text).toMatch(/<li class="mismatch">[^<]*<span[^>]*>\$1\.00<\/span> → amount_mismatch/);
    });

    it('exactly the least ($39.60 of $40.00) is credited, the deposit\'s own amount', async () => {
      const { user, deposit } = await fortyDollarDeposit(vendor);
      vendorSays(vendor, { ...deposit, amount: 39.6 }, PAID[vendor]);
      const [body, headers] = await paidNotification(vendor, deposit, 39.6);
      const res = await notify(vendor, body, headers);
      expect(res.status, res.text).toBe(200);
      expect(await balanceOf(user)).toBe(40);
    });
  });
}
