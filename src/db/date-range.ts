import { sql, type SQL } from 'drizzle-orm';
import { timestampBounds, type DateRange } from '../lib/date-range';

/** The SQL conditions of a day range on an ISO timestamp column (none when the range is open). */
export function withinDays(column: SQL, range: DateRange): SQL[] {
  const { since, before } = timestampBounds(range);
  return [...(since === undefined ? [] : [sql`${column} >= ${since}`]), ...(before === undefined ? [] : [sql`${column} < ${before}`])];
}
