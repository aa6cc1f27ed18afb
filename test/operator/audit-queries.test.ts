import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { assertReadOnly, auditStatements, maxIdsSql, parseQueryOutput, remoteQueryArgs, shellLine } from '../../scripts/audit-queries.mjs';
import { AUDIT_CHECKS, auditLedger, windowedSql } from '../../src/services/operator/ledger-audit';
import { fund, newUser } from '../helpers';

// `npm run audit:ledger -- --remote` cannot reach Cloudflare from the test suite: what it sends (the wrangler command
// lines, read-only statements, windows) and how it reads the answers are checked here, and the windowed (bounded)
// statements run against the local D1.

const byName = (name: string) => AUDIT_CHECKS.find((c) => c.name === name)!;

describe('the remote audit commands', () => {
  it('run each check as one read-only statement through `wrangler d1 execute --remote --json`', () => {
    for (const check of AUDIT_CHECKS) {
      expect(remoteQueryArgs('DB', check.sql)).toEqual(['d1', 'execute', 'DB', '--remote', '--json', '--command', check.sql]);
    }
    expect(remoteQueryArgs('stock-wallet', 'SELECT 1')).toEqual(['d1', 'execute', 'stock-wallet', '--remote', '--json', '--command', 'SELECT 1']);
  });

  it.each([
    'UPDATE users SET balance_cents = 0',
    'DELETE FROM wallet_transactions',
    'SELECT 1; DROP TABLE users',
    'SELECT 1; INSERT INTO users (id) VALUES (1)',
    'PRAGMA writable_schema = 1',
    'WITH x AS (SELECT 1) REPLACE INTO users SELECT * FROM x',
    'ATTACH DATABASE x AS y',
  ])('refuse to send %s', (sql) => {
    expect(() => remoteQueryArgs('DB', sql)).toThrow(/not a plain read/);
    expect(() => assertReadOnly(sql)).toThrow();
  });

  it('read D1\'s JSON answer: the rows and the rows it read; a failed answer is an error', () => {
    const answer = JSON.stringify([
      {
        results: [{ user_id: 7, balance_cents: 100, ledger_cents: 99 }],
        success: true,
        meta: { served_by: 'v3-prod', duration: 12.5, changes: 0, last_row_id: 0, changed_db: false, size_after: 1, rows_read: 4321, rows_written: 0 },
      },
    ]);
    expect(parseQueryOutput(answer)).toEqual({ rows: [{ user_id: 7, balance_cents: 100, ledger_cents: 99 }], rowsRead: 4321, durationMs: 12.5 });
    expect(() => parseQueryOutput(JSON.stringify([{ success: false, results: [] }]))).toThrow();
    expect(() => parseQueryOutput('[]')).toThrow();
  });

  it('quote command lines for a POSIX shell', () => {
    expect(shellLine(['npx', 'wrangler', '--command', "SELECT 'a' AS x"])).toBe(`npx wrangler --command 'SELECT '\\''a'\\'' AS x'`);
  });

  it('cover each keyed check with consecutive windows up to its table\'s largest id', () => {
    const statements = auditStatements(AUDIT_CHECKS, { window: 1000, maxIds: { users: 2500, products: 10, orders: 1000, stock_items: 1001, deposits: 0, wallet_transactions: 3 } });
    const windowsOf = (name: string) => statements.filter((s) => s.check.name === name).map((s) => [s.from, s.to]);
    expect(windowsOf('balance_after chains by ascending id')).toEqual([[1, 1000], [1001, 2000], [2001, 3000]]);
    expect(windowsOf('items of cancelled orders are revoked, of other orders sold')).toEqual([[1, 1000], [1001, 2000]]);
    expect(windowsOf('a deposit is credited at most once, only when paid, by its amount')).toEqual([[1, 1000]]);
    expect(auditStatements(AUDIT_CHECKS).map((s) => s.sql)).toEqual(AUDIT_CHECKS.map((c) => c.sql));
    const unkeyed = { name: 'unkeyed', sql: 'SELECT 1 WHERE 0' };
    expect(auditStatements([unkeyed], { window: 10, maxIds: {} })).toEqual([{ check: unkeyed, sql: unkeyed.sql }]);
  });
});

describe('windowed checks on the local D1', () => {
  it('find a violation only in the window that holds it, reading only that window', async () => {
    const users = [await newUser(), await newUser(), await newUser()];
    for (const user of users) for (let i = 0; i < 5; i++) await fund(user, 1);
    const [, victim] = users;
    const check = byName('balance_after chains by ascending id');
    await env.DB.prepare('UPDATE wallet_transactions SET balance_after_cents = balance_after_cents + 1 WHERE id = (SELECT max(id) FROM wallet_transactions WHERE user_id = ?)')
      .bind(victim.id)
      .run();
    try {
      const all = await env.DB.prepare(check.sql).all();
      const around = await env.DB.prepare(windowedSql(check, victim.id, victim.id)).all();
      const before = await env.DB.prepare(windowedSql(check, 1, victim.id - 1)).all();
      expect(all.results.map((r) => r.user_id)).toEqual([victim.id]);
      expect(around.results).toEqual(all.results);
      expect(before.results).toEqual([]);
      // SQLite pushes the window into the query: one user's ledger is read, not everyone's.
      expect(around.meta.rows_read).toBeLessThan(all.meta.rows_read);
    } finally {
      await env.DB.prepare('UPDATE wallet_transactions SET balance_after_cents = balance_after_cents - 1 WHERE id = (SELECT max(id) FROM wallet_transactions WHERE user_id = ?)')
        .bind(victim.id)
        .run();
    }
  });

  it('every windowed statement of a full audit runs, read-only, and agrees with the whole audit', async () => {
    await newUser({ balance: 3 });
    const maxIds = (await env.DB.prepare(maxIdsSql(AUDIT_CHECKS)).first()) as Record<string, number>;
    expect(Object.keys(maxIds).sort()).toEqual(['api_keys', 'deposits', 'orders', 'products', 'stock_items', 'users', 'wallet_transactions']);
    const violations = [];
    for (const { sql } of auditStatements(AUDIT_CHECKS, { window: 2, maxIds })) violations.push(...(await env.DB.prepare(sql).all()).results);
    expect(violations).toEqual([]);
    expect(await auditLedger(env.DB)).toEqual([]);
  });
});
