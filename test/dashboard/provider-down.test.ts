import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { useInvocationOptions } from '../contract';
import { idempotencyKeyIn, signedInUser, visit } from '../dashboard-helpers';
import { network } from '../network';
import type { RoundTrip } from '../production-d1';
import { changedTables, snapshot } from '../snapshot';
import { apiUrl, INVOICE_ENDPOINT, SLOT_OF, varsFor, type Vendor } from '../vendors';

// "Add funds" while the slot's payment provider is down (the faked vendor unreachable, or answering 502): the wallet
// page again with the API's 503 and Retry-After, a message that names the payment provider and says nothing was
// charged, and the form as the user filled it. Nothing is stored.

const alertOf = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const inputValue = (html: string, name: string) => new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1];
const selected = (html: string, name: string) =>
  new RegExp(`<select[^>]*name="${name}"[^>]*>(?:(?!</select>).)*<option value="([^"]*)" selected`, 's').exec(html)?.[1];

let restore: (() => void) | undefined;
afterEach(() => restore?.());

const DOWN = [() => HttpResponse.error(), () => HttpResponse.json({ error: 'bad gateway' }, { status: 502 })];

describe('Add funds with the payment provider down', () => {
  for (const [vendor, crypto] of [['nowpayments', 'BTC'], ['stripe', undefined]] as Array<[Vendor, string | undefined]>) {
    it(`${vendor}: the wallet page again (503, Retry-After) saying so, the amount, method and currency kept, nothing stored`, async () => {
      const user = await signedInUser();
      const vars = varsFor(vendor);
      for (const down of DOWN) {
        network.use(http.post(`${apiUrl(vendor)}${INVOICE_ENDPOINT[vendor].path}`, down, { once: true }));
        const wallet = await visit('/dashboard/wallet', { cookie: user.cookie, vars });
        const form = { amount: '42.50', gateway: SLOT_OF[vendor], crypto_currency: crypto ?? 'USDT', idempotency_key: idempotencyKeyIn(wallet.text) };
        const before = await snapshot();
        const trips: RoundTrip[] = [];
        let responded = false; // trips after the response (waitUntil work) keep no one waiting
        restore = useInvocationOptions(() => ({ record: (trip) => responded || trips.push(trip), responded: () => (responded = true) }));
        const res = await visit('/dashboard/wallet/deposit', { cookie: user.cookie, form, vars });
        restore();
        // Two round trips, none a write: the form's idempotency key looked up (as after any refused keyed effect: a
        // first, successful send would be answered instead), then the page, the session proved in its batch.
        expect(trips, JSON.stringify(trips)).toEqual([
          expect.objectContaining({ statements: 2, toPrimary: true, writes: false }),
          expect.objectContaining({ writes: false }),
        ]);
        expect(res.status, res.text.slice(0, 300)).toBe(503);
        expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
        expect(alertOf(res.text)).toBe(
          'The payment provider could not be reached, so no deposit was made and nothing was charged. Please try again in a minute.',
        );
        expect(res.text).toContain('<h2 id="add-funds">Add funds</h2>');
        expect(inputValue(res.text, 'amount')).toBe('42.50');
        expect(selected(res.text, 'gateway')).toBe(SLOT_OF[vendor]);
        expect(selected(res.text, 'crypto_currency')).toBe(form.crypto_currency);
        expect(changedTables(before, await snapshot())).toEqual([]);
      }
    });
  }
});
