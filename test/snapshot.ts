import { env } from 'cloudflare:test';

// Whole-database snapshots for "a failed request changes nothing" checks (test/api/fuzz.test.ts, test/security.test.ts).

/** Every business table with the columns compared. */
export const SNAPSHOT_TABLES: Record<string, string> = {
  users: 'id, name, email, password_hash, balance_cents, created_at, updated_at, role, disabled_at',
  // last_used_at left out: a request authenticated by a key refreshes it (after the response) even when it then fails.
  api_keys: 'id, user_id, name, key_hash, key_preview, created_at, revoked_at',
  products: '*',
  orders: '*',
  stock_items: '*',
  deposits: '*',
  wallet_transactions: '*',
  idempotency_keys: '*',
  // idle_expires_at left out: using a session slides it forward (after the response) whatever the outcome.
  sessions: 'id, user_id, token_hash, created_at, expires_at',
  audit_log: '*',
  password_resets: '*',
  operator_idempotency_keys: '*',
};

/** table -> its rows (ordered by id) as JSON. */
export type Snapshot = Record<string, string>;

export async function snapshot(): Promise<Snapshot> {
  const tables = Object.entries(SNAPSHOT_TABLES);
  const results = await env.DB.batch(tables.map(([table, columns]) => env.DB.prepare(`SELECT ${columns} FROM ${table} ORDER BY id`)));
  return Object.fromEntries(tables.map(([table], i) => [table, JSON.stringify(results[i].results)]));
}

/** The tables whose rows differ between two snapshots. */
export function changedTables(before: Snapshot, after: Snapshot): string[] {
  return Object.keys(SNAPSHOT_TABLES).filter((table) => before[table] !== after[table]);
}

/** The schema itself (tables, indexes, triggers), to show hostile input dropped or altered nothing. */
export async function schemaOf(): Promise<Array<{ type: string; name: string; sql: string | null }>> {
  const { results } = await env.DB.prepare(
    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY type, name",
  ).all<{ type: string; name: string; sql: string | null }>();
  return results;
}
