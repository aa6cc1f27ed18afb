import { applyD1Migrations, env } from 'cloudflare:test';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { network } from './network';

// Each test file starts on databases of its own, so each migrates them. `applyD1Migrations` sends one batch per
// migration and records each (a second per database on a loaded machine, in every file); an empty database gets the
// same statements and records in ONE batch instead (a third of the time). A database that has a migration record
// already is left to applyD1Migrations, which applies only what it lacks.
async function migrate(db: D1Database) {
  const migrated = await db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'").first();
  if (migrated) return applyD1Migrations(db, env.TEST_MIGRATIONS);
  await db.batch([
    // The table applyD1Migrations keeps (wrangler's own schema), so both ways leave the same database.
    db.prepare('CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)'),
    ...env.TEST_MIGRATIONS.flatMap((migration) => [
      ...migration.queries.map((query) => db.prepare(query)),
      db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(migration.name),
    ]),
  ]);
}

await migrate(env.DB);
// The test-mode database (wrangler.toml's SANDBOX_DB), migrated alike.
if (env.SANDBOX_DB) await migrate(env.SANDBOX_DB);

beforeAll(() => network.listen({ onUnhandledRequest: 'error' }));
afterEach(() => network.resetHandlers());
afterAll(() => network.close());
