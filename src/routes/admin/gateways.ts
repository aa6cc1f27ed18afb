import { createRoute, z } from '@hono/zod-openapi';
import { readConfig } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { runAfterResponse } from '../../middleware/after-response';
import { queryPlain } from '../../services/caller';
import { checkConnection, gatewaysQuery, type ConnectionCheck, type GatewayHealth } from '../../services/payments/health';
import { GATEWAYS } from '../../services/payments/gateways/slots';
import { recordVendorFailure } from '../../services/payments/vendor-failures';
import { createRouter, errorResponses, jsonResponse } from '../openapi';

// GET /admin/gateways and POST /admin/gateways/{slot}/check: the payment providers behind the slots, as the console's
// payments page shows them. Mounted under the admin prefix (src/app.ts), so the admin bearer token guards them.

const security = [{ AdminBearer: [] }];
const tags = ['Admin'];
const timestamp = z.string().openapi({ format: 'date-time' });

const GatewayHealthSchema = z
  .object({
    gateway: z.enum(GATEWAYS),
    provider: z.string().openapi({ description: 'as configured: generic, nowpayments, cryptomus, btcpay or stripe (an unknown name as typed)' }),
    available: z.boolean(),
    missing: z.string().nullable().openapi({ description: 'why the slot is not available: the settings it needs, by name (never a value)' }),
    last_notification: z.object({ at: timestamp, outcome: z.string() }).nullable(),
    last_lookup_at: timestamp.nullable().openapi({ description: "the last time the vendor was asked about one of the slot's deposits" }),
    last_failure: z
      .object({ at: timestamp, purpose: z.string().openapi({ description: 'invoice, lookup or check' }), failure: z.string().openapi({ description: 'timeout, unreachable, http <status>, not json or unexpected answer' }) })
      .nullable(),
  })
  .openapi('GatewayHealth');

const ConnectionCheckSchema = z
  .object({
    gateway: z.enum(GATEWAYS),
    provider: z.string(),
    outcome: z.enum(['reachable', 'key_refused', 'unreachable', 'not_available', 'no_vendor']),
    message: z.string().openapi({ example: 'Reachable; the key was accepted.' }),
  })
  .openapi('ConnectionCheck');

export const presentGatewayHealth = (g: GatewayHealth) => ({
  gateway: g.gateway,
  provider: g.provider,
  available: g.available,
  missing: g.problem,
  last_notification: g.lastNotification,
  last_lookup_at: g.lastLookupAt,
  last_failure: g.lastFailure,
});

const presentCheck = ({ gateway, provider, outcome, message }: ConnectionCheck) => ({ gateway, provider, outcome, message });

export const adminGatewaysRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/gateways',
      operationId: 'listGatewayHealth',
      tags,
      summary: "Each gateway slot's payment provider: available or the setting it misses, last notification, last lookup, last vendor failure",
      security,
      responses: { 200: jsonResponse(envelope(z.array(GatewayHealthSchema)), 'The three slots in order'), ...errorResponses(401) },
    }),
    async (c) => {
      const [gateways] = await queryPlain(c.var.db, [gatewaysQuery(readConfig(c.env))]);
      return c.json(ok(gateways.map(presentGatewayHealth)), 200);
    },
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/gateways/{slot}/check',
      operationId: 'checkGatewayConnection',
      tags,
      summary: 'Check connection: one harmless authenticated read at the slot\'s vendor (see docs/payment-providers.md), answered in words',
      description: 'Always 200 when the check could be made: `outcome` says what the vendor answered. Changes nothing at the vendor; a failure is remembered for `last_failure`.',
      security,
      request: { params: z.object({ slot: z.enum(GATEWAYS, `slot must be one of ${GATEWAYS.join(', ')}`).openapi({ param: { name: 'slot', in: 'path' } }) }) },
      responses: { 200: jsonResponse(envelope(ConnectionCheckSchema), 'What the vendor answered'), ...errorResponses(401, 422) },
    }),
    async (c) => {
      const check = await checkConnection(readConfig(c.env), c.req.valid('param').slot);
      if (check.failure) runAfterResponse(c, recordVendorFailure(c.var.db, check.failure));
      return c.json(ok(presentCheck(check)), 200);
    },
  );
