import { createRoute, z } from '@hono/zod-openapi';
import { envelope, ErrorBody, ok } from '../lib/envelope';
import { ERROR_STATUS, type ErrorCode } from '../lib/errors';
import { createRouter, errorResponses, jsonResponse, pathId } from './openapi';
import { DepositStatus } from './representations';

// What the service says about itself: the info routes, and the OpenAPI document (security schemes, error codes and
// the pages beside the API, so that every response the worker gives is described).

export const API_PREFIX = '/api/v2';
export const SERVICE = { name: 'stock-wallet-api', version: '2.0' };

type App = ReturnType<typeof createRouter>;

export function registerServiceInfo(app: App) {
  for (const [path, operationId] of [['/', 'getServiceInfo'], [API_PREFIX, 'getApiInfo']]) {
    app.openapi(
      createRoute({
        method: 'get',
        path,
        operationId,
        tags: ['Service'],
        summary: 'Service name and version',
        ...(path === '/' ? { description: 'A browser (`Accept` with `text/html`) is sent to the storefront `/shop` (302); any other client gets this JSON.' } : {}),
        responses: {
          200: jsonResponse(envelope(z.object({ name: z.string(), version: z.string(), docs: z.string(), openapi: z.string() })), 'About the service'),
          ...(path === '/' ? { 302: { description: 'To the storefront /shop, for a browser', headers: { Location: { schema: { type: 'string' as const } } } } } : {}),
          ...errorResponses(),
        },
      }),
      (c) => {
        // A person who types the shop's address lands in the storefront; clients keep the JSON index.
        if (path === '/' && (c.req.header('Accept') ?? '').includes('text/html')) return c.redirect('/shop', 302);
        return c.json(ok({ ...SERVICE, docs: '/docs', openapi: `${API_PREFIX}/openapi.json` }), 200);
      },
    );
  }
}

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/**
 * The worker's pages beside the API, documented too so that every response the worker gives is described. The static
 * files (public/: the /docs page and its Swagger UI assets) are answered before the worker runs and are not listed.
 */
function registerPagesOutsideTheApi(app: App) {
  const registry = app.openAPIRegistry;
  const tags = ['Pages'];
  registry.registerPath({
    method: 'get',
    path: `${API_PREFIX}/openapi.json`,
    operationId: 'getOpenApiDocument',
    tags,
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } } },
  });
  const depositParam = z.object({ deposit_id: pathId('deposit_id') });
  const notServed = { 404: jsonResponse(ErrorBody, 'Unknown deposit, or DEV_CHECKOUT is off (production)') };
  registry.registerPath({
    method: 'get',
    path: '/pay/{deposit_id}',
    operationId: 'getCheckoutPage',
    tags,
    summary: 'Development checkout page (only with DEV_CHECKOUT=true)',
    request: { params: depositParam },
    responses: { 200: html('Checkout page'), ...notServed },
  });
  registry.registerPath({
    method: 'post',
    path: '/pay/{deposit_id}/{outcome}',
    operationId: 'submitCheckout',
    tags,
    summary: 'Development checkout buttons: the server signs and delivers the gateway webhook (DEV_CHECKOUT=true only)',
    description: "Only from the checkout page itself: a post without the page's own `Origin` (or `Sec-Fetch-Site: same-origin`) is a 403.",
    request: { params: depositParam.extend({ outcome: z.enum(['pay', 'fail']).openapi({ param: { name: 'outcome', in: 'path' } }) }) },
    responses: { ...errorResponses(400, 401, 403, 404, 422), 200: jsonResponse(envelope(DepositStatus), 'What the webhook answered') },
  });
}

/** Serves the OpenAPI 3.1 document at /api/v2/openapi.json. */
/** Every route behind an API key can answer 403 (a key without its scope, or from outside its allowed IPs). */
function documentScopeRefusals(definitions: App['openAPIRegistry']['definitions']) {
  for (const definition of definitions) {
    if (definition.type === 'route' && definition.route['x-required-scope']) {
      definition.route.responses[403] ??= errorResponses(403)[403];
    }
  }
}

/** The README's name (README.md's first heading; test/openapi.test.ts keeps them equal). */
export const DOCUMENT_TITLE = 'Stock Wallet API';

/** The document's description starts where an integrator starts: a first request, then test mode. */
const FIRST_HOUR = [
  '**A first request.** Every call but the public stock takes an API key in `X-API-Key`: ' +
    '`curl -H "X-API-Key: sk_live_..." https://<host>/api/v2/wallet/balance` answers `{ "success": true, "data": { "balance": ... } }`. ' +
    '`npm run dev` prints a demo live key and a demo test key.',
  '**Test mode.** A `sk_test_` key (`POST /api-keys` `{ "name": "...", "mode": "test" }`, or the dashboard) is answered from a sandbox ' +
    'beside the shop with $1,000.00 of test money: the same routes, the same rules; pay test deposits with ' +
    '`POST /test/deposits/{id}/pay`, play the operator with `POST /test/orders/{id}/refund` and `POST /test/claims/{id}/...`, ' +
    'start over with `POST /test/reset` (docs/test-mode.md walks the buyer\'s path: quote, deposit with `order`, pay, `order.created`, `GET /orders/{id}`).',
].join('\n\n');

export function registerDocument(app: App) {
  registerPagesOutsideTheApi(app);
  const registry = app.openAPIRegistry;
  registry.registerComponent('securitySchemes', 'ApiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  registry.registerComponent('securitySchemes', 'ApiKeyQuery', { type: 'apiKey', in: 'query', name: 'api_key' });
  registry.registerComponent('securitySchemes', 'AdminBearer', { type: 'http', scheme: 'bearer' });
  documentScopeRefusals(registry.definitions);
  registry.registerComponent('securitySchemes', 'WebhookSignature', { type: 'apiKey', in: 'header', name: 'X-Signature' });
  app.doc31(`${API_PREFIX}/openapi.json`, {
    openapi: '3.1.0',
    info: {
      // The README's name: the page a new integrator opens first says what they cloned.
      title: DOCUMENT_TITLE,
      version: SERVICE.version,
      description: `${FIRST_HOUR}\n\nError codes: ${(Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => `${code} (${ERROR_STATUS[code]})`).join(', ')}.`,
    },
  });
}
