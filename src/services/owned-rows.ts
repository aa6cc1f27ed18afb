import { getTableName, sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { rowsOf } from '../db/batch';
import type { Db } from '../db/client';
import { isoNow } from '../lib/time';
import { writeAs, type Caller } from './caller';

/**
 * Ends one of the caller's live rows once, by setting its `ended` column (a revoked API key, a deleted webhook
 * endpoint). The time, generated here, says whether this very request ended it. False when the caller has no such
 * live row (unknown, another user's, or already ended).
 */
export async function endOwnedRow(d1: Db, caller: Caller, table: SQLiteTable, ended: SQLiteColumn, id: number): Promise<boolean> {
  const now = isoNow();
  const name = sql.identifier(getTableName(table));
  const column = sql.identifier(ended.name);
  const [row] = await writeAs(d1, caller, {
    writes: [sql`UPDATE ${name} SET ${column} = ${now} WHERE id = ${id} AND user_id = ${caller.userId} AND ${column} IS NULL`],
    reads: [sql`SELECT id FROM ${name} WHERE id = ${id} AND ${column} = ${now}`],
    committed: ([result]) => rowsOf(result).length > 0,
  });
  return rowsOf(row).length > 0;
}
