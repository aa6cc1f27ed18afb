import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/batch';
import type { Query } from '../caller';
import type { Db } from '../../db/client';
import { isoNow } from '../../lib/time';
import { auditEntry, writeAsActor, type Actor } from '../accounts/audit-log';

// The shop's referral programme: one row (migration 0033). percent 0 (the default) turns earning off; hold_days and
// min_transfer shape when earnings can move into the wallet.

export interface ReferralSettings {
  percent: number;
  holdDays: number;
  minTransferCents: number;
}

export const settingsRow = sql`SELECT percent, hold_days AS holdDays, min_transfer_cents AS minTransferCents FROM referral_settings WHERE id = 1`;

export const settingsQuery: Query<ReferralSettings> = {
  reads: [settingsRow],
  parse: ([row]) => rowsOf<ReferralSettings>(row)[0],
};

/** Changes the settings given (the others keep their values), audited in the same batch. */
export async function updateReferralSettings(d1: Db, actor: Actor, next: Partial<ReferralSettings>): Promise<ReferralSettings> {
  const now = isoNow();
  const { reads } = await writeAsActor(d1, actor, {
    writes: [
      sql`UPDATE referral_settings SET percent = coalesce(${next.percent ?? null}, percent), hold_days = coalesce(${next.holdDays ?? null}, hold_days),
                                       min_transfer_cents = coalesce(${next.minTransferCents ?? null}, min_transfer_cents), updated_at = ${now}
          WHERE id = 1`,
      auditEntry(
        actor,
        {
          action: 'referrals.settings_changed',
          target: sql`'referrals'`,
          details: sql`json_object('percent', percent, 'hold_days', hold_days, 'min_transfer_cents', min_transfer_cents)`,
          from: sql`FROM referral_settings WHERE id = 1 AND updated_at = ${now}`,
        },
        now,
      ),
    ],
    reads: [settingsRow, sql`SELECT 1 FROM referral_settings WHERE id = 1 AND updated_at = ${now}`],
    committed: ([, mine]) => rowsOf(mine).length > 0,
  });
  return rowsOf<ReferralSettings>(reads[0])[0];
}
