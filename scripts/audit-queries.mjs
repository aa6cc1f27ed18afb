// What `npm run audit:ledger` sends and how it reads the answers: pure functions (no I/O), shared by the local and
// the remote audit and tested in the worker suite (test/operator/audit-queries.test.ts).
import { windowedSql } from '../src/services/operator/ledger-audit.ts';

const READS = /^\s*(SELECT|WITH)\b/i;
const WRITES = /\b(INSERT|UPDATE|DELETE|REPLACE|UPSERT|CREATE|DROP|ALTER|ATTACH|DETACH|PRAGMA|VACUUM|REINDEX|ANALYZE)\b/i;

/** Production is audited with reads only: anything that could write is refused before it is sent. */
export function assertReadOnly(sql) {
  if (!READS.test(sql) || WRITES.test(sql)) throw new Error(`Refusing to send a statement that is not a plain read: ${sql.slice(0, 80)}`);
  return sql;
}

/** `wrangler d1 execute` arguments that run one read-only statement on the deployed database, answering JSON. */
export const remoteQueryArgs = (database, sql) => ['d1', 'execute', database, '--remote', '--json', '--command', assertReadOnly(sql)];

/** The one statement's answer in `wrangler d1 execute --json` output: its rows and what D1 says it read. */
export function parseQueryOutput(stdout) {
  const [result] = JSON.parse(stdout);
  if (!result || result.success !== true || !Array.isArray(result.results)) throw new Error(`Unexpected wrangler output: ${stdout.slice(0, 200)}`);
  return { rows: result.results, rowsRead: result.meta?.rows_read ?? null, durationMs: result.meta?.duration ?? null };
}

/** The largest id of every table a check is keyed on, in one read. */
export const maxIdsSql = (checks) =>
  `SELECT ${[...new Set(checks.filter((c) => c.key).map((c) => c.key.table))].map((t) => `(SELECT coalesce(max(id), 0) FROM ${t}) AS ${t}`).join(', ')}`;

/**
 * The statements of an audit: each check whole, or (with `window`) as consecutive windows of `window` ids of its key
 * up to that table's largest id (`maxIds`), each within D1's time limit. Checks without a key run whole.
 */
export function auditStatements(checks, { window, maxIds } = {}) {
  return checks.flatMap((check) => {
    if (!window || !check.key) return [{ check, sql: assertReadOnly(check.sql) }];
    const last = Math.max(1, maxIds[check.key.table]);
    return Array.from({ length: Math.ceil(last / window) }, (_, i) => {
      const from = i * window + 1;
      const to = from + window - 1;
      return { check, from, to, sql: assertReadOnly(windowedSql(check, from, to)) };
    });
  });
}

/** A command line as it would be typed in a POSIX shell. */
export const shellLine = (args) => args.map((a) => (/^[\w./:=@-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(' ');
