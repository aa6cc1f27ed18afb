// Types of scripts/audit-queries.mjs, for the worker tests that import it (test/operator/audit-queries.test.ts).
import type { AuditCheck } from '../src/services/operator/ledger-audit';

export function assertReadOnly(sql: string): string;
export function remoteQueryArgs(database: string, sql: string): string[];
export function parseQueryOutput(stdout: string): { rows: Record<string, unknown>[]; rowsRead: number | null; durationMs: number | null };
export function maxIdsSql(checks: AuditCheck[]): string;
export interface AuditStatement {
  check: AuditCheck;
  from?: number;
  to?: number;
  sql: string;
}
export function auditStatements(checks: AuditCheck[], options?: { window?: number; maxIds?: Record<string, number> }): AuditStatement[];
export function shellLine(args: string[]): string;
