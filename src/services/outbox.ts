import { sql } from 'drizzle-orm';
import { rowsOf, toStatement } from '../db/batch';
import type { Db } from '../db/client';
import { writeBatch } from '../db/d1';
import { isoNow } from '../lib/time';
import type { DeliveryMessage } from './webhook-delivery';

// From the outbox to the delivery queue. A committed event is enqueued right after the request that wrote it (off the
// latency path) or by the scheduled sweep when that enqueue was lost; `enqueued_at` says which events are done.

/** Queues take at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;
/** The sweep leaves younger events to the request that wrote them, which is enqueueing them right now. */
const SWEEP_GRACE_MS = 60_000;

/**
 * One message per event and endpoint subscribed to its type (registered before the event happened), then the events
 * are marked enqueued. Ids of events that do not exist (a batch that did not commit) or were already enqueued are
 * skipped. A crash between the send and the mark makes the sweep send again: delivery is at least once.
 */
export async function enqueueEvents(d1: Db, queue: Queue<DeliveryMessage> | undefined, eventIds: string[]): Promise<void> {
  // Without a queue binding the events simply stay in the outbox.
  if (!queue || eventIds.length === 0) return;
  const ids = JSON.stringify(eventIds);
  const pending = sql`e.id IN (SELECT value FROM json_each(${ids})) AND e.enqueued_at IS NULL`;
  const targets = rowsOf<DeliveryMessage>(
    await toStatement(
      d1,
      sql`SELECT e.id AS event_id, w.id AS endpoint_id
          FROM events e JOIN webhook_endpoints w ON w.user_id = e.user_id AND w.deleted_at IS NULL AND w.created_at <= e.created_at
          WHERE ${pending} AND EXISTS (SELECT 1 FROM json_each(w.events) WHERE value IN ('*', e.type))`,
    ).all(),
  );
  for (let i = 0; i < targets.length; i += SEND_BATCH_LIMIT) {
    await queue.sendBatch(targets.slice(i, i + SEND_BATCH_LIMIT).map((body) => ({ body })));
  }
  // Marking is idempotent: a re-run after a fault changes nothing more.
  await writeBatch(d1, {
    writes: [sql`UPDATE events AS e SET enqueued_at = ${isoNow()} WHERE ${pending}`],
    reads: [sql`SELECT count(*) AS remaining FROM events e WHERE ${pending}`],
    committed: ([result]) => rowsOf<{ remaining: number }>(result)[0].remaining === 0,
  });
}

/** Scheduled job: events whose enqueue was lost (the request died after its batch committed) are enqueued now. */
export async function sweepOutbox(d1: Db, queue: Queue<DeliveryMessage> | undefined, nowMs: number, limit: number): Promise<number> {
  if (!queue) return 0;
  const ids = rowsOf<{ id: string }>(
    await d1
      .prepare('SELECT id FROM events WHERE enqueued_at IS NULL AND created_at <= ? ORDER BY created_at LIMIT ?')
      .bind(isoNow(nowMs - SWEEP_GRACE_MS), limit)
      .all(),
  ).map((row) => row.id);
  await enqueueEvents(d1, queue, ids);
  return ids.length;
}
