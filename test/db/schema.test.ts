import { env } from 'cloudflare:test';
import { is } from 'drizzle-orm';
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema';

// The drizzle schema (used by queries) and migrations/*.sql (what D1 really has) must agree column for column.

const tables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter((value): value is SQLiteTable => is(value, SQLiteTable));

describe('drizzle schema matches the migrated database', () => {
  // A name added to a TypeScript list needs its migration INSERT (migrations/0021_named_lists.sql), and back.
  for (const [table, column, names] of [
    ['audit_actions', 'action', schema.AUDIT_ACTIONS],
    ['event_types', 'type', schema.EVENT_TYPES],
    ['email_templates', 'template', schema.EMAIL_TEMPLATES],
  ] as const) {
    it(`${table} lists exactly the names of the code`, async () => {
      const { results } = await env.DB.prepare(`SELECT ${column} AS name FROM ${table} ORDER BY 1`).all<{ name: string }>();
      expect(results.map((r) => r.name)).toEqual([...names].sort());
    });
  }

  // The kept counts (migrations/0030_counts_kept.sql) live in triggers, which drizzle does not describe: a later
  // migration that rebuilds orders, wallet_transactions or deposits drops them unless it creates them again.
  it('has the triggers that keep the counts', async () => {
    const { results } = await env.DB.prepare("SELECT tbl_name AS tableName, name FROM sqlite_master WHERE type = 'trigger' ORDER BY 1, 2").all();
    expect(results).toEqual([
      { tableName: 'deposits', name: 'deposits_counted' },
      { tableName: 'deposits', name: 'deposits_uncounted' },
      { tableName: 'orders', name: 'orders_counted' },
      { tableName: 'orders', name: 'orders_spend_counted' },
      { tableName: 'orders', name: 'orders_spend_moved' },
      { tableName: 'orders', name: 'orders_status_counted' },
      { tableName: 'orders', name: 'orders_uncounted' },
      { tableName: 'wallet_transactions', name: 'wallet_transactions_counted' },
      { tableName: 'wallet_transactions', name: 'wallet_transactions_uncounted' },
    ]);
  });

  it('covers every table of the migrations', async () => {
    const { results } = await env.DB.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'd1_%' AND name NOT LIKE '_cf_%'",
    ).all<{ name: string }>();
    expect(tables.map((t) => getTableConfig(t).name).sort()).toEqual(results.map((r) => r.name).sort());
  });

  for (const table of tables) {
    const config = getTableConfig(table);
    it(`${config.name}: columns, types, nullability, primary key and indexes`, async () => {
      const { results: columns } = await env.DB.prepare(`PRAGMA table_info(${config.name})`).all<{
        name: string;
        type: string;
        notnull: number;
        pk: number;
      }>();
      const actual = columns.map((c) => ({ name: c.name, type: c.type.toLowerCase(), notNull: c.notnull === 1 || c.pk === 1, pk: c.pk === 1 }));
      const declared = config.columns.map((c) => ({ name: c.name, type: c.getSQLType().toLowerCase(), notNull: c.notNull, pk: c.primary }));
      expect(declared).toEqual(actual);

      const { results: indexes } = await env.DB.prepare(`PRAGMA index_list(${config.name})`).all<{ name: string; unique: number; origin: string }>();
      const actualIndexes = indexes
        .filter((i) => i.origin === 'c')
        .map((i) => ({ name: i.name, unique: i.unique === 1 }))
        .sort((a, b) => a.name.localeCompare(b.name));
      const declaredIndexes = config.indexes
        .map((i) => ({ name: i.config.name, unique: i.config.unique }))
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(declaredIndexes).toEqual(actualIndexes);
    });
  }
});
