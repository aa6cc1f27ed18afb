import { rootMessage } from '../db/d1';

/** Work that must not delay the response (bookkeeping): handed to waitUntil, its failure logged without details. */
export function runAfterResponse(c: { executionCtx: { waitUntil(p: Promise<unknown>): void } }, work: Promise<unknown>) {
  const settled = work.catch((err) =>
    console.error(JSON.stringify({ level: 'error', msg: 'background task failed', error: errorSummary(err) })),
  );
  try {
    c.executionCtx.waitUntil(settled);
  } catch {
    // no execution context (app.request in unit tests): the promise still runs to completion
  }
}

/** What may be logged of an error: its class and D1's own message, never the SQL or its parameters. */
export function errorSummary(err: unknown): { class: string; message: string } {
  const name = err instanceof Error ? err.name : typeof err;
  return { class: name, message: redact(rootMessage(err)) };
}

// D1's messages name tables and constraints; drizzle's wrapper adds "Failed query: <sql> params: <values>".
const redact = (message: string) => message.replace(/Failed query:[\s\S]*/i, 'Failed query (SQL and parameters withheld)').slice(0, 300);
