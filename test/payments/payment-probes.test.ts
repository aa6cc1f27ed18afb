import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Bindings } from '../../src/env';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { balanceOf, call, expectError, newUser } from '../helpers';
import {
  depositRow,
  depositTransactions,
  gatewayEventsOf,
  notify,
  PAID_STATUS,
  paidNotification,
  varsFor,
  vendorDeposit,
  vendorSays,
  type Vendor,
} from '../vendors';

// The second review's probes of what held, run again after its fixes (payment ids kept before the lookup, the depth
// check in front of every webhook, the amount check): forged, wrong-secret and cross-vendor notifications are still
// 401 for every vendor, and a paid deposit raced by parallel notifications, refreshes and scheduled runs is still
// credited exactly once.

const VENDORS: Vendor[] = ['stripe', 'nowpayments', 'cryptomus', 'btcpay'];
const MINUTE = 60_000;

/** Another vendor's notification format, signed with that vendor's own secret, sent to this vendor's slot. */
const otherVendor = (vendor: Vendor): Vendor => (vendor === 'stripe' ? 'nowpayments' : 'stripe');

for (const vendor of VENDORS) {
  describe(`${vendor}: notifications that are not the vendor's`, () => {
    it('unsigned, wrongly signed, or in another vendor\'s format: 401, nothing changes', async () => {
      const user = await newUser();
      const deposit = await vendorDeposit(vendor, user);
      const [body, headers] = await paidNotification(vendor, deposit);
      // Cryptomus signs inside the body (`sign`), the others in a header.
      const signed = vendor === 'cryptomus';
      const forgeries: Array<[string, Record<string, string>]> = [
        [signed ? body.replace(/,"sign":"[0-9a-f]+"/, '') : body, {}],
        signed ? [body.replace(/"sign":"[0-9a-f]+"/, `"sign":"${'0'.repeat(32)}"`), {}] : [body, Object.fromEntries(Object.keys(headers).map((name) => [name, 'f'.repeat(64)]))],
        // Altered after signing (BTCPay's body names the invoice, the others' the reference).
        [body.includes(deposit.reference) ? body.replace(deposit.reference, `${deposit.reference}x`) : body.replace(deposit.invoiceId, `${deposit.invoiceId}x`), headers],
        await paidNotification(otherVendor(vendor), deposit),
      ];
      for (const [forged, forgedHeaders] of forgeries) expectError(await notify(vendor, forged, forgedHeaders), 401, 'UNAUTHORIZED');
      expect(await balanceOf(user)).toBe(0);
      expect(await gatewayEventsOf(deposit.id)).toEqual([]);
    });
  });

  describe(`${vendor}: one paid deposit, raced`, () => {
    it('8 parallel notifications, 4 refreshes and 2 scheduled runs credit it exactly once', async () => {
      const now = Date.now() + 6 * MINUTE;
      await env.DB.prepare('UPDATE deposits SET last_checked_at = ? WHERE provider = ?').bind(new Date(now).toISOString(), vendor).run();
      const user = await newUser();
      const deposit = await vendorDeposit(vendor, user);
      vendorSays(vendor, deposit, PAID_STATUS[vendor]);
      // NOWPayments is looked up by the payment id its notifications carry; the refreshes may run before any has.
      const refreshBody = vendor === 'nowpayments' ? { payment_id: '5077125051' } : undefined;
      const [body, headers] = await paidNotification(vendor, deposit);
      const vars = varsFor(vendor);
      const results = await Promise.all([
        ...Array.from({ length: 8 }, () => notify(vendor, body, headers)),
        ...Array.from({ length: 4 }, () => call(`/admin/deposits/${deposit.id}/refresh`, { method: 'POST', admin: true, vars, ...(refreshBody && { body: refreshBody }) })),
        ...Array.from({ length: 2 }, () => runScheduledJobs({ ...env, ...vars, GATEWAY_POLL_LIMIT: '40' } as Bindings, now).then(() => ({ status: 200 }))),
      ]);
      expect(results.map((r) => r.status)).toEqual(Array(14).fill(200));
      expect(await balanceOf(user)).toBe(10);
      expect(await depositTransactions(deposit.id)).toBe(1);
      expect((await depositRow(deposit.id)).status).toBe('paid');
      expect((await gatewayEventsOf(deposit.id)).filter((e) => e.outcome === 'credited')).toHaveLength(1);
    });
  });
}
