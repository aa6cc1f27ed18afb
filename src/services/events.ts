import { sql, type SQL } from 'drizzle-orm';
import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { columnsOf, rowJson, rowsOf } from '../db/batch';
import type { Db } from '../db/client';
import { events, webhookDeliveries, type DeliveryRow, type EventRow, type EventType } from '../db/schema';
import { randomBase62 } from '../lib/crypto';
import { notFound } from '../lib/errors';
import { pageWindow, type Page } from '../lib/pagination';
import { readAs, type Caller } from './caller';

// The event log is a transactional outbox: every change that users are told about writes its event in its own
// batch, with the statements below. Delivery (src/services/outbox.ts, src/services/webhook-delivery.ts) reads it.

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
 * The statement that writes one event in the batch of the change it reports. The row of `table` matching `where`
 * (written against the table's own columns) becomes the event's snapshot as it is at this point of the batch, so the
 * statement goes after the change. Nothing is written when `where` matches nothing (the change did not happen) or
 * when this change of this row was already reported.
 */
export function recordEvent(event: NewEvent, table: SQLiteTable, where: SQL): SQL {
  const name = tableOf(table);
  return sql`
    INSERT INTO events (id, user_id, type, object_id, snapshot, created_at)
    SELECT ${event.id}, user_id, ${event.type}, id, ${rowJson(table)}, ${event.now} FROM ${name}
    WHERE ${where} AND NOT EXISTS (SELECT 1 FROM events e WHERE e.type = ${event.type} AND e.object_id = ${name}.id)`;
}

/**
 * Events of a set-based change (a scheduled job), one per row, as three statements of the change's batch: `claim`
 * writes an event for each candidate row (ids from a pool generated before the batch), the change is keyed on
 * `objectIds` (the rows claimed), then `snapshot` stores each row as the change left it. `written` reads the ids.
 */
export function eventsForRows(type: EventType, table: SQLiteTable, size: number, now: string) {
  const pool = JSON.stringify(Array.from({ length: size }, newEventId));
  const inPool = sql`id IN (SELECT value FROM json_each(${pool}))`;
  const name = tableOf(table);
  return {
    /** `candidates` selects `id` and `user_id` of the rows to change, at most `size` of them. */
    claim: (candidates: SQL) => sql`
      INSERT INTO events (id, user_id, type, object_id, snapshot, created_at)
      SELECT json_extract(${pool}, '$[' || (row_number() OVER () - 1) || ']'), c.user_id, ${type}, c.id, '{}', ${now}
      FROM (SELECT * FROM (${candidates}) LIMIT ${size}) AS c`,
    objectIds: sql`SELECT object_id FROM events WHERE ${inPool}`,
    snapshot: sql`UPDATE events SET snapshot = (SELECT ${rowJson(table)} FROM ${name} WHERE ${name}.id = events.object_id) WHERE ${inPool}`,
    written: sql`SELECT id FROM events WHERE ${inPool}`,
  };
}

export const eventIdsOf = (result: D1Result | undefined) => rowsOf<{ id: string }>(result).map((row) => row.id);

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
