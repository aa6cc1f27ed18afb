import { createRoute, z } from '@hono/zod-openapi';
import { EVENT_TYPES, type WebhookEndpointRow } from '../../db/schema';
import { readConfig } from '../../env';
import { envelope, messageEnvelope, ok } from '../../lib/envelope';
import { WEBHOOK_URL, webhookUrlRefusal } from '../../lib/webhook-url';
import { createRouter, errorResponses, IdParams, jsonBody, jsonResponse, needsScope } from '../openapi';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints } from '../../services/events/endpoints';

const EVENT_CHOICES = [...EVENT_TYPES, '*'] as const;

const WebhookEndpoint = z
  .object({
    id: z.number().int(),
    url: z.string().openapi({ format: 'uri', example: 'https://example.com/webhooks/stock-wallet' }),
    events: z.array(z.enum(EVENT_CHOICES)).openapi({ example: ['order.created', 'deposit.paid'] }),
    description: z.string().nullable(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WebhookEndpoint');

const CreatedWebhookEndpoint = WebhookEndpoint.extend({
  secret: z.string().openapi({ description: 'signs every delivery (X-Signature); shown only in this response', example: `whsec_${'x'.repeat(32)}` }),
}).openapi('CreatedWebhookEndpoint');

const CreateEndpointBody = z.object({
  url: z
    .string('url is required')
    .max(2048, 'url may not be greater than 2048 characters')
    // The one rule (src/lib/webhook-url.ts): this check is the document's pattern and the code's. Not trimmed: a
    // URL with spaces around it is off the pattern, so the document and the service refuse it alike.
    .regex(WEBHOOK_URL, { error: (issue) => webhookUrlRefusal(issue.input) })
    .openapi({ format: 'uri', example: 'https://example.com/hooks/stock' }),
  events: z
    .array(z.enum(EVENT_CHOICES, `events must be event types (${EVENT_TYPES.join(', ')}) or "*"`), 'events must be an array')
    .min(1, 'events must name at least one event type, or "*" for all')
    // Normalised rather than refused: "*" with other types is every type, and a repeated type is the same subscription.
    .transform((types) => (types.includes('*') ? ['*' as const] : [...new Set(types)])),
  description: z.string('description must be a string').trim().max(255, 'description may not be greater than 255 characters').nullable().optional(),
});

const presentEndpoint = (w: WebhookEndpointRow) => ({
  id: w.id,
  url: w.url,
  events: JSON.parse(w.events) as Array<(typeof EVENT_CHOICES)[number]>,
  description: w.description,
  created_at: w.createdAt,
});

const tags = ['Webhook endpoints'];

export const webhookEndpointsRouter = createRouter()
  .openapi(
    createRoute({
      method: 'get',
      path: '/',
      operationId: 'listWebhookEndpoints',
      tags,
      summary: 'List webhook endpoints (without their secrets)',
      ...needsScope('read'),
      responses: { 200: jsonResponse(envelope(z.array(WebhookEndpoint)), 'Endpoints, newest first'), ...errorResponses(401, 429) },
    }),
    async (c) => c.json(ok((await listWebhookEndpoints(c.var.db, c.var.caller)).map(presentEndpoint)), 200),
  )
  .openapi(
    createRoute({
      method: 'post',
      path: '/',
      operationId: 'createWebhookEndpoint',
      tags,
      summary: 'Register a webhook endpoint (at most 5); events are POSTed to it, signed with its secret',
      ...needsScope('webhooks'),
      request: { body: jsonBody(CreateEndpointBody) },
      responses: {
        201: jsonResponse(envelope(CreatedWebhookEndpoint), 'The endpoint; its secret is never shown again'),
        ...errorResponses(400, 401, 422, 429),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const input = { url: body.url, events: body.events, description: body.description || null };
      const endpoint = await createWebhookEndpoint(c.var.db, c.var.caller, input, readConfig(c.env).allowLocalWebhookUrls);
      return c.json(ok({ ...presentEndpoint(endpoint), secret: endpoint.secret }, 'Webhook endpoint created. Store the secret now: it will not be shown again.'), 201);
    },
  )
  .openapi(
    createRoute({
      method: 'delete',
      path: '/{id}',
      operationId: 'deleteWebhookEndpoint',
      tags,
      summary: 'Delete a webhook endpoint (its pending retries stop)',
      ...needsScope('webhooks'),
      request: { params: IdParams },
      responses: { 200: jsonResponse(messageEnvelope, 'Deleted'), ...errorResponses(401, 404, 422, 429) },
    }),
    async (c) => {
      await deleteWebhookEndpoint(c.var.db, c.var.caller, c.req.valid('param').id);
      return c.json({ success: true as const, message: 'Webhook endpoint deleted.' }, 200);
    },
  );
