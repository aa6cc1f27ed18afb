import { requireAdmin, requireApiKey } from './middleware/auth';
import { d1Session } from './middleware/d1-session';
import { exactJsonBodies, refuseDeepJsonBodies } from './middleware/exact-json';
import { createRouter } from './routes/openapi';
import { finishResponse } from './middleware/finish-response';
import { requestLog } from './middleware/request-log';
import { requestPlace } from './middleware/request-place';
import { bodyLimits } from './middleware/body-limits';
import { renderError } from './middleware/render-error';
import { methodNotAllowedOrNotFound, refuseMethodsNotServed } from './middleware/method-not-allowed';
import { adminUsersRouter } from './routes/admin/users';
import { adminProductsRouter } from './routes/admin/products';
import { adminDepositsRouter } from './routes/admin/deposits';
import { adminOrdersRouter } from './routes/admin/orders';
import { adminStatsRouter } from './routes/admin/stats';
import { adminAuditLogRouter } from './routes/admin/audit-log';
import { authRouter } from './routes/accounts/auth';
import { adminEmailsRouter } from './routes/admin/emails';
import { adminCouponsRouter } from './routes/admin/coupons';
import { adminExportsRouter } from './routes/admin/exports';
import { adminGatewaysRouter } from './routes/admin/gateways';
import { apiKeysRouter } from './routes/accounts/api-keys';
import { eventsRouter } from './routes/events/events';
import { ordersRouter } from './routes/orders/orders';
import { revokedItemsRouter } from './routes/admin/revoked-items';
import { orderClaimsRouter } from './routes/orders/claims';
import { adminBlocklistRouter } from './routes/admin/blocklist';
import { adminClaimsRouter } from './routes/admin/claims';
import { adminHoldsRouter } from './routes/admin/holds';
import { adminRefundsRouter } from './routes/admin/refunds';
import { adminDocumentsRouter } from './routes/admin/documents';
import { billingRouter, documentsRouter } from './routes/documents/documents';
import { stockRouter } from './routes/catalogue/stock';
import { productImagesRouter } from './routes/admin/product-images';
import { registerStorefrontDocs, storefrontRouter } from './dashboard/storefront';
import { mediaRouter } from './routes/catalogue/media';
import { userRouter } from './routes/accounts/user';
import { referralRouter } from './routes/accounts/referral';
import { adminReferralsRouter } from './routes/admin/referrals';
import { referralLinkRouter } from './dashboard/referral-link';
import { walletRouter } from './routes/payments/wallet';
import { webhooksRouter } from './routes/payments/webhooks';
import { webhookEndpointsRouter } from './routes/events/webhook-endpoints';
import { createCheckoutRouter } from './routes/payments/checkout';
import { gatewayEventsRouter } from './routes/admin/gateway-events';
import { createDashboardRouter, dashboardHeaders } from './dashboard';
import { registerDashboardDocs } from './dashboard/openapi';
import { rememberVendorFailures } from './middleware/vendor-failures';
import { API_PREFIX, registerDocument, registerServiceInfo } from './routes/service';
import { testModeRouter } from './routes/sandbox/test-mode';
import { testOperatorRouter } from './routes/sandbox/test-operator';
import { registerTestPayDocs, testPayRouter } from './routes/sandbox/test-pay';
import { refreshSandboxAfterCatalogueChange } from './middleware/sandbox-refresh';

