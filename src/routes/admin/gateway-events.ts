import { createRoute, z } from '@hono/zod-openapi';
import type { GatewayEventRow } from '../../db/schema';
import { centsToAmount } from '../../lib/money';
import { createRouter, errorResponses, jsonResponse } from '../openapi';
import { optionalIdQuery } from '../../lib/validation';
import { paged, pagedEnvelope, PaginationQuery } from '../../lib/pagination';
import { listGatewayEvents } from '../../services/payments/gateway-events';
import { GATEWAY_OUTCOMES } from '../../db/schema';
import { GATEWAYS } from '../../services/payments/gateways';

// The operator's view of the inbound gateway event log (mounted under /admin, so behind the admin token).

const GatewayEventsQuery = PaginationQuery.extend({
  gateway: z.enum(GATEWAYS, `gateway must be one of ${GATEWAYS.join(', ')}`).optional(),
  deposit_id: optionalIdQuery('deposit_id'),
});

const GatewayEvent = z
  .object({
    id: z.number().int(),
    gateway: z.enum(GATEWAYS),
    deposit_id: z.number().int(),
    status: z.string().openapi({
      example: 'paid',
      description: "The gateway's own status (or event type) as received: `paid`, `failed`, `expired` from the generic adapter",
    }),
    amount: z.number().nullable().openapi({ example: 50, description: 'USD as the gateway reported it, at most 2 decimals; null when it reports none' }),
    transaction_id: z.string().openapi({ description: "The gateway's payment or invoice id" }),
    outcome: z.enum(GATEWAY_OUTCOMES).openapi({
      description:
        '`credited`: this event credited the wallet; `closed`: it closed a pending deposit; `duplicate`: it changed nothing ' +
        "(already paid or closed); `amount_mismatch`: paid with an amount other than the deposit's, nothing credited; " +
        '`in_progress`: the payment is under way, nothing changed; `reversed`: money taken back after a credit (a refund or ' +
        'dispute), recorded for the operator, no balance change; `unconfirmed`: the vendor\'s own API did not back a paid ' +
        'notification, nothing credited',
    }),
    received_at: z.string().openapi({ format: 'date-time', example: '2026-11-21T12:00:00.000Z' }),
    source: z.enum(['notification', 'lookup']).openapi({
      description: "`notification`: the vendor's notification (or the generic webhook); `lookup`: the vendor's API, asked by a refresh or the scheduled job",
    }),
  })
  .openapi('GatewayEvent');

const presentGatewayEvent = (e: GatewayEventRow) => ({
  id: e.id,
  gateway: e.gateway as (typeof GATEWAYS)[number],
  deposit_id: e.depositId,
  status: e.status,
  amount: e.amountCents === null ? null : centsToAmount(e.amountCents),
  transaction_id: e.transactionId,
  outcome: e.outcome,
  received_at: e.receivedAt,
  source: e.source,
});

export const gatewayEventsRouter = createRouter().openapi(
  createRoute({
    method: 'get',
    path: '/',
    operationId: 'listGatewayEvents',
    tags: ['Admin'],
    summary: 'Every verified inbound gateway notification about a deposit, as received, newest first',
    security: [{ AdminBearer: [] }],
    request: { query: GatewayEventsQuery },
    responses: { 200: jsonResponse(pagedEnvelope(GatewayEvent), 'A page of gateway events'), ...errorResponses(401, 422) },
  }),
  async (c) => {
    const { gateway, deposit_id: depositId, ...page } = c.req.valid('query');
    const { rows, total } = await listGatewayEvents(c.var.db, { gateway, depositId }, page);
    return c.json(paged(rows.map(presentGatewayEvent), page, total), 200);
  },
);
