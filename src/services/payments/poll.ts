import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { ResilientD1 } from '../../db/d1';
import { deposits, type DepositRow } from '../../db/schema';
import type { Config } from '../../env';
import { ApiError } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import { findGateway, GATEWAYS } from './gateways';
import { vendorFailureOf, type VendorFailure } from './gateways/vendor-http';
import { CHANGES, lookupGateway, lookUpDeposit, stampChecked } from './vendor-notifications';
import { vendorFailureWrite } from './vendor-failures';
import type { Mail } from '../mail/settings';

// The scheduled half of "Payments that cannot be lost": every run asks the vendors about real-provider deposits that
// are still open (pending, or expired less than 24 hours ago: money that arrives late still counts), those asked
// longest ago first, and applies each answer like a refresh. A vendor that is down is skipped and asked again on a
// later run; one vendor's fault never stops the others or fails the run.

/** What one answer may cost in D1 statements: a credit's batch (9) and one round of the reads that settle it (4). */
export const LOOKUP_STATEMENTS = 13;
/**
 * What a deposit that pays for an order adds to that: the purchase's statements in the credit's batch (11 writes, the
 * deposit's order columns, 2 reads) and those reads again when settling.
 */
export const ORDER_STATEMENTS = 16;
const lookupCost = (deposit: DepositRow) => LOOKUP_STATEMENTS + (deposit.orderProductId != null ? ORDER_STATEMENTS : 0);
/** A Worker invocation's subrequests are limited (50 on the Free plan): the poll never asks more vendors than this. */
export const MAX_POLL_LIMIT = 40;
const OPEN_AFTER_EXPIRY_MS = 24 * 3_600_000;
/** The closing batch: the stamp of every deposit asked, and each slot's last vendor failure of this run. */
const CLOSING_STATEMENTS = 1 + GATEWAYS.length;

export interface PollReport {
  asked: number;
  /** Answers that credited, closed or put a mismatch on record. */
  changed: number;
  /** Vendors that could not tell (down, slow, an answer about another deposit), and D1 faults: asked again later. */
  skipped: number;
  /** D1 statements the poll sent (what the scheduled run has left after it is its budget less these). */
  statements: number;
}

/**
 * The open real-provider deposits whose provider some slot is configured with now, asked longest ago first
 * (never asked first). Served by `deposits_vendor_open` (named, so the planner cannot prefer the wider status index):
 * a range of `expires_at` over open vendor deposits only, however many paid, generic or long-expired ones exist.
 */
export function pollCandidates(config: Config, nowMs: number, limit: number) {
  // A deposit is asked about through any slot now configured with the provider it was made with (lookupGateway).
  const configured = new Set(GATEWAYS.map((name) => findGateway(name, config)?.provider).filter((provider) => provider !== undefined && provider !== 'generic'));
  if (configured.size === 0) return null;
  const quiet = isoNow(nowMs - config.gatewayPollMinutes * 60_000);
  return sql`
    SELECT ${columnsOf(deposits)} FROM deposits INDEXED BY deposits_vendor_open
    WHERE provider <> 'generic' AND status IN ('pending', 'expired') AND expires_at > ${isoNow(nowMs - OPEN_AFTER_EXPIRY_MS)}
      AND created_at <= ${quiet} AND (last_checked_at IS NULL OR last_checked_at <= ${quiet})
      AND provider IN (${sql.join([...configured].map((provider) => sql`${provider}`), sql`, `)})
    ORDER BY last_checked_at, id
    LIMIT ${limit}`;
}

/**
 * One poll within `statementBudget` D1 statements (what the scheduled run has left of its invocation's limit): one
 * read, then a lookup while the budget still affords its worst case and the closing batch, then the closing batch:
 * one statement that stamps `last_checked_at` on every deposit asked, and the last vendor failure of each slot that
 * failed (the console's payments page shows it). Deposits left unasked keep their place at the front of the queue.
 */
export async function pollVendors(binding: Db, config: Config, nowMs: number, statementBudget: number, mail?: Mail): Promise<PollReport> {
  const report: PollReport = { asked: 0, changed: 0, skipped: 0, statements: 0 };
  const limit = Math.min(config.gatewayPollLimit, MAX_POLL_LIMIT);
  const query = pollCandidates(config, nowMs, limit);
  if (!query || limit === 0 || statementBudget < 1 + LOOKUP_STATEMENTS + CLOSING_STATEMENTS) return report;
  // Counts the statements the lookups' batches really send (retries and settling reads included).
  const d1 = new ResilientD1(binding) as unknown as Db;
  const spent = () => (d1 as unknown as ResilientD1).budget.used;
  const [found] = await runBatch(d1, [query]);
  const asked: number[] = [];
  const failures = new Map<string, VendorFailure>();
  for (const deposit of rowsOf<DepositRow>(found)) {
    if (spent() + lookupCost(deposit) + CLOSING_STATEMENTS > statementBudget) break;
    const gateway = lookupGateway(config, deposit);
    if (!gateway) continue;
    try {
      const { outcome } = await lookUpDeposit(d1, gateway, deposit, undefined, { mail });
      asked.push(deposit.id);
      if (CHANGES.has(outcome)) report.changed++;
    } catch (err) {
      report.skipped++;
      const failure = vendorFailureOf(err);
      if (failure) failures.set(failure.gateway, failure);
      // GATEWAY_UNAVAILABLE is already logged by the vendor call; anything else is named by its class only.
      if (!(err instanceof ApiError)) console.warn(JSON.stringify({ level: 'warn', msg: 'deposit poll skipped', deposit_id: deposit.id, class: err instanceof Error ? err.name : typeof err }));
    }
  }
  report.asked = asked.length;
  const closing = [...(asked.length > 0 ? [stampChecked(asked, isoNow(nowMs))] : []), ...[...failures.values()].map(vendorFailureWrite)];
  if (closing.length > 0) await runBatch(d1, closing);
  report.statements = spent();
  return report;
}
