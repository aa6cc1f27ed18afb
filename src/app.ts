import { HTTPException } from 'hono/http-exception';
import { bodyLimit } from 'hono/body-limit';
import type { Context } from 'hono';
import type { AppEnv } from './env';
import { requireAdmin, requireApiKey } from './lib/auth';
import { ApiError, type ErrorCode, ERROR_STATUS } from './lib/errors';
import { createRoute, z } from '@hono/zod-openapi';
import { envelope, errorBody, ErrorBody, ok } from './lib/envelope';
import { createRouter, errorResponses, jsonResponse, pathId } from './lib/openapi';
import { d1Session } from './lib/d1-session';
import { requestId } from './lib/request-id';
import { requestLog } from './lib/request-log';
import { adminRouter } from './routes/admin';
import { apiKeysRouter } from './routes/api-keys';
import { ordersRouter } from './routes/orders';
import { stockRouter } from './routes/stock';
import { userRouter } from './routes/user';
import { DepositStatus } from './routes/representations';
import { walletRouter } from './routes/wallet';
import { webhooksRouter } from './routes/webhooks';
import { createCheckoutRouter } from './routes/checkout';
import { createDocsRouter } from './routes/docs';

export const API_PREFIX = '/api/v2';
export const SERVICE = { name: 'stock-wallet-api', version: '2.0' };

const MAX_BODY_BYTES = 1024 * 1024;
const MAX_STOCK_UPLOAD_BYTES = 16 * 1024 * 1024;
const STOCK_UPLOAD_PATH = new RegExp(`^${API_PREFIX}/admin/products/[^/]+/stock$`);

const payloadTooLarge = (limit: number) => () => {
  throw new ApiError('PAYLOAD_TOO_LARGE', `The request body may not exceed ${limit / (1024 * 1024)} MB.`);
};

/** Hono's own HTTP exceptions (malformed JSON, unsupported media type) rendered as contract errors. */
function fromHttpException(err: HTTPException): ApiError {
  if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (err.status === 400 || err.status === 415) {
    const message = err.status === 415 ? 'The body must be JSON (Content-Type: application/json).' : 'The body is not valid JSON.';
    return new ApiError('VALIDATION_FAILED', message, { body: [message] });
  }
  if (err.status === 401) return new ApiError('UNAUTHORIZED', err.message || 'Unauthorized.');
  if (err.status === 404) return new ApiError('NOT_FOUND', 'Not found.');
  return new ApiError('INTERNAL_ERROR', 'Internal server error.');
}

export function renderError(err: Error, c: Context<AppEnv>) {
  const apiError = err instanceof ApiError ? err : err instanceof HTTPException ? fromHttpException(err) : null;
  if (!apiError || apiError.code === 'INTERNAL_ERROR') {
    // The stack stays server-side; the client only gets the request id to quote.
    console.error(JSON.stringify({ level: 'error', request_id: c.get('requestId'), error: err.message, stack: err.stack }));
    return c.json(errorBody('INTERNAL_ERROR', 'Internal server error.'), 500);
  }
  for (const [name, value] of Object.entries(apiError.headers ?? {})) c.header(name, value);
  return c.json(errorBody(apiError.code, apiError.message, apiError.errors), apiError.status);
}

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** The pages beside the API, documented too so that every response the service gives is described. */
function registerPagesOutsideTheApi(app: ReturnType<typeof createRouter>) {
  const registry = app.openAPIRegistry;
  const tags = ['Pages'];
  registry.registerPath({
    method: 'get',
    path: `${API_PREFIX}/openapi.json`,
    tags,
    summary: 'This OpenAPI document',
    responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } } } },
  });
  registry.registerPath({ method: 'get', path: '/docs', tags, summary: 'Interactive API reference', responses: { 200: html('Swagger UI') } });
  for (const [asset, type] of [['swagger-ui-bundle.js', 'text/javascript'], ['swagger-ui.css', 'text/css']]) {
    registry.registerPath({
      method: 'get',
      path: `/docs/${asset}`,
      tags,
      summary: 'Asset of the reference page, served by the worker',
      responses: { 200: { description: asset, content: { [type]: { schema: { type: 'string' } } } } },
    });
  }
  const depositParam = z.object({ deposit_id: pathId('deposit_id') });
  const notServed = { 404: jsonResponse(ErrorBody, 'Unknown deposit, or DEV_CHECKOUT is off (production)') };
  registry.registerPath({
    method: 'get',
    path: '/pay/{deposit_id}',
    tags,
    summary: 'Development checkout page (only with DEV_CHECKOUT=true)',
    request: { params: depositParam },
    responses: { 200: html('Checkout page'), ...notServed },
  });
  registry.registerPath({
    method: 'post',
    path: '/pay/{deposit_id}/{outcome}',
    tags,
    summary: 'Development checkout buttons: the server signs and delivers the gateway webhook (DEV_CHECKOUT=true only)',
    request: { params: depositParam.extend({ outcome: z.enum(['pay', 'fail']).openapi({ param: { name: 'outcome', in: 'path' } }) }) },
    responses: { ...errorResponses(400, 401, 404, 422), 200: jsonResponse(envelope(DepositStatus), 'What the webhook answered') },
  });
}

