import { Hono, type Context, type ErrorHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from '../env';
import { ApiError } from '../lib/errors';
import { authPages } from './auth';
import { keysPages } from './keys';
import { page } from './layout';
import { ordersPages } from './orders';
import { overviewPage } from './overview';
import { profilePages } from './profile';
import { shopPages } from './shop';
import { ICON, ICON_PATH, STYLESHEET, STYLESHEET_PATH } from './styles';
import { walletPages } from './wallet';

// The user dashboard: server-rendered pages under /dashboard, plain forms, no script. Each handler calls the service
// function its API twin calls (src/routes/*), so every rule, limit, batch and error code is the API's.

const dashboardSecureHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    scriptSrc: ["'none'"],
    baseUri: ["'none'"],
    frameAncestors: ["'none'"],
    // No form-action: it would also govern where a form's redirect may go, and "Add funds" ends on the payment page.
  },
  referrerPolicy: 'same-origin',
  xFrameOptions: 'DENY',
});

/** Every dashboard response, error pages and body-limit refusals included: security headers, never cached. */
export const dashboardHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await dashboardSecureHeaders(c, async () => {
    await next();
    c.header('Cache-Control', 'no-store');
  });
});

/** Pages read and write the primary: after a form's redirect the next page must see what the form did. */
const primaryDatabase = createMiddleware<AppEnv>(async (c, next) => {
  c.set('db', c.env.DB.withSession('first-primary'));
  await next();
});

const ERROR_TITLES = {
  400: 'Request refused',
  401: 'Not signed in',
  403: 'Request refused',
  404: 'Page not found',
  422: 'Invalid request',
  429: 'Too many requests',
} as const;

type RefusalStatus = keyof typeof ERROR_TITLES;
const isRefusal = (status: number): status is RefusalStatus => status in ERROR_TITLES;

const CROSS_SITE = 'This form was sent from another site, so it was refused. Open the dashboard and try again from there.';

function errorPage(c: Context<AppEnv>, status: RefusalStatus, message: string) {
  return page(
    c,
    {
      title: ERROR_TITLES[status],
      signedIn: c.get('session') !== undefined,
      children: (
        <div class="card">
          <p>{message}</p>
          <p>
            <a href="/dashboard">Back to the dashboard</a>
          </p>
        </div>
      ),
    },
    status,
  );
}

/** The service's icon, here and at /favicon.ico (where browsers look for it on pages that name none). */
export const serveIcon = (c: Context) => c.body(ICON, 200, { 'Content-Type': 'image/svg+xml' });

export function createDashboardRouter(fallback: ErrorHandler<AppEnv>) {
  const router = new Hono<AppEnv>();
  router.use('*', primaryDatabase);
  // Refusals are pages; anything unexpected goes to the app's handler (logged, and a 500 without details).
  router.onError((err, c) => {
    if (err instanceof HTTPException && err.status === 403) return errorPage(c, 403, CROSS_SITE);
    if (err instanceof ApiError && isRefusal(err.status)) {
      for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
      return errorPage(c, err.status, err.message);
    }
    return fallback(err, c);
  });
  router.get(STYLESHEET_PATH.slice('/dashboard'.length), (c) => c.body(STYLESHEET, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  router.get(ICON_PATH.slice('/dashboard'.length), serveIcon);
  for (const pages of [authPages, overviewPage, keysPages, walletPages, ordersPages, shopPages, profilePages]) router.route('/', pages);
  return router;
}
