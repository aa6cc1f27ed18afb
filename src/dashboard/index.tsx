import { Hono, type Context, type ErrorHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import type { AppEnv } from '../env';
import { ApiError } from '../lib/errors';
import { dashboardDatabase, isUnauthorized, signInAgain } from '../middleware/session';
import { authPages } from './auth';
import { keysPages } from './keys';
import { page } from './layout';
import { ordersPages } from './orders';
import { overviewPage } from './overview';
import { profilePages } from './profile';
import { resetPasswordPages } from './reset-password';
import { forgotPasswordPages } from './forgot-password';
import { verifyEmailPages } from './verify-email';
import { consolePages } from './console';
import { documentsPages } from './documents';
import { shopPages } from './shop';
import { walletPages } from './wallet';
import { referralsPages } from './referrals';

// The user dashboard: server-rendered pages under /dashboard, plain forms, no script. Each handler calls the service
// function its API twin calls (src/routes/*), so every rule, limit, batch and error code is the API's.

/** The pages' policy: nothing runs, only this service's stylesheet and images load, no other site may frame them. */
export const PAGE_CSP = {
  defaultSrc: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  scriptSrc: ["'none'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
  // No form-action: it would also govern where a form's redirect may go, and "Add funds" ends on the payment page.
};

export const dashboardSecureHeaders = secureHeaders({
  contentSecurityPolicy: PAGE_CSP,
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

const ERROR_TITLES = {
  400: 'Request refused',
  401: 'Not signed in',
  403: 'Request refused',
  404: 'Page not found',
  // Already done by someone else (a claim resolved, an item reported): nothing changed.
  409: 'Already done',
  422: 'Invalid request',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Briefly unavailable',
} as const;

type ErrorStatus = keyof typeof ERROR_TITLES;
const isRefusal = (status: number): status is ErrorStatus => status in ERROR_TITLES && status < 500;

const CROSS_SITE = 'This form was sent from another site, so it was refused. Open the dashboard and try again from there.';

function errorPage(c: Context<AppEnv>, status: ErrorStatus, message: string) {
  return page(
    c,
    {
      title: ERROR_TITLES[status],
      signedIn: c.get('caller')?.proved !== undefined,
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

export function createDashboardRouter(fallback: ErrorHandler<AppEnv>) {
  const router = new Hono<AppEnv>();
  router.use('*', dashboardDatabase);
  // Refusals are pages. Anything else goes through the app's handler first (it logs, and decides between a 503, when
  // the database did not answer and nothing was changed, and a 500), then is shown as a page too.
  router.onError(async (err, c) => {
    if (isUnauthorized(err) && c.get('caller') !== undefined) return signInAgain(c);
    if (err instanceof HTTPException && err.status === 403) return errorPage(c, 403, CROSS_SITE);
    if (err instanceof ApiError && isRefusal(err.status)) {
      for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
      return errorPage(c, err.status, err.message);
    }
    const answer = await fallback(err, c);
    return answer.status === 503
      ? errorPage(c, 503, 'The service is briefly unavailable and nothing was changed. Please try again in a moment.')
      : errorPage(c, 500, `Something went wrong on our side. If it keeps happening, quote request ${c.get('requestId')}.`);
  });
  for (const pages of [authPages, forgotPasswordPages, verifyEmailPages, resetPasswordPages, overviewPage, keysPages, walletPages, referralsPages, ordersPages, documentsPages, shopPages, profilePages, ...consolePages]) router.route('/', pages);
  return router;
}