export function createApp() {
  const app = createRouter();

  app.use('*', requestId);
  app.use('*', requestLog);
  app.use('*', async (c, next) => {
    await next();
    // Only the public stock routes opt into caching; everything else is private to its caller.
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  const defaultBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: payloadTooLarge(MAX_BODY_BYTES) });
  const stockUploadBodyLimit = bodyLimit({ maxSize: MAX_STOCK_UPLOAD_BYTES, onError: payloadTooLarge(MAX_STOCK_UPLOAD_BYTES) });
  app.use('*', (c, next) => (STOCK_UPLOAD_PATH.test(c.req.path) ? stockUploadBodyLimit : defaultBodyLimit)(c, next));

  app.use(`${API_PREFIX}/*`, d1Session);
  for (const path of ['/api-keys', '/user', '/orders', '/wallet']) app.use(`${API_PREFIX}${path}/*`, requireApiKey);
  for (const path of ['/api-keys', '/orders']) app.use(`${API_PREFIX}${path}`, requireApiKey);
  app.use(`${API_PREFIX}/admin/*`, requireAdmin);

  for (const path of ['/', API_PREFIX]) {
    app.openapi(
      createRoute({
        method: 'get',
        path,
        tags: ['Service'],
        summary: 'Service name and version',
        responses: {
          200: jsonResponse(envelope(z.object({ name: z.string(), version: z.string(), docs: z.string(), openapi: z.string() })), 'About the service'),
          ...errorResponses(),
        },
      }),
      (c) => c.json(ok({ ...SERVICE, docs: '/docs', openapi: `${API_PREFIX}/openapi.json` }), 200),
    );
  }

  const api = app
    .route(`${API_PREFIX}/api-keys`, apiKeysRouter)
    .route(`${API_PREFIX}/user`, userRouter)
    .route(`${API_PREFIX}/stock`, stockRouter)
    .route(`${API_PREFIX}/orders`, ordersRouter)
    .route(`${API_PREFIX}/wallet`, walletRouter)
    .route(`${API_PREFIX}/admin`, adminRouter)
    .route(`${API_PREFIX}/webhooks`, webhooksRouter);
  app.route('/pay', createCheckoutRouter((request, env, ctx) => app.fetch(request, env, ctx)));
  app.route('/docs', createDocsRouter(`${API_PREFIX}/openapi.json`));

  registerPagesOutsideTheApi(app);
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKeyQuery', { type: 'apiKey', in: 'query', name: 'api_key' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'AdminBearer', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'WebhookSignature', { type: 'apiKey', in: 'header', name: 'X-Signature' });
  app.doc31(`${API_PREFIX}/openapi.json`, {
    openapi: '3.1.0',
    info: {
      title: 'Wallet-Funded Digital Stock Service API',
      version: SERVICE.version,
      description: `Error codes: ${(Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => `${code} (${ERROR_STATUS[code]})`).join(', ')}.`,
    },
  });

  app.notFound((c) => renderError(new ApiError('NOT_FOUND', 'No such route.'), c));
  app.onError(renderError);
  return api;
}

/** The typed route tree, for `hc<AppType>` (src/client.ts). */
export type AppType = ReturnType<typeof createApp>;
