import { z } from '@hono/zod-openapi';
import { usdAmount } from '../lib/validation';

// Request schemas of the referral programme, shared by the admin API and the console's Referrals page.

export const MAX_REFERRAL_PERCENT = 50;
export const MAX_MIN_TRANSFER_CENTS = 1_000_000;

export const referralPercent = (field: string) =>
  z
    .int(`${field} must be an integer`)
    .min(0, `${field} must be between 0 and ${MAX_REFERRAL_PERCENT}`)
    .max(MAX_REFERRAL_PERCENT, `${field} must be between 0 and ${MAX_REFERRAL_PERCENT}`);

/** PUT /admin/settings/referrals: a field left out keeps its value. */
export const ReferralSettingsBody = z.object({
  percent: referralPercent('percent').optional().openapi({ description: "the referrer's percent of each order's total; 0 = the programme is off" }),
  hold_days: z
    .int('hold_days must be an integer')
    .min(0, 'hold_days must be between 0 and 365')
    .max(365, 'hold_days must be between 0 and 365')
    .optional()
    .openapi({ description: 'days an earning waits (at least; also the warranty and the order hold period) before it can be moved' }),
  min_transfer: usdAmount('min_transfer', 1, MAX_MIN_TRANSFER_CENTS)
    .optional()
    .openapi({ description: 'USD: the least a transfer into the wallet moves (else 400 TRANSFER_TOO_SMALL)', example: 10 }),
});
