// A D1 binding that fails the way production D1 sometimes does, for tests of how the worker settles a write whose
// outcome it could not see. Everything else passes through to the real local D1.

export type BatchFault = 'lost-after-commit' | 'lost-before-run' | 'overloaded-before-run';

/**
 * `db` whose next `batch` (one D1 batch: a write, for the admin and webhook routes, which authenticate without one)
 * fails once: `lost-after-commit` runs it, then throws D1's "Network connection lost" (the worker cannot tell it
 * committed); `lost-before-run` throws the same without running it; `overloaded-before-run` throws "D1 DB is
 * overloaded" without running it. Sessions share the one fault.
 */
export function faultyD1(db: D1Database, fault: BatchFault) {
  let armed = true;
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(inner, property) {
        if (property === 'withSession') return (constraint?: string) => wrap((inner as unknown as D1Database).withSession(constraint as D1SessionConstraint));
        if (property === 'batch') {
          return async (statements: D1PreparedStatement[]) => {
            if (!armed) return (inner as unknown as D1Database).batch(statements);
            armed = false;
            if (fault === 'overloaded-before-run') throw new Error('D1_ERROR: D1 DB is overloaded. Too many requests queued.');
            if (fault === 'lost-after-commit') await (inner as unknown as D1Database).batch(statements);
            throw new Error('D1_ERROR: Network connection lost.');
          };
        }
        const value = Reflect.get(inner, property);
        return typeof value === 'function' ? value.bind(inner) : value;
      },
    });
  return { db: wrap(db), fired: () => !armed };
}
