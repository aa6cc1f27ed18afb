import { createRoute, z } from '@hono/zod-openapi';
import { readConfig } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { notFound, unauthorized } from '../../lib/errors';
import { refuseDeepJson } from '../../lib/json-depth';
import { createRouter, errorResponses, jsonResponse } from '../openapi';
import { publishAfterResponse } from '../../middleware/publish-events';
import { applyGatewayEvent } from '../../services/payments/deposits';
import { applyVendorNotification } from '../../services/payments/vendor-notifications';
import { findGateway, GATEWAYS, GenericWebhookBody, isGatewayName } from '../../services/payments/gateways';
import { DepositStatus, presentDepositStatus } from '../representations';
import { mailFor } from '../../middleware/send-emails';


// The body is documented from the generic adapter's own schema but not validated here: the signature covers the raw
// bytes, so the adapter checks it before it parses them (a route body schema would be validated first). A slot served
// by a real provider takes that vendor's own notifications, signed its way (src/services/payments/gateways/).
const router = createRouter();
router.openAPIRegistry.register('GatewayWebhook', GenericWebhookBody);

export const webhooksRouter = router.openapi(
  createRoute({
    method: 'post',
    path: '/{gateway}',
    operationId: 'receiveGatewayWebhook',
    tags: ['Webhooks'],
    summary: 'Payment gateway event (signed with X-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>)',
    description:
      'A slot served by the generic adapter takes the body below. A slot served by a real provider (NOWPayments, ' +
      'Cryptomus, BTCPay Server, Stripe) takes that vendor\'s own notifications, verified with its own signature ' +
      'scheme (401 when that fails); a verified one always answers 200: `data` is the deposit it concerns, or null ' +
      'when it names no deposit of this slot or is of a kind the service does not handle.',
    security: [{ WebhookSignature: [] }],
    request: {
      params: z.object({ gateway: z.string().openapi({ param: { name: 'gateway', in: 'path' }, enum: [...GATEWAYS] }) }),
      body: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/GatewayWebhook' } } } },
    },
    responses: {
      200: jsonResponse(envelope(z.union([DepositStatus, z.null()])), 'Applied (or already applied: replays change nothing); null: ignored'),
      ...errorResponses(400, 401, 404, 413, 422),
    },
  }),
  async (c) => {
    const name = c.req.valid('param').gateway;
    if (!isGatewayName(name)) throw notFound('Gateway');
    // A slot that is not available has nothing to verify a notification with.
    const gateway = findGateway(name, readConfig(c.env));
    if (!gateway) throw unauthorized('Missing or malformed webhook signature.');
    const rawBody = await c.req.text();
    // Whatever its Content-Type: adapters parse the raw text, and a vendor's signature scheme may re-serialise it.
    refuseDeepJson(rawBody);
    const applied =
      gateway.provider === 'generic'
        ? await applyGatewayEvent(c.var.db, name, await gateway.generic.parseWebhook(rawBody, c.req.raw.headers, Date.now()), publishAfterResponse(c), mailFor(c))
        : await applyVendorNotification(c.var.db, gateway, await gateway.vendor.parseNotification(rawBody, c.req.raw.headers, Date.now()), publishAfterResponse(c), mailFor(c));
    if (!applied) return c.json(ok(null, 'Notification verified; it concerns no deposit of this gateway.'), 200);
    return c.json(ok(presentDepositStatus(applied.deposit), applied.credited ? 'Deposit credited to the wallet.' : 'Event applied.'), 200);
  },
);
