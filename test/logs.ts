import { expect, vi } from 'vitest';

// Logs a test provokes on purpose (a corrupted row's 500, a vendor that fails, a slot missing its secret) are the
// service working as it should, so a passing run does not print them:
//   - vitest.config.ts sets `silent: 'passed-only'`: whatever a passing test logs is dropped; a failing test's logs are
//     printed with its failure, where they help;
//   - a test that provokes a log ON PURPOSE says so and checks it, with the helpers below: the lines are captured (not
//     printed), parsed, and asserted. Nothing else is needed to add a test that logs.
//
//   const res = await expectLogged({ level: 'warn', msg: 'payment provider call failed' }, () => call('/wallet/deposit', ...));
//
//   const logs = captureLogs();              // when the test decides afterwards what it expects
//   try { ... } finally { logs.stop(); }
//   expect(logs.lines).toContainEqual(expect.objectContaining({ level: 'error' }));

/** One captured console line: the worker's JSON log line parsed, or `{ text }` for anything else. */
export type LogLine = Record<string, unknown>;

const parse = (args: unknown[]): LogLine => {
  const text = args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' ');
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as LogLine) : { text };
  } catch {
    return { text };
  }
};

/** Captures console.log / warn / error (the worker runs in the test's isolate) until `stop()`. */
export function captureLogs() {
  const lines: LogLine[] = [];
  const spies = (['log', 'warn', 'error'] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push(parse(args));
    }),
  );
  return { lines, stop: () => spies.forEach((spy) => spy.mockRestore()) };
}

/** Runs `run` with the console captured, then asserts that each expected line (a partial match) was logged. */
export async function expectLogged<T>(expected: LogLine | LogLine[], run: () => Promise<T>): Promise<T> {
  const logs = captureLogs();
  let result: T;
  try {
    result = await run();
  } finally {
    logs.stop();
  }
  for (const line of [expected].flat()) expect(logs.lines).toContainEqual(expect.objectContaining(line));
  return result;
}
