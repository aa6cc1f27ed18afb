import { sql } from 'drizzle-orm';
import { runBatch } from '../db/batch';
import type { Db } from '../db/client';
import type { VendorFailure } from './gateways/vendor-http';

// The last failed call to each slot's vendor, for the console's payments page. Written after the response that met
// the failure (runAfterResponse), so a failing deposit or lookup pays no extra round trip; a newer failure wins.

export const recordVendorFailure = (d1: Db, { gateway, provider, purpose, failure, at }: VendorFailure) =>
  runBatch(d1, [
    sql`INSERT INTO vendor_failures (gateway, provider, purpose, failure, at) VALUES (${gateway}, ${provider}, ${purpose}, ${failure}, ${at})
        ON CONFLICT (gateway) DO UPDATE SET provider = excluded.provider, purpose = excluded.purpose, failure = excluded.failure, at = excluded.at
        WHERE excluded.at >= vendor_failures.at`,
  ]);
