import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import { SQLiteAsyncDialect, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from './client';

// Guarded multi-statement writes are raw SQL run as one D1 batch (one transaction). drizzle's own batch cannot bind
// parameters of raw `sql` statements, so this helper compiles drizzle SQL itself and hands D1 the statements.

const dialect = new SQLiteAsyncDialect();

export const toStatement = (d1: Db, query: SQL) => {
  const { sql: text, params } = dialect.sqlToQuery(query);
  return d1.prepare(text).bind(...params);
};

/** Run statements as one atomic D1 batch; a failing statement rolls back all of them. */
export function runBatch(d1: Db, statements: SQL[]): Promise<D1Result[]> {
  return d1.batch(statements.map((statement) => toStatement(d1, statement)));
}

/** `col AS "camelKey", ...` for a table, so raw reads come back in the shape of the drizzle row type. */
export function columnsOf(table: SQLiteTable): SQL {
  return sql.join(
    Object.entries(getTableColumns(table)).map(([key, column]) => sql`${sql.identifier(column.name)} AS ${sql.identifier(key)}`),
    sql`, `,
  );
}

export const rowsOf = <T>(result: D1Result | undefined) => (result?.results ?? []) as T[];

export const changesOf = (result: D1Result | undefined) => result?.meta.changes ?? 0;

/**
 * `json_object('camelKey', col, ...)` of a table's row: a snapshot of the row, stored as text, that parses back into
 * the drizzle row type (integers and text survive JSON unchanged).
 */
export function rowJson(table: SQLiteTable, alias?: string): SQL {
  const prefix = alias ? sql`${sql.identifier(alias)}.` : sql``;
  return sql`json_object(${sql.join(
    Object.entries(getTableColumns(table)).map(([key, column]) => sql`${sql.raw(`'${key}'`)}, ${prefix}${sql.identifier(column.name)}`),
    sql`, `,
  )})`;
}
