import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createCheckedApp } from '../contract';
import { BASE, newUser, unique } from '../helpers';

// Forgot password writes and deletes the same rows for an unknown address as for a real one (contract: "A revoked
// key buys nothing..."): a decoy link and its email are written and deleted again in the same batch, so the two cost
// the same; nothing of the decoy remains and nothing is sent for it.

/** The binding, recording the result of each batch (sessions included). */
function recording(db: D1Database, batches: D1Result[][]): D1Database {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, name) {
        const value = (t as Record<string | symbol, unknown>)[name];
        if (name === 'batch') return async (statements: D1PreparedStatement[]) => {
          const results = await (value as (s: D1PreparedStatement[]) => Promise<D1Result[]>).call(t, statements);
          batches.push(results);
          return results;
        };
        if (name === 'withSession') return (...args: unknown[]) => wrap((value as (...a: unknown[]) => object).apply(t, args));
        return typeof value === 'function' ? value.bind(t) : value;
      },
    });
  return wrap(db);
}

async function forgot(email: string) {
  const batches: D1Result[][] = [];
  const res = await createCheckedApp().request(
    `${BASE}/auth/forgot-password`,
    { method: 'POST', headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': `192.0.2.${Math.floor(Math.random() * 250)}` }, body: JSON.stringify({ email }) },
    { ...env, DB: recording(env.DB, batches) },
  );
  expect(res.status).toBe(202);
  const [writes] = batches.filter((results) => results.some((r) => (r.meta.changes ?? 0) > 0));
  return writes.map((r) => r.meta.changes ?? 0);
}

describe('forgot password: the same rows either way', () => {
  it('an unknown address writes a link and an email as a real one does, and deletes them again; nothing remains', async () => {
    const user = await newUser();
    const before = await env.DB.prepare('SELECT (SELECT count(*) FROM password_resets) AS links, (SELECT count(*) FROM emails) AS emails').first();
    const unknown = await forgot(`${unique('nobody')}@example.com`);
    expect(await env.DB.prepare('SELECT (SELECT count(*) FROM password_resets) AS links, (SELECT count(*) FROM emails) AS emails').first()).toEqual(before);
    const known = await forgot(user.email);
    // Statement by statement: the stale rows, the address's row, the real link, the decoy link, the email, then the
    // decoy's two deletes (which find nothing for a real address).
    expect(unknown).toHaveLength(known.length);
    const [, unknownRow, unknownLink, unknownDecoy, unknownEmail, ...unknownDeletes] = unknown;
    const [, knownRow, knownLink, knownDecoy, knownEmail, ...knownDeletes] = known;
    expect([unknownRow, unknownLink + unknownDecoy, unknownEmail]).toEqual([1, 1, 1]);
    expect([knownRow, knownLink + knownDecoy, knownEmail]).toEqual([1, 1, 1]);
    expect(unknownDeletes.slice(0, 2)).toEqual([1, 1]);
    expect(knownDeletes.slice(0, 2)).toEqual([0, 0]);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM password_resets WHERE user_id = ?').bind(user.id).first('n')).toBe(1);
  });
});
