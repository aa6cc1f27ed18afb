// `npm run audit:ledger`: checks the money invariants (src/services/audit.ts) against the local D1 database that
// `npm run dev` uses (or DEV_STATE_DIR). Exits 1 and prints the offending rows when any check fails.
import { getPlatformProxy } from 'wrangler';
import { AUDIT_CHECKS, auditLedger } from '../src/services/audit.ts';

const persist = process.env.DEV_STATE_DIR ? { path: `${process.env.DEV_STATE_DIR}/v3` } : true;
const { env, dispose } = await getPlatformProxy({ configPath: 'wrangler.toml', persist });
try {
  const violations = await auditLedger(env.DB);
  for (const check of AUDIT_CHECKS) {
    const failed = violations.find((v) => v.check === check.name);
    console.log(`${failed ? 'FAIL' : 'ok  '}  ${check.name}${failed ? ` (${failed.rows.length} rows)` : ''}`);
    if (failed) console.log(JSON.stringify(failed.rows.slice(0, 20), null, 2));
  }
  console.log(violations.length === 0 ? 'Ledger consistent.' : `${violations.length} check(s) failed.`);
  process.exitCode = violations.length === 0 ? 0 : 1;
} finally {
  await dispose();
}
