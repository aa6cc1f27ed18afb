import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { auditLedger } from '../../src/services/operator/ledger-audit';
import { useInvocationOptions } from '../contract';
import { idempotencyKeyIn, signedInUser, visit, type PageOptions } from '../dashboard-helpers';
import { newProduct } from '../helpers';
import { seededRandom } from '../production-d1';

// The dashboard on a D1 that fails a share of its round trips (half before executing, half after committing), as
// test/faults.test.ts does for the API: no page is ever a 500, a 503 is a page with Retry-After, and a browser that
// sends the same form again (the hidden idempotency_key it was rendered with) ends with exactly one effect.

const viteEnv = ((import.meta as unknown as { env?: Record<string, string | undefined> }).env ?? {}) as Record<string, string | undefined>;
const SEED = Number(viteEnv.VITE_FAULT_SEED ?? 20261123);
const FAULT_RATE = 0.3;
const TRIES = 12;

let restore: (() => void) | undefined;
afterEach(() => restore?.());

describe('dashboard forms on a failing D1', () => {
  it(`buy and cancel with ${FAULT_RATE * 100} % faults: never a 500, a 503 is a page, a re-sent form makes one effect`, async () => {
    console.log(`[dashboard-faults] seed=${SEED} (reproduce: VITE_FAULT_SEED=${SEED} npx vitest run test/dashboard/faults.test.ts)`);
    const random = seededRandom(SEED);
    let faultsOn = false;
    restore = useInvocationOptions(() => (faultsOn ? { faults: { rate: FAULT_RATE, random } } : {}));
    let unavailable = 0;

    /** A browser that sends the same request again while the answer is a 503 (what "try again" does). */
    const untilAnswered = async (path: string, options: PageOptions) => {
      for (let attempt = 1; ; attempt++) {
        const res = await visit(path, options);
        expect(res.status, `never a 500: ${res.text.slice(0, 300)}`).not.toBe(500);
        if (res.status !== 503 || attempt === TRIES) return res;
        unavailable++;
        expect(res.headers.get('Retry-After')).toMatch(/^\d+$/);
        expect(res.headers.get('Content-Type')).toMatch(/^text\/html/);
        expect(res.text).toContain('nothing was changed');
      }
    };

    for (let run = 0; run < 6; run++) {
      const user = await signedInUser({ balance: 20 });
      const product = await newProduct({ price: 2.5, stock: 10 });
      faultsOn = true;
      const shop = await untilAnswered('/dashboard/shop', { cookie: user.cookie });
      expect(shop.status).toBe(200);
      const buy = { product_id: String(product.id), quantity: '2', idempotency_key: idempotencyKeyIn(shop.text) };
      const bought = await untilAnswered('/dashboard/shop', { cookie: user.cookie, form: buy });
      expect(bought.status, bought.text.slice(0, 300)).toBe(303);
      expect(bought.location).toMatch(/^\/dashboard\/orders\/\d+\?notice=charged$/);
      const orderPath = bought.location!.replace('?notice=charged', '');
      const cancelled = await untilAnswered(`${orderPath}/cancel`, { cookie: user.cookie, form: { idempotency_key: `cancel-${run}` } });
      expect(cancelled.status, cancelled.text.slice(0, 300)).toBe(303);
      expect(cancelled.location).toBe(`${orderPath}?notice=refunded`);
      faultsOn = false;

      const state = await env.DB.prepare(
        `SELECT (SELECT count(*) FROM orders WHERE user_id = ?1) AS orders,
                (SELECT count(*) FROM orders WHERE user_id = ?1 AND status = 'cancelled') AS cancelled,
                (SELECT balance_cents FROM users WHERE id = ?1) AS balanceCents`,
      )
        .bind(user.id)
        .first();
      expect(state).toEqual({ orders: 1, cancelled: 1, balanceCents: 2000 });
    }
    expect(unavailable, 'the faults reached the pages').toBeGreaterThan(0);
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});
