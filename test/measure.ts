import { useInvocationOptions } from './contract';
import { call, type CallOptions } from './helpers';
import type { RoundTrip } from './production-d1';

// What one request costs D1, from the recording wrapper of test/production-d1.ts: its round trips before the response
// (waitUntil work after it, which no client waits for, apart) and the rows D1 says they read and wrote.

export interface Measured {
  status: number;
  json: any;
  trips: RoundTrip[];
  /** Trips that ended after the response: waitUntil work. */
  after: RoundTrip[];
  /** D1's `rows_read` / `rows_written` over the trips before the response. */
  rowsRead: number;
  rowsWritten: number;
}

export async function measure(path: string, options: CallOptions): Promise<Measured> {
  const trips: RoundTrip[] = [];
  const after: RoundTrip[] = [];
  let responded = false;
  const restore = useInvocationOptions(() => ({ record: (trip) => (responded ? after : trips).push(trip), responded: () => (responded = true) }));
  try {
    const res = await call(path, options);
    const sum = (field: 'rowsRead' | 'rowsWritten') => trips.reduce((n, trip) => n + (trip[field] ?? 0), 0);
    return { status: res.status, json: res.json, trips, after, rowsRead: sum('rowsRead'), rowsWritten: sum('rowsWritten') };
  } finally {
    restore();
  }
}
