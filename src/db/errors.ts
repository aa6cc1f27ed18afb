/**
 * Whether an error is SQLite's `kind` constraint failure on the given `table.column`. drizzle wraps the D1 error
 * ("Failed query: ...") and keeps the SQLite message in `cause`, so the whole chain is searched.
 */
function isConstraintFailure(err: unknown, kind: 'UNIQUE' | 'NOT NULL' | 'CHECK', tableColumn: string): boolean {
  for (let e = err, depth = 0; e != null && depth < 5; e = (e as Error).cause, depth++) {
    const message = String((e as Error)?.message ?? e);
    if (message.includes(`${kind} constraint failed`) && message.includes(tableColumn)) return true;
  }
  return false;
}

export const isUniqueViolation = (err: unknown, tableColumn: string) => isConstraintFailure(err, 'UNIQUE', tableColumn);

export const isNotNullViolation = (err: unknown, tableColumn: string) => isConstraintFailure(err, 'NOT NULL', tableColumn);

/** A CHECK failure names its expression, not its table: `column` is a word of that expression (`referred_by`). */
export const isCheckViolation = (err: unknown, column: string) => isConstraintFailure(err, 'CHECK', column);
