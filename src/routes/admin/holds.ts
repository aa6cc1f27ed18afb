import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ok } from '../../lib/envelope';
import { HoldBody } from '../../schemas/after-sale';
import { ADMIN_TOKEN_ACTOR } from '../../services/accounts/audit-log';
import { setHold, type HoldState } from '../../services/accounts/holds';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse } from '../openapi';

// Holds on accounts: POST /admin/users/{id}/hold puts one (with a reason), DELETE lifts it; both audited.

const Hold = z
  .object({
    user_id: z.number().int(),
    on_hold: z.boolean().openapi({ description: 'true: deposits and purchases answer 403 ACCOUNT_ON_HOLD' }),
    hold_reason: z.string().nullable(),
    held_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('Hold');

const presentHold = (h: HoldState) => ({ user_id: h.userId, on_hold: h.heldAt !== null, hold_reason: h.holdReason, held_at: h.heldAt });

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];

export const adminHoldsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'post',
      path: '/users/{id}/hold',
      operationId: 'holdUser',
      tags,
      summary: 'Put an account on hold',
      description:
        'Until the hold is lifted, the account\'s deposits and purchases answer 403 `ACCOUNT_ON_HOLD` (reads still work). ' +
        'A payment reversed at its vendor (a refund or a dispute) puts the account on hold by itself. Audited (`user.held`).',
      security,
      request: { params: IdParams, body: jsonBody(HoldBody) },
      responses: { 200: jsonResponse(envelope(Hold), 'The account is on hold'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const state = await setHold(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, c.req.valid('json').reason);
      return c.json(ok(presentHold(state), 'Account on hold.'), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/users/{id}/hold',
      operationId: 'releaseUser',
      tags,
      summary: "Lift an account's hold",
      description: 'Deposits and purchases work again. Audited (`user.released`).',
      security,
      request: { params: IdParams },
      responses: { 200: jsonResponse(envelope(Hold), 'The hold is lifted'), ...errorResponses(401, 404, 422) },
    }),
    async (c) => {
      const state = await setHold(c.var.db, ADMIN_TOKEN_ACTOR, c.req.valid('param').id, null);
      return c.json(ok(presentHold(state), 'Hold lifted.'), 200);
    },
  );
