import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './env';
import { requireAdmin, requireApiKey } from './middleware/auth';
import { d1Session } from './middleware/d1-session';
import { errorBody } from './lib/envelope';
import { ApiError } from './lib/errors';
import { createRouter } from './lib/openapi';
import { requestId } from './middleware/request-id';
import { requestLog } from './middleware/request-log';
import { adminRouter } from './routes/admin';
import { apiKeysRouter } from './routes/api-keys';
import { ordersRouter } from './routes/orders';
import { stockRouter } from './routes/stock';
import { userRouter } from './routes/user';
import { walletRouter } from './routes/wallet';
import { webhooksRouter } from './routes/webhooks';
import { createCheckoutRouter } from './routes/checkout';
import { createDocsRouter } from './routes/docs';
import { createDashboardRouter, dashboardHeaders, serveIcon } from './dashboard';
import { registerDashboardDocs } from './dashboard/openapi';
import { API_PREFIX, registerDocument, registerServiceInfo } from './routes/service';

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

export function createApp() {
  const app = createRouter();

  app.use('*', requestId);
  app.use('*', requestLog);
  app.use('*', async (c, next) => {
    await next();
    // Only the public stock routes opt into caching; everything else is private to its caller.
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  app.use('/dashboard/*', dashboardHeaders);
  const defaultBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: payloadTooLarge(MAX_BODY_BYTES) });
  const stockUploadBodyLimit = bodyLimit({ maxSize: MAX_STOCK_UPLOAD_BYTES, onError: payloadTooLarge(MAX_STOCK_UPLOAD_BYTES) });
  app.use('*', (c, next) => (STOCK_UPLOAD_PATH.test(c.req.path) ? stockUploadBodyLimit : defaultBodyLimit)(c, next));

  app.use(`${API_PREFIX}/*`, d1Session);
  // `/x/*` also matches `/x` itself in Hono, so this covers POST /orders and GET/POST /api-keys too. Registering the
  // bare paths as well ran the middleware twice there: two key lookups and two rate-limit counts per request.
  for (const path of ['/api-keys', '/user', '/orders', '/wallet']) app.use(`${API_PREFIX}${path}/*`, requireApiKey);
  app.use(`${API_PREFIX}/admin/*`, requireAdmin);

  registerServiceInfo(app);

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
  app.route('/dashboard', createDashboardRouter(renderError));
  app.get('/favicon.ico', serveIcon);

  registerDocument(app);
  registerDashboardDocs(app);

  app.notFound((c) => renderError(new ApiError('NOT_FOUND', 'No such route.'), c));
  app.onError(renderError);
  return api;
}

/** The typed route tree, for `hc<AppType>` (src/client.ts). */
export type AppType = ReturnType<typeof createApp>;
