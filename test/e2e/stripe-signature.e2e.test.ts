import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { verifyStripeSignature } from '../../src/services/payments/gateways/stripe';

// Our Stripe-Signature verifier against Stripe's own library (plain Node, no worker): headers made by
// `stripe.webhooks.generateTestHeaderString` verify, and what Stripe's `constructEvent` refuses we refuse too.

const stripe = new Stripe('sk_test_not_a_real_key');
const secret = 'whsec_7f0b5c0e3d9a4c61b1c6f1d2e3a4b5c6';
const payload = JSON.stringify({
  id: 'evt_1QxYz',
  object: 'event',
  type: 'checkout.session.completed',
  data: { object: { id: 'cs_test_1', object: 'checkout.session', client_reference_id: 'dep_x', payment_status: 'paid', amount_total: 1000 } },
});
const nowSeconds = () => Math.floor(Date.now() / 1000);
const stripeAccepts = (body: string, header: string) => {
  try {
    stripe.webhooks.constructEvent(body, header, secret, 300);
    return true;
  } catch {
    return false;
  }
};

describe("Stripe-Signature, checked against Stripe's own library", () => {
  it('a header made by generateTestHeaderString verifies (now, and 295 s old)', async () => {
    for (const timestamp of [nowSeconds(), nowSeconds() - 295]) {
      const header = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
      expect(stripeAccepts(payload, header)).toBe(true);
      expect(await verifyStripeSignature(secret, payload, header, Date.now())).toBe(true);
    }
  });

  it('both refuse a header older than 300 s, another secret, or an altered body', async () => {
    const old = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: nowSeconds() - 301 });
    const other = stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_another' });
    const good = stripe.webhooks.generateTestHeaderString({ payload, secret });
    const altered = payload.replace('1000', '100000');
    for (const [body, header] of [[payload, old], [payload, other], [altered, good]]) {
      expect(stripeAccepts(body, header)).toBe(false);
      expect(await verifyStripeSignature(secret, body, header, Date.now())).toBe(false);
    }
  });

  it('any matching v1 among several verifies (a rolled secret), as in Stripe', async () => {
    const timestamp = nowSeconds();
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }).split('v1=')[1];
    const header = `t=${timestamp},v1=${'a'.repeat(64)},v1=${signature}`;
    expect(stripeAccepts(payload, header)).toBe(true);
    expect(await verifyStripeSignature(secret, payload, header, Date.now())).toBe(true);
  });
});
