import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, toStatement } from '../../db/batch';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';
import { subscribed } from './log';
import type { DeliveryMessage } from './delivery';

// From the outbox to the delivery queue. Only events with a subscribed endpoint enter the outbox (src/services/
// events.ts); each is enqueued right after the request that wrote it (off the latency path), or by the scheduled
// sweep: the events of the scheduled run itself, and those whose request died before enqueueing them.

/** Queues take at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;
/** The sweep leaves younger events to the request that wrote them, which is enqueueing them right now. */
const SWEEP_GRACE_MS = 60_000;

/**
 * Two statements: the pending events that `pending` selects (`id`, `user_id`, `type`, `created_at`) with their
 * subscribed endpoints (registered before the event), one message each, then the events marked enqueued (also those
 * whose endpoints were deleted since). A crash between the send and the mark makes the sweep send again: delivery is
 * at least once. Returns the number of events handled.
 */
async function enqueuePending(d1: Db, queue: Queue<DeliveryMessage>, pending: SQL, sandbox = false): Promise<number> {
  const rows = rowsOf<{ event_id: string; endpoint_id: number | null }>(
    await toStatement(
      d1,
      sql`SELECT e.id AS event_id, w.id AS endpoint_id FROM (${pending}) AS e
          LEFT JOIN webhook_endpoints w ON w.user_id = e.user_id AND w.deleted_at IS NULL AND w.created_at <= e.created_at AND ${subscribed(sql`e.type`)}`,
    ).all(),
  );
  if (rows.length === 0) return 0;
  const messages = rows.flatMap(({ event_id, endpoint_id }) => (endpoint_id === null ? [] : [{ body: { event_id, endpoint_id, ...(sandbox && { sandbox: true as const }) } }]));
  for (let i = 0; i < messages.length; i += SEND_BATCH_LIMIT) await queue.sendBatch(messages.slice(i, i + SEND_BATCH_LIMIT));
  const eventIds = [...new Set(rows.map((row) => row.event_id))];
  // Idempotent bookkeeping: a mark lost to a fault only means the sweep sends those events again.
  await d1
    .prepare('UPDATE events SET enqueued_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND enqueued_at IS NULL')
    .bind(isoNow(), JSON.stringify(eventIds))
    .run();
  return eventIds.length;
}

/**
 * After a request: its committed events, those still in the outbox. Without a queue binding they stay there.
 * `sandbox`: `d1` is the test-mode database, and each message says so.
 */
export async function enqueueEvents(d1: Db, queue: Queue<DeliveryMessage> | undefined, eventIds: string[], sandbox = false): Promise<void> {
  if (!queue || eventIds.length === 0) return;
  await enqueuePending(
    d1,
    queue,
    sql`SELECT id, user_id, type, created_at FROM events WHERE id IN (SELECT value FROM json_each(${JSON.stringify(eventIds)})) AND enqueued_at IS NULL`,
    sandbox,
  );
}

/**
 * Scheduled job: the outbox's events written by this run (`created_at` = its clock) and those older than a minute,
 * oldest first, at most `limit`. Returns how many were enqueued.
 */
export async function sweepOutbox(d1: Db, queue: Queue<DeliveryMessage> | undefined, nowMs: number, limit: number, sandbox = false): Promise<number> {
  if (!queue) return 0;
  return enqueuePending(
    d1,
    queue,
    sql`SELECT id, user_id, type, created_at FROM events
        WHERE enqueued_at IS NULL AND (created_at <= ${isoNow(nowMs - SWEEP_GRACE_MS)} OR created_at = ${isoNow(nowMs)})
        ORDER BY created_at LIMIT ${limit}`,
    sandbox,
  );
}
