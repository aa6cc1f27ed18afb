import { sql, type SQL } from 'drizzle-orm';
import { columnsOf, rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { gatewayEvents, type GatewayEventRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { pageWindow, type Page } from '../../lib/pagination';
import { isoNow } from '../../lib/time';
import type { GatewayName } from './gateways';

// The inbound gateway event log: every verified webhook as received, so the operator can reconcile what the
// gateways said with what the wallet did, including payments that arrived with the wrong amount.

/** What a log row says a gateway reported: its own status word, the USD amount it reported (if any), its id. */
export interface ReportedEvent {
  depositId: number;
  status: string;
  amountCents: number | null;
  transactionId: string;
}

/** A verified webhook about to be applied, with the reference its log row will carry (generated before the batch). */
export interface ReceivedEvent {
  reference: string;
  gateway: GatewayName;
  event: ReportedEvent;
  receivedAt: string;
  source: GatewayEventRow['source'];
}

/** Outcomes a log row may record (see the contract's gateway event log). */
export type GatewayOutcome = GatewayEventRow['outcome'];

export const receiveEvent = (gateway: GatewayName, event: ReportedEvent, source: ReceivedEvent['source']): ReceivedEvent => ({
  reference: `gwe_${randomBase62(24)}`,
  gateway,
  event,
  receivedAt: isoNow(),
  source,
});

/**
 * The log row of a received event, for the batch of its effect. `outcome` is SQL evaluated in that batch
 * (`credited`, `closed`, `duplicate` or `amount_mismatch`), so it says what the batch really did.
 */
export function logEvent({ reference, gateway, event, receivedAt, source }: ReceivedEvent, outcome: SQL, onlyIf: SQL = sql`1`): SQL {
  return sql`
    INSERT INTO gateway_events (reference, gateway, deposit_id, status, amount_cents, transaction_id, outcome, received_at, source)
    SELECT ${reference}, ${gateway}, ${event.depositId}, ${event.status}, ${event.amountCents}, ${event.transactionId}, ${outcome},
           ${receivedAt}, ${source}
    WHERE ${onlyIf}`;
}

/** The log row of a received event, once its batch committed: how a fault that hid the outcome is settled. */
export const loggedEvent = ({ reference }: ReceivedEvent) => sql`SELECT outcome FROM gateway_events WHERE reference = ${reference}`;

/**
 * An event that changes no deposit, only put on record (a payment with the wrong amount, progress, money taken back,
 * an unconfirmed payment), with `also`: bookkeeping written in the same batch. `once`: not again when the deposit's
 * log already has this status and outcome from the same source (a lookup repeated by every poll).
 */
export async function logOnly(d1: Db, received: ReceivedEvent, outcome: GatewayOutcome, { also = [], once = false }: { also?: SQL[]; once?: boolean } = {}) {
  const { event, source } = received;
  const fresh = sql`NOT EXISTS (SELECT 1 FROM gateway_events WHERE deposit_id = ${event.depositId} AND status = ${event.status}
                                AND outcome = ${outcome} AND source = ${source})`;
  await writeBatch(d1, {
    writes: [logEvent(received, sql`${outcome}`, once ? fresh : undefined), ...also],
    reads: [loggedEvent(received)],
    // Committed when the row is there, or (`once`) when nothing was to be written.
    committed: ([row]) => once || rowsOf(row).length > 0,
  });
}

export interface GatewayEventFilters {
  gateway?: GatewayName;
  depositId?: number;
}

/** The log, newest first, optionally for one gateway and/or one deposit. */
export async function listGatewayEvents(d1: Db, filters: GatewayEventFilters, page: Page) {
  const { limit, offset } = pageWindow(page);
  const conditions = [
    ...(filters.gateway === undefined ? [] : [sql`gateway = ${filters.gateway}`]),
    ...(filters.depositId === undefined ? [] : [sql`deposit_id = ${filters.depositId}`]),
  ];
  const where = conditions.length === 0 ? sql`` : sql`WHERE ${sql.join(conditions, sql` AND `)}`;
  const [rows, total] = await runBatch(d1, [
    sql`SELECT ${columnsOf(gatewayEvents)} FROM gateway_events ${where} ORDER BY received_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM gateway_events ${where}`,
  ]);
  return { rows: rowsOf<GatewayEventRow>(rows), total: rowsOf<{ total: number }>(total)[0].total };
}
