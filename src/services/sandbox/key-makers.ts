import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';

// A test key made by a live key is its child, as any key made by a key, and dies with it (docs/test-mode.md). The
// two live in different databases, whose key ids are different sequences, so a test key records its live makers in
// `live_ancestry` ('/<live id>/.../<live maker id>/', migration 0028), never in `created_by_key_id`/`ancestry`
// (which name sandbox keys). Revoking a live key revokes its test descendants in a second batch, on the sandbox, in
// the same request; the scheduled run sweeps whatever that missed (a fault between the two, a key made before 0028
// recorded nothing and is not swept).

/** The live path a test key made by this live key records: the maker's ancestry and the maker; null for no key. */
export const liveAncestryOf = (maker: { id: number; ancestry: string } | undefined): string | null => (maker ? `${maker.ancestry}${maker.id}/` : null);

/** The live key ids a live path names. */
export const liveIdsOf = (path: string): number[] => path.split('/').filter(Boolean).map(Number);

/**
 * The one sandbox statement that revokes every active test key below any of these live keys (a JSON array of live
 * ids): the keys whose live path names one, and every test key made from those (their sandbox family).
 */
export function revokeBelowLiveKeys(liveIds: SQL, now: string): SQL {
  const below = sql`SELECT k.id, k.ancestry FROM api_keys k, json_each(${liveIds}) gone
                    WHERE k.live_ancestry LIKE '%/' || gone.value || '/%'`;
  return sql`
    UPDATE api_keys SET revoked_at = ${now}
    WHERE revoked_at IS NULL
      AND id IN (SELECT b.id FROM (${below}) b
                 UNION ALL
                 SELECT d.id FROM (${below}) b JOIN api_keys d
                   ON d.ancestry >= b.ancestry || b.id || '/' AND d.ancestry < b.ancestry || b.id || '0')`;
}

/**
 * After a live key (and its live family) was revoked: its test descendants too, in the sandbox (one batch). The live
 * revoke has committed and is what was asked, so a sandbox fault never fails it (a retry would be a 404): the
 * scheduled sweep revokes what this batch could not. Null when it failed.
 */
export async function revokeTestKeysBelow(sandbox: Db, liveKeyId: number): Promise<number | null> {
  try {
    const [revoked] = await runBatch(sandbox, [revokeBelowLiveKeys(sql`${JSON.stringify([liveKeyId])}`, isoNow())]);
    return revoked.meta.changes ?? 0;
  } catch (err) {
    console.warn(JSON.stringify({ level: 'warn', msg: 'sandbox revoke left to the sweep', class: err instanceof Error ? err.name : typeof err }));
    return null;
  }
}

/**
 * After an operator disabled or enabled a user live: the same in the sandbox at once (one sandbox batch), so a test
 * key of a disabled user is refused from its next request (its proof asks for an enabled user). The live change has
 * committed and is what was asked, so a sandbox fault never fails it: the scheduled sweep copies what this missed.
 */
export async function copyDisabledToSandbox(sandbox: Db, userId: number, disabledAt: string | null): Promise<void> {
  try {
    await runBatch(sandbox, [sql`UPDATE users SET disabled_at = ${disabledAt} WHERE id = ${userId} AND disabled_at IS NOT ${disabledAt}`]);
  } catch (err) {
    console.warn(JSON.stringify({ level: 'warn', msg: 'sandbox disable left to the sweep', class: err instanceof Error ? err.name : typeof err }));
  }
}

export interface MakerSweepReport {
  revokedKeys: number;
  usersDisabled: number;
}

/** How many active test keys (and their users) one sweep looks at. */
const SWEEP_LIMIT = 500;

/**
 * The scheduled run's backstop (6 statements: two sandbox reads, two live reads, two sandbox writes): the test keys whose live maker (or a live key above it) is revoked or gone are revoked, and a user disabled live
 * is disabled in the sandbox too (and enabled again when live enables them), so no test key outlives what made it.
 */
export async function sweepTestKeyMakers(live: Db, sandbox: Db, nowMs = Date.now()): Promise<MakerSweepReport> {
  const now = isoNow(nowMs);
  const [paths, users] = await runBatch(sandbox, [
    sql`SELECT DISTINCT live_ancestry AS path FROM api_keys WHERE revoked_at IS NULL AND live_ancestry IS NOT NULL LIMIT ${SWEEP_LIMIT}`,
    sql`SELECT DISTINCT k.user_id AS id FROM api_keys k WHERE k.revoked_at IS NULL LIMIT ${SWEEP_LIMIT}`,
  ]);
  const liveIds = [...new Set(rowsOf<{ path: string }>(paths).flatMap(({ path }) => liveIdsOf(path)))];
  const userIds = rowsOf<{ id: number }>(users).map(({ id }) => id);
  if (liveIds.length === 0 && userIds.length === 0) return { revokedKeys: 0, usersDisabled: 0 };
  const [alive, accounts] = await runBatch(live, [
    sql`SELECT id FROM api_keys WHERE id IN (SELECT value FROM json_each(${JSON.stringify(liveIds)})) AND revoked_at IS NULL`,
    sql`SELECT id, disabled_at AS disabledAt FROM users WHERE id IN (SELECT value FROM json_each(${JSON.stringify(userIds)}))`,
  ]);
  const living = new Set(rowsOf<{ id: number }>(alive).map(({ id }) => id));
  const gone = liveIds.filter((id) => !living.has(id));
  // A user no longer live at all is disabled in the sandbox from now.
  const found = new Map(rowsOf<{ id: number; disabledAt: string | null }>(accounts).map(({ id, disabledAt }) => [id, disabledAt]));
  const states = userIds.map((id) => [id, found.has(id) ? found.get(id) : now]);
  // Both writes are idempotent: a run repeated after a fault changes nothing more.
  const results = await runBatch(sandbox, [
    revokeBelowLiveKeys(sql`${JSON.stringify(gone)}`, now),
    sql`UPDATE users SET disabled_at = (SELECT json_extract(s.value, '$[1]') FROM json_each(${JSON.stringify(states)}) s
                                        WHERE json_extract(s.value, '$[0]') = users.id)
        WHERE id IN (SELECT json_extract(s.value, '$[0]') FROM json_each(${JSON.stringify(states)}) s
                     WHERE json_extract(s.value, '$[1]') IS NOT users.disabled_at)`,
  ]);
  return { revokedKeys: results[0]?.meta.changes ?? 0, usersDisabled: results[1]?.meta.changes ?? 0 };
}
