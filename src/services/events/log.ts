import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { columnsOf, rowJson, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { events, webhookDeliveries, type DeliveryRow, type EventRow, type EventType } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { notFound } from '../../lib/errors';
import { pageWindow, type Page } from '../../lib/pagination';
import { readAs, type Caller } from '../caller';

// The event log is a transactional outbox: every change that users are told about writes its event in its own
// batch, with the statements below. Delivery (src/services/events/outbox.ts, src/services/events/delivery.ts) reads it.

export const EVENT_RETENTION_DAYS = 30;
export const EVENT_ID_SHAPE = /^evt_[0-9A-Za-z]{24}$/;

export const newEventId = () => `evt_${randomBase62(24)}`;

/** Hands the ids of committed events to delivery; routes give one that enqueues after the response. */
export type Publish = (eventIds: string[]) => void;

export interface NewEvent {
  /** Generated before the batch, so the batch's reads (and a settle after a fault) find the event by it. */
  id: string;
  type: EventType;
  now: string;
}

export const newEvent = (type: EventType, now: string): NewEvent => ({ id: newEventId(), type, now });

const tableOf = (table: SQLiteTable) => sql.identifier(getTableConfig(table).name);

/**
 * Whether endpoint `w` (an alias of webhook_endpoints) is subscribed to events of `type` (SQL). `"*"` means every
 * event about the user's own account; the shop-wide catalogue events (`product.*`) only go where named.
 */
export const subscribed = (type: SQL) =>
  sql`EXISTS (SELECT 1 FROM json_each(w.events) WHERE value = ${type} OR (value = '*' AND ${type} NOT LIKE 'product.%'))`;

/**
 * An event enters the outbox (`enqueued_at` NULL) only when its user has an endpoint subscribed to it; any other
 * event is written as already enqueued (nothing to deliver), so users without endpoints cost no delivery work.
 */
const outboxState = (userId: SQL, type: EventType, now: string) => sql`
  CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.user_id = ${userId} AND w.deleted_at IS NULL AND ${subscribed(sql`${type}`)})
  THEN NULL ELSE ${now} END`;

/**
 * The condition of the partial index `events_once_per_object` (type, object_id), spelled as the index spells it: SQLite
 * uses a partial index only for a query that repeats its WHERE term (a bound type is not known to be no `product.*`
 * one), and without the index the check below reads every event ever written, in every purchase's batch. Events that
 * happen once per object are what `recordEvent` writes; the catalogue's `product.*` events have their own statement.
 */
const ONCE_PER_OBJECT = sql.raw(`e.type NOT LIKE 'product.%'`);

/**
 * The statement that writes one event in the batch of the change it reports. The row of `table` matching `where`
 * (written against the table's own columns) becomes the event's snapshot as it is at this point of the batch, so the
 * statement goes after the change. Nothing is written when `where` matches nothing (the change did not happen) or
 * when this change of this row was already reported.
 */
export function recordEvent(event: NewEvent, table: SQLiteTable, where: SQL): SQL {
  const name = tableOf(table);
  return sql`
    INSERT INTO events (id, user_id, type, object_id, snapshot, created_at, enqueued_at)
    SELECT ${event.id}, user_id, ${event.type}, id, ${rowJson(table)}, ${event.now}, ${outboxState(sql`${name}.user_id`, event.type, event.now)}
    FROM ${name}
    WHERE ${where} AND NOT EXISTS (SELECT 1 FROM events e WHERE e.type = ${event.type} AND e.object_id = ${name}.id AND ${ONCE_PER_OBJECT})`;
}

/**
 * An event that may happen many times to one object (`order.refunded`: every partial refund), so it is keyed on the
 * row that records this occurrence (`object_id` is that row's id, unique per type) rather than on the object. `from`
 * (`FROM ... WHERE ...`, at most one row) selects it; `userId` and `snapshot` are expressions over that row.
 */
export function recordOccurrenceEvent(event: NewEvent, occurrence: { from: SQL; objectId: SQL; userId: SQL; snapshot: SQL }): SQL {
  return sql`
    INSERT INTO events (id, user_id, type, object_id, snapshot, created_at, enqueued_at)
    SELECT ${event.id}, ${occurrence.userId}, ${event.type}, ${occurrence.objectId}, ${occurrence.snapshot}, ${event.now},
           ${outboxState(occurrence.userId, event.type, event.now)}
    ${occurrence.from}`;
}

export interface RowsChange<T extends SQLiteTable> {
  type: EventType;
  table: T;
  /** Selects whole rows (`SELECT *`) of the rows to change, at most `limit` of them. */
  candidates: SQL;
  /** The new values, by the table's field names: the UPDATE's SET and the snapshots come from this one map. */
  set: Partial<T['$inferSelect']>;
  limit: number;
  now: string;
}

/**
 * A set-based change (a scheduled job) with one event per row, in one batch of three statements: an event for each
 * candidate row (ids from a pool generated before the batch, the snapshot the row as `set` leaves it), the change of
 * exactly the rows so claimed, and a read of how many there were. Returns that count.
 */
export async function changeRowsWithEvents<T extends SQLiteTable>(d1: Db, { type, table, candidates, set, limit, now }: RowsChange<T>): Promise<number> {
  const pool = JSON.stringify(Array.from({ length: limit }, newEventId));
  const inPool = sql`id IN (SELECT value FROM json_each(${pool}))`;
  const columns = getTableColumns(table);
  const changes = Object.entries(set).map(([field, value]) => ({ field, column: sql.identifier(columns[field].name), value }));
  const snapshot = sql`json_set(${rowJson(table, 'c')}, ${sql.join(changes.map((c) => sql`${`$.${c.field}`}, ${c.value}`), sql`, `)})`;
  const { reads } = await writeBatch(d1, {
    writes: [
      // Both sides materialized, so the join on the pool index is indexed (a plain join of the two scans n²).
      sql`WITH c AS MATERIALIZED (SELECT *, row_number() OVER () - 1 AS pool_index FROM (SELECT * FROM (${candidates}) LIMIT ${limit})),
               p AS MATERIALIZED (SELECT key, value FROM json_each(${pool}))
          INSERT INTO events (id, user_id, type, object_id, snapshot, created_at, enqueued_at)
          SELECT p.value, c.user_id, ${type}, c.id, ${snapshot}, ${now}, ${outboxState(sql`c.user_id`, type, now)}
          FROM c JOIN p ON p.key = c.pool_index`,
      sql`UPDATE ${tableOf(table)} SET ${sql.join(changes.map((c) => sql`${c.column} = ${c.value}`), sql`, `)}
          WHERE id IN (SELECT object_id FROM events WHERE ${inPool})`,
    ],
    reads: [sql`SELECT count(*) AS changed FROM events WHERE ${inPool}`],
    committed: ([result]) => rowsOf<{ changed: number }>(result)[0].changed > 0,
  });
  return rowsOf<{ changed: number }>(reads[0])[0].changed;
}

export const eventIdsOf = (result: D1Result | undefined) => rowsOf<{ id: string }>(result).map((row) => row.id);

/**
 * A read for the end of an event's batch: the event's id when it is in the outbox (its user has a subscribed
 * endpoint), so the request publishes only what has somewhere to go and most requests make no call after their batch.
 */
export const inOutbox = (event: NewEvent) => sql`SELECT id FROM events WHERE id = ${event.id} AND enqueued_at IS NULL`;

const retentionCutoff = (nowMs = Date.now()) => new Date(nowMs - EVENT_RETENTION_DAYS * 86_400_000).toISOString();

export async function listEvents(d1: Db, caller: Caller, page: Page, type?: EventType) {
  const { limit, offset } = pageWindow(page);
  const mine = sql`user_id = ${caller.userId} AND created_at > ${retentionCutoff()}${type ? sql` AND type = ${type}` : sql``}`;
  const [rows, total] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(events)} FROM events WHERE ${mine} ORDER BY created_at DESC, seq DESC LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM events WHERE ${mine}`,
  ]);
  return { rows: rowsOf<EventRow>(rows), total: rowsOf<{ total: number }>(total)[0].total };
}

export async function getEvent(d1: Db, caller: Caller, eventId: string): Promise<{ event: EventRow; deliveries: DeliveryRow[] }> {
  const mine = sql`id = ${eventId} AND user_id = ${caller.userId} AND created_at > ${retentionCutoff()}`;
  const [found, deliveries] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(events)} FROM events WHERE ${mine}`,
    sql`SELECT ${columnsOf(webhookDeliveries)} FROM webhook_deliveries
        WHERE event_id = (SELECT id FROM events WHERE ${mine}) ORDER BY at DESC, id DESC`,
  ]);
  const [event] = rowsOf<EventRow>(found);
  if (!event) throw notFound('Event');
  return { event, deliveries: rowsOf<DeliveryRow>(deliveries) };
}

/** Scheduled job: events older than the retention period go, with their delivery attempts (ON DELETE CASCADE). */
export async function deleteExpiredEvents(d1: Db, nowMs: number, limit: number): Promise<number> {
  const result = await d1
    .prepare('DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE created_at <= ? ORDER BY created_at LIMIT ?)')
    .bind(retentionCutoff(nowMs), limit)
    .run();
  return result.meta.changes;
}
