import { sql, type SQL } from 'drizzle-orm';

// JSON built by SQLite (json_object / json_group_array) for responses passed through as text. It must be the bytes
// JSON.stringify writes for the same values: SQLite writes a whole-number REAL as `10.0` where JS writes `10`, and
// 0/1 integers where the API has booleans.

/** Integer cents as the contract's amount (`12.5`, `0.07`, `10`): an INTEGER when whole, else cents / 100.0. */
export const amountJson = (cents: SQL) => sql`CASE WHEN ${cents} % 100 = 0 THEN ${cents} / 100 ELSE ${cents} / 100.0 END`;

/** A condition as a JSON `true` / `false`. */
export const booleanJson = (condition: SQL) => sql`json(CASE WHEN ${condition} THEN 'true' ELSE 'false' END)`;
