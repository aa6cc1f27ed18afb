import { createRoute, z } from '@hono/zod-openapi';
import { readConfig } from '../env';
import { envelope, ok } from '../lib/envelope';
import { notFound } from '../lib/errors';
import { createRouter, errorResponses, jsonResponse } from './openapi';
import { publishAfterResponse } from '../middleware/publish-events';
import { applyGatewayEvent } from '../services/deposits';
import { GATEWAYS, GenericWebhookBody, getGateway, isGatewayName } from '../services/gateways';
import { DepositStatus, presentDepositStatus } from './representations';

// The body is documented from the adapter's own schema but not validated here: the signature covers the raw bytes,
// so the adapter checks it before it parses them (a route body schema would be validated first).
const router = createRouter();
router.openAPIRegistry.register('GatewayWebhook', GenericWebhookBody);

export const webhooksRouter = router.openapi(
  createRoute({
    method: 'post',
    path: '/{gateway}',
    operationId: 'receiveGatewayWebhook',
    tags: ['Webhooks'],
    summary: 'Payment gateway event (signed with X-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>)',
    security: [{ WebhookSignature: [] }],
    request: {
      params: z.object({ gateway: z.string().openapi({ param: { name: 'gateway', in: 'path' }, enum: [...GATEWAYS] }) }),
      body: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/GatewayWebhook' } } } },
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
