import { sql } from 'drizzle-orm';
import { runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import type { VendorFailure } from './gateways/vendor-http';

// The last failed call to each slot's vendor, for the console's payments page. A request writes it after the
// response that met the failure (runAfterResponse), so a failing deposit or lookup pays no extra round trip; the
// scheduled poll writes its failures in its closing batch. A newer failure wins.

/** The statement that keeps `failure` as its slot's last, unless a newer one is kept already. */
export const vendorFailureWrite = ({ gateway, provider, purpose, failure, at }: VendorFailure) =>
  sql`INSERT INTO vendor_failures (gateway, provider, purpose, failure, at) VALUES (${gateway}, ${provider}, ${purpose}, ${failure}, ${at})
      ON CONFLICT (gateway) DO UPDATE SET provider = excluded.provider, purpose = excluded.purpose, failure = excluded.failure, at = excluded.at
      WHERE excluded.at >= vendor_failures.at`;

export const recordVendorFailure = (d1: Db, failure: VendorFailure) => runBatch(d1, [vendorFailureWrite(failure)]);
