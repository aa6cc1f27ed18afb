import { getTableName, sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';
import { writeOutcomeAs, type Caller } from '../caller';

/**
 * Ends one of the caller's live rows once, by setting its `ended` column (a revoked API key, a deleted webhook
 * endpoint). The UPDATE's own change count (`changes()`, read right after it in the batch) says whether this very
 * request ended it: two requests in the same millisecond share a timestamp. Only when a fault hid the outcome does the
 * time, generated here, settle it. False when the caller has no such live row (unknown, another user's, or ended).
 */
export async function endOwnedRow(d1: Db, caller: Caller, table: SQLiteTable, ended: SQLiteColumn, id: number): Promise<boolean> {
  const now = isoNow();
  const name = sql.identifier(getTableName(table));
  const column = sql.identifier(ended.name);
  const {
    reads: [changed, row],
    settled,
  } = await writeOutcomeAs(d1, caller, {
    writes: [sql`UPDATE ${name} SET ${column} = ${now} WHERE id = ${id} AND user_id = ${caller.userId} AND ${column} IS NULL`],
    reads: [sql`SELECT changes() AS changed`, sql`SELECT id FROM ${name} WHERE id = ${id} AND ${column} = ${now}`],
    committed: ([, result]) => rowsOf(result).length > 0,
  });
  return settled ? rowsOf(row).length > 0 : rowsOf<{ changed: number }>(changed)[0].changed > 0;
}