export function createApp() {
  const app = createRouter();

  app.use('*', finishResponse);
  app.use('*', requestLog);
  app.use('*', requestPlace);
  app.use('/dashboard/*', dashboardHeaders);
  app.use('*', bodyLimits);
  // 405 before 401: the method is decided before any credential is asked for.
  app.use('*', refuseMethodsNotServed(app.routes));

  app.use(`${API_PREFIX}/*`, exactJsonBodies);
  app.use(`${API_PREFIX}/*`, d1Session);
  // `/x/*` also matches `/x` itself in Hono, so this covers POST /orders and GET/POST /api-keys too. Registering the
  // bare paths as well ran the middleware twice there: two key lookups and two rate-limit counts per request.
  for (const path of ['/api-keys', '/user', '/orders', '/wallet', '/events', '/webhook-endpoints', '/test', '/documents']) app.use(`${API_PREFIX}${path}/*`, requireApiKey);
  app.use(`${API_PREFIX}/admin/*`, requireAdmin);
  // An operator's change to the catalogue refreshes the test-mode sandbox's copy after its response.
  app.use(`${API_PREFIX}/admin/*`, refreshSandboxAfterCatalogueChange);
  app.use('/dashboard/console/*', refreshSandboxAfterCatalogueChange);
  app.use(`${API_PREFIX}/*`, refuseDeepJsonBodies);
  app.use(`${API_PREFIX}/*`, rememberVendorFailures);

  registerServiceInfo(app);

  const api = app
    .route(`${API_PREFIX}/api-keys`, apiKeysRouter)
    .route(`${API_PREFIX}/user`, userRouter)
    .route(`${API_PREFIX}/user`, referralRouter)
    .route(`${API_PREFIX}/stock`, stockRouter)
    .route(`${API_PREFIX}/orders`, ordersRouter)
    .route(`${API_PREFIX}/orders`, orderClaimsRouter)
    .route(`${API_PREFIX}/wallet`, walletRouter)
    .route(`${API_PREFIX}/admin`, adminUsersRouter)
    .route(`${API_PREFIX}/admin`, adminProductsRouter)
    .route(`${API_PREFIX}/admin`, adminDepositsRouter)
    .route(`${API_PREFIX}/admin`, adminOrdersRouter)
    .route(`${API_PREFIX}/admin`, adminStatsRouter)
    .route(`${API_PREFIX}/admin`, adminAuditLogRouter)
    .route(`${API_PREFIX}/admin`, productImagesRouter)
    .route(`${API_PREFIX}/admin`, revokedItemsRouter)
    .route(`${API_PREFIX}/admin`, adminCouponsRouter)
    .route(`${API_PREFIX}/admin`, adminExportsRouter)
    .route(`${API_PREFIX}/admin`, adminGatewaysRouter)
    .route(`${API_PREFIX}/admin/gateway-events`, gatewayEventsRouter)
    .route(`${API_PREFIX}/webhooks`, webhooksRouter)
    .route(`${API_PREFIX}/events`, eventsRouter)
    .route(`${API_PREFIX}/webhook-endpoints`, webhookEndpointsRouter)
    .route(`${API_PREFIX}/auth`, authRouter)
    .route(`${API_PREFIX}/admin`, adminEmailsRouter)
    .route(`${API_PREFIX}/admin`, adminClaimsRouter)
    .route(`${API_PREFIX}/admin`, adminRefundsRouter)
    .route(`${API_PREFIX}/admin`, adminHoldsRouter)
    .route(`${API_PREFIX}/admin`, adminBlocklistRouter)
    .route(`${API_PREFIX}/admin`, adminDocumentsRouter)
    .route(`${API_PREFIX}/documents`, documentsRouter)
    .route(`${API_PREFIX}/user`, billingRouter)
    .route(`${API_PREFIX}/admin`, adminReferralsRouter)
    .route(`${API_PREFIX}/test`, testModeRouter)
    .route(`${API_PREFIX}/test`, testOperatorRouter);
  app.route('/test/pay', testPayRouter);
  app.route('/pay', createCheckoutRouter((request, env, ctx) => app.fetch(request, env, ctx)));
  app.route('/dashboard', createDashboardRouter(renderError));
  app.route('/', storefrontRouter);
  app.route('/', referralLinkRouter);
  app.route('/', mediaRouter);

  registerDocument(app);
  registerDashboardDocs(app);
  registerStorefrontDocs(app);
  registerTestPayDocs(app);

  // A known path with another method: 405 with `Allow`, from the routes registered above; an unknown path: 404.
  app.notFound(methodNotAllowedOrNotFound(app.routes));
  app.onError(renderError);
  return api;
}

/** The typed route tree, for `hc<AppType>` (src/client.ts). */
export type AppType = ReturnType<typeof createApp>;
