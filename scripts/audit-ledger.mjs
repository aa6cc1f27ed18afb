// `npm run audit:ledger [-- options]`: checks the money invariants (src/services/operator/ledger-audit.ts) and exits 1, printing the
// offending rows, on any violation.
//   --local            (default) the local D1 database that `npm run dev` uses (or DEV_STATE_DIR's)
//   --remote           the deployed database, with read-only statements through `wrangler d1 execute --remote --json`
//                      (needs `wrangler login` or CLOUDFLARE_API_TOKEN); one statement per check, or per window
//   --database NAME    the D1 binding or database name for --remote (default: DB, from wrangler.toml)
//   --window N         run each check over consecutive windows of N ids of its key (users, orders...): the bounded
//                      form, each statement reading only its window (D1 stops a statement after 30 s)
//   --check TEXT       only the checks whose name contains TEXT
//   --dry-run          print what would be sent (for --remote, the exact wrangler commands) and send nothing
import { parseArgs } from 'node:util';
import { AUDIT_CHECKS } from '../src/services/operator/ledger-audit.ts';
import { assertReadOnly, auditStatements, maxIdsSql, parseQueryOutput, remoteQueryArgs, shellLine } from './audit-queries.mjs';
import { assertNodeVersion, wrangler } from './wrangler.mjs';

const { values: opts } = parseArgs({
  options: {
    local: { type: 'boolean', default: false },
    remote: { type: 'boolean', default: false },
    database: { type: 'string', default: 'DB' },
    window: { type: 'string' },
    check: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
});

function usage(message) {
  console.error(`audit:ledger: ${message}`);
  process.exit(2);
}
if (opts.local && opts.remote) usage('--local and --remote exclude each other.');
const window = opts.window === undefined ? undefined : Number(opts.window);
if (window !== undefined && !(Number.isSafeInteger(window) && window > 0)) usage('--window takes a positive integer.');
const checks = AUDIT_CHECKS.filter((c) => !opts.check || c.name.includes(opts.check));
if (checks.length === 0) usage(`no check's name contains "${opts.check}".`);

/** Runs one read-only statement: `{ rows, rowsRead, durationMs }`. */
async function localRunner() {
  const { getPlatformProxy } = await import('wrangler');
  const persist = process.env.DEV_STATE_DIR ? { path: `${process.env.DEV_STATE_DIR}/v3` } : true;
  const { env, dispose } = await getPlatformProxy({ configPath: 'wrangler.toml', persist });
  const run = async (sql) => {
    const { results, meta } = await env.DB.prepare(assertReadOnly(sql)).all();
    return { rows: results, rowsRead: meta.rows_read ?? null, durationMs: meta.duration ?? null };
  };
  return { run, dispose };
}

function remoteRunner(database) {
  assertNodeVersion();
  return { run: async (sql) => parseQueryOutput(wrangler(remoteQueryArgs(database, sql), { capture: true })), dispose: async () => {} };
}

if (opts['dry-run']) {
  const maxIds = Object.fromEntries(checks.map((c) => [c.key?.table, window ?? 1]));
  const statements = auditStatements(checks, { window, maxIds });
  if (window) console.log(`# first, the largest ids (windows run up to them):\n${show(maxIdsSql(checks))}\n# then one statement per window; the first window of each check:`);
  for (const { check, sql } of statements) console.log(`# ${check.name}\n${show(sql)}`);
  process.exit(0);
}

function show(sql) {
  return opts.remote ? shellLine(['npx', 'wrangler', ...remoteQueryArgs(opts.database, sql)]) : assertReadOnly(sql);
}

const runner = opts.remote ? remoteRunner(opts.database) : await localRunner();
try {
  const maxIds = window ? (await runner.run(maxIdsSql(checks))).rows[0] : {};
  const statements = auditStatements(checks, { window, maxIds });
  let failedChecks = 0;
  for (const check of checks) {
    const violations = [];
    const own = statements.filter((s) => s.check === check);
    let rowsRead = 0;
    let durationMs = 0;
    let mostRead = 0;
    for (const statement of own) {
      const result = await runner.run(statement.sql);
      violations.push(...result.rows);
      rowsRead += result.rowsRead ?? 0;
      durationMs += result.durationMs ?? 0;
      mostRead = Math.max(mostRead, result.rowsRead ?? 0);
    }
    failedChecks += violations.length > 0 ? 1 : 0;
    const windows = own.length > 1 ? `; ${own.length} windows, at most ${mostRead.toLocaleString('en-US')} rows read by one` : '';
    const cost = `${rowsRead.toLocaleString('en-US')} rows read, ${Math.round(durationMs)} ms${windows}`;
    console.log(`${violations.length ? 'FAIL' : 'ok  '}  ${check.name} (${violations.length ? `${violations.length} rows, ` : ''}${cost})`);
    if (violations.length) console.log(JSON.stringify(violations.slice(0, 20), null, 2));
  }
  console.log(failedChecks === 0 ? 'Ledger consistent.' : `${failedChecks} check(s) failed.`);
  process.exitCode = failedChecks === 0 ? 0 : 1;
} finally {
  await runner.dispose();
}
