import { createRoute, z } from '@hono/zod-openapi';
import { readConfig } from '../env';
import { envelope, ok } from '../lib/envelope';
import { notFound } from '../lib/errors';
import { createRouter, errorResponses, jsonResponse } from '../lib/openapi';
import { publishAfterResponse } from '../middleware/publish-events';
import { applyGatewayEvent } from '../services/deposits';
import { GATEWAYS, getGateway, isGatewayName, WEBHOOK_STATUSES } from '../services/gateways';
import { DepositStatus, presentDepositStatus } from './representations';

// The body is documented, not validated by zod here: the signature covers the raw bytes, so the adapter reads them
// itself before parsing.
const GenericWebhookDoc = {
  type: 'object' as const,
  required: ['deposit_id', 'status', 'amount', 'transaction_id'],
  properties: {
    deposit_id: { type: 'integer' as const, example: 42 },
    status: { type: 'string' as const, enum: [...WEBHOOK_STATUSES] },
    amount: { type: 'number' as const, example: 50 },
    transaction_id: { type: 'string' as const, example: 'tx_123' },
  },
};

export const webhooksRouter = createRouter().openapi(
  createRoute({
    method: 'post',
    path: '/{gateway}',
    tags: ['Webhooks'],
    summary: 'Payment gateway event (signed with X-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>)',
    security: [{ WebhookSignature: [] }],
    request: {
      params: z.object({ gateway: z.string().openapi({ param: { name: 'gateway', in: 'path' }, enum: [...GATEWAYS] }) }),
      body: { required: true, content: { 'application/json': { schema: GenericWebhookDoc } } },
    },
    responses: {
      200: jsonResponse(envelope(DepositStatus), 'Applied (or already applied: replays change nothing)'),
      ...errorResponses(400, 401, 404, 413, 422),
    },
  }),
  async (c) => {
    const name = c.req.valid('param').gateway;
    if (!isGatewayName(name)) throw notFound('Gateway');
    const gateway = getGateway(name, readConfig(c.env));
    const event = await gateway.parseWebhook(await c.req.text(), c.req.raw.headers, Date.now());
    const { deposit, credited } = await applyGatewayEvent(c.var.db, name, event, publishAfterResponse(c));
    return c.json(ok(presentDepositStatus(deposit), credited ? 'Deposit credited to the wallet.' : 'Event applied.'), 200);
  },
);
