import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { centsToAmount } from '../../lib/money';
import { ReferralSettingsBody } from '../../schemas/referrals';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { queryPlain } from '../../services/caller';
import { settingsQuery, updateReferralSettings, type ReferralSettings } from '../../services/referrals/settings';
import { createRouter, errorResponses, jsonBody, jsonResponse } from '../openapi';

// The shop's referral programme (docs/referrals.md): percent (0 = off), hold days, minimum transfer.

export const ReferralSettingsSchema = z
  .object({
    percent: z.number().int().openapi({ description: "the referrer's percent of each order's total (0..50); 0 = off", example: 5 }),
    hold_days: z.number().int().openapi({ description: 'days an earning is held at least (0..365)', example: 14 }),
    min_transfer: z.number().openapi({ description: 'USD: the least a transfer into the wallet moves', example: 10 }),
  })
  .openapi('ReferralSettings');

export const presentReferralSettings = (s: ReferralSettings) => ({ percent: s.percent, hold_days: s.holdDays, min_transfer: centsToAmount(s.minTransferCents) });

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];

export const adminReferralsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/settings/referrals',
      operationId: 'getReferralSettings',
      tags,
      summary: "The shop's referral programme",
      security,
      responses: { 200: jsonResponse(envelope(ReferralSettingsSchema), 'The settings'), ...errorResponses(401) },
    }),
    async (c) => {
      const [settings] = await queryPlain(c.var.db, [settingsQuery]);
      return c.json(ok(presentReferralSettings(settings)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'put',
      path: '/settings/referrals',
      operationId: 'updateReferralSettings',
      tags,
      summary: "Change the shop's referral programme",
      description:
        'A field left out keeps its value. The percent applies to orders bought from now on (a product\'s own `referral_percent` wins); ' +
        'earnings already written keep theirs. Audited (`referrals.settings_changed`).',
      security,
      request: { body: jsonBody(ReferralSettingsBody) },
      responses: { 200: jsonResponse(envelope(ReferralSettingsSchema), 'The settings now'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const settings = await updateReferralSettings(c.var.db, ADMIN_TOKEN_ACTOR, {
        percent: body.percent,
        holdDays: body.hold_days,
        minTransferCents: body.min_transfer,
      });
      return c.json(ok(presentReferralSettings(settings), 'Referral settings updated.'), 200);
    },
  );
