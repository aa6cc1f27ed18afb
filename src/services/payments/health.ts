import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Config } from '../../env';
import type { Query } from '../caller';
import { checkVendor } from './gateways/connection-check';
import { GATEWAYS, slotSettings, slotStatus, type GatewayName, type Slot, type VendorName } from './gateways/slots';
import type { VendorFailure } from './gateways/vendor-http';

// The payment providers as the operator watches them (GET /admin/gateways, the console's payments page): each slot's
// provider, whether it is available (or which setting it misses: names, never values), its last notification, its
// last lookup, its last vendor failure; and "Check connection" (POST /admin/gateways/{slot}/check).

export interface GatewayHealth {
  gateway: GatewayName;
  /** As configured (an unknown name shows as typed, cut to 40 characters). */
  provider: string;
  available: boolean;
  /** Why the slot is not available: the settings it misses, by name. */
  problem: string | null;
  lastNotification: { at: string; outcome: string } | null;
  /** The last time the vendor was asked about one of the slot's deposits (refresh or the scheduled job). */
  lastLookupAt: string | null;
  lastFailure: { at: string; purpose: string; failure: string } | null;
}

/**
 * One batch of small reads per slot, each on an index: the last notification through gateway_events_gateway_received;
 * the last lookup as the later of the last answer that changed something (a `lookup` event) and the latest
 * `last_checked_at` among the slot's open vendor deposits (the poll's set, deposits_vendor_open); the last failure by
 * its primary key.
 */
export const gatewaysQuery = (config: Config): Query<GatewayHealth[]> => ({
  reads: GATEWAYS.flatMap((gateway) => [
    sql`SELECT received_at AS at, outcome FROM gateway_events WHERE gateway = ${gateway} AND source = 'notification' ORDER BY received_at DESC, id DESC LIMIT 1`,
    sql`SELECT max(at) AS at FROM (
          SELECT max(received_at) AS at FROM (SELECT received_at FROM gateway_events WHERE gateway = ${gateway} AND source = 'lookup' ORDER BY received_at DESC, id DESC LIMIT 1)
          UNION ALL
          SELECT max(last_checked_at) FROM deposits WHERE provider <> 'generic' AND status IN ('pending', 'expired') AND gateway = ${gateway})`,
    sql`SELECT at, purpose, failure FROM vendor_failures WHERE gateway = ${gateway}`,
  ]),
  parse: (results) =>
    GATEWAYS.map((gateway, i) => {
      const [notification, lookup, failure] = results.slice(i * 3, i * 3 + 3);
      const settings = slotSettings(config, gateway);
      const status = slotStatus(gateway, settings);
      return {
        gateway,
        provider: settings.provider.slice(0, 40),
        available: 'slot' in status,
        problem: 'reason' in status ? status.reason : null,
        lastNotification: rowsOf<{ at: string; outcome: string }>(notification)[0] ?? null,
        lastLookupAt: rowsOf<{ at: string | null }>(lookup)[0]?.at ?? null,
        lastFailure: rowsOf<{ at: string; purpose: string; failure: string }>(failure)[0] ?? null,
      };
    }),
});

export type CheckOutcome = 'reachable' | 'key_refused' | 'unreachable' | 'not_available' | 'no_vendor';

export interface ConnectionCheck {
  gateway: GatewayName;
  provider: string;
  outcome: CheckOutcome;
  message: string;
  /** The failure to remember on the payments page (after the response), when the vendor failed. */
  failure?: VendorFailure;
}

/** "Check connection": one harmless authenticated call to the slot's vendor, and what it says in words. */
export async function checkConnection(config: Config, gateway: GatewayName, nowMs = Date.now()): Promise<ConnectionCheck> {
  const settings = slotSettings(config, gateway);
  const status = slotStatus(gateway, settings);
  const provider = settings.provider.slice(0, 40);
  if ('reason' in status) return { gateway, provider, outcome: 'not_available', message: `Not available: ${status.reason}. Nothing was called.` };
  const slot = status.slot;
  if (slot.provider === 'generic') {
    return { gateway, provider, outcome: 'no_vendor', message: 'The generic adapter has no vendor to call: its webhook secret is set, so the slot takes deposits.' };
  }
  const result = await checkVendor(slot as Slot & { provider: VendorName });
  if (result.ok) return { gateway, provider, outcome: 'reachable', message: 'Reachable; the key was accepted.' };
  const failure: VendorFailure = { gateway, provider: slot.provider, purpose: 'check', failure: result.failure, at: new Date(nowMs).toISOString() };
  return result.refused
    ? { gateway, provider, outcome: 'key_refused', message: `Reachable, but the vendor refused the key (${result.failure}): check the slot's API key (and account).`, failure }
    : { gateway, provider, outcome: 'unreachable', message: `The vendor could not be reached or failed (${result.failure}); deposits on this slot fail until it answers.`, failure };
}
