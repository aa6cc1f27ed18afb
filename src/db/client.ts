import { drizzle } from 'drizzle-orm/d1';
import * as schema from './schema';

/** The database or a D1 session over it (read replicas); both run statements and batches the same way. */
export type Db = D1Database | D1DatabaseSession;

// drizzle's D1 driver only calls prepare() and batch(), which a session has too.
export const getDb = (d1: Db) => drizzle(d1 as D1Database, { schema });

export type Database = ReturnType<typeof getDb>;
