import { z } from '@hono/zod-openapi';
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { readConfig, type AppEnv } from '../env';
import { ApiError, notFound } from '../lib/errors';
import { withConfirmation } from '../lib/validation';
import { clearSessionCookie, endedSession, pathAndQuery, sessionCookie, setSessionCookie } from '../middleware/session';
import { clientIp, enforceRateLimit } from '../middleware/rate-limit';
import { CreateUserBody, referralCode, userEmail } from '../schemas/users';
import { getCookie } from 'hono/cookie';
import { REFERRAL_COOKIE, referredByValue } from '../services/referrals/codes';
import { endSession, newSessionToken, signIn } from '../services/accounts/sessions';
import { signUp } from '../services/accounts/users';
import { mailFor } from '../middleware/send-emails';
import { Alert, Field, Notice } from './components';
import { formHandler, parseForm, sameOriginForm, type FormFields, type FormProblem } from './forms';
import { page } from './layout';

// Signing in, up and out. Sign-in and sign-up are throttled per client IP, sign-in also per email (password guessing
// and the PBKDF2 each attempt costs). A wrong password and an unknown email get the same 401 page.

const SignInBody = z.object({ email: userEmail, password: z.string().min(1, 'password is required').max(200, 'password is too long') });

/** The operator's user creation rules (POST /admin/users), plus the confirmation a person types. */
export const SignUpBody = withConfirmation(
  CreateUserBody.extend({ password_confirmation: z.string(), referral_code: z.union([z.literal(''), referralCode]).optional() }),
  'password',
  'password_confirmation',
  'password_confirmation',
);

/**
 * Who referred a sign-up: the code typed in the form (a code nobody has is a 422 on the field), else the one the
 * referral link left in its cookie (only a hint: unknown, it records nothing). The form shows the cookie's code, so
 * the same code sent back is the cookie's.
 */
function signUpReferral(c: Context, typed: string | undefined, email: string) {
  const remembered = getCookie(c, REFERRAL_COOKIE);
  const code = typed?.trim() || remembered;
  return referredByValue(code, email, Boolean(typed?.trim()) && typed!.trim().toUpperCase() !== remembered);
}

const SIGNED_IN_HOME = '/dashboard';
/** Where an operator lands after signing in without a `next`: the console, where their work is. */
const OPERATOR_HOME = '/dashboard/console';
const WRONG_CREDENTIALS = 'The email or password is incorrect.';

/** `next` when it is a path under /dashboard on this very origin; anything else (another site, /api) goes home. */
export function signedInDestination(next: string | undefined, requestUrl: string, home = SIGNED_IN_HOME): string {
  if (!next || !next.startsWith('/')) return home;
  const origin = new URL(requestUrl).origin;
  let target: URL;
  try {
    target = new URL(next, origin);
  } catch {
    return home;
  }
  const underDashboard = target.pathname === '/dashboard' || target.pathname.startsWith('/dashboard/');
  return target.origin === origin && underDashboard ? pathAndQuery(target) : home;
}

interface SignInView {
  next?: string;
  /** The browser came with the cookie of a session that has ended. */
  sessionEnded?: boolean;
  values?: FormFields;
  problem?: FormProblem;
  signupOpen: boolean;
}

function signInPage(c: Context, { next, sessionEnded, values, problem, signupOpen }: SignInView, status: 200 | FormProblem['status'] = 200) {
  const action = next ? `/dashboard/sign-in?next=${encodeURIComponent(next)}` : '/dashboard/sign-in';
  return page(
    c,
    {
      title: 'Sign in',
      children: (
        <div class="card narrow">
          {sessionEnded && <Notice>Your session ended; sign in again</Notice>}
          <Alert problem={problem} />
          <form method="post" action={action}>
            <Field name="email" label="Email" type="email" value={values?.email} problem={problem} autocomplete="username" required />
            <Field name="password" label="Password" type="password" problem={problem} autocomplete="current-password" required />
            <button type="submit">Sign in</button>
          </form>
          <p>
            <a href="/dashboard/forgot-password">Forgot password?</a>
          </p>
          {signupOpen && (
            <p>
              New here? <a href="/dashboard/sign-up">Create an account</a>
            </p>
          )}
          <p>
            <a href="/shop">Browse the shop</a> without signing in.
          </p>
        </div>
      ),
    },
    status,
  );
}

function signUpPage(c: Context, { values, problem }: { values?: FormFields; problem?: FormProblem }, status: 200 | FormProblem['status'] = 200) {
  return page(
    c,
    {
      title: 'Create an account',
      children: (
        <div class="card narrow">
          <Alert problem={problem} />
          <form method="post" action="/dashboard/sign-up">
            <Field name="name" label="Name" value={values?.name} problem={problem} autocomplete="name" required maxlength={100} />
            <Field name="email" label="Email" type="email" value={values?.email} problem={problem} autocomplete="email" required />
            <Field name="password" label="Password" type="password" problem={problem} autocomplete="new-password" required />
            <Field name="password_confirmation" label="Confirm password" type="password" problem={problem} autocomplete="new-password" required />
            <Field name="referral_code" label="Referral code (optional)" value={values?.referral_code ?? getCookie(c, REFERRAL_COOKIE)} problem={problem} maxlength={16} />
            <button type="submit">Create account</button>
          </form>
          <p>
            Already have an account? <a href="/dashboard/sign-in">Sign in</a>
          </p>
        </div>
      ),
    },
    status,
  );
}

/** Sign-up exists only when the operator opened it (DASHBOARD_SIGNUP=open). */
const signupMustBeOpen = createMiddleware<AppEnv>(async (c, next) => {
  if (!readConfig(c.env).dashboardSignup) throw notFound('Page');
  await next();
});

export const authPages = new Hono<AppEnv>()
  .get('/sign-in', async (c) =>
    signInPage(c, { next: c.req.query('next'), sessionEnded: await endedSession(c), signupOpen: readConfig(c.env).dashboardSignup }),
  )
  .post(
    '/sign-in',
    sameOriginForm,
    formHandler(
      async (c, fields) => {
        await enforceRateLimit(c.env.SIGN_IN_IP_RATE_LIMITER, `ip:${clientIp(c)}`);
        const { email, password } = parseForm(SignInBody, fields);
        await enforceRateLimit(c.env.SIGN_IN_EMAIL_RATE_LIMITER, `email:${email.toLowerCase()}`);
        const session = await signIn(c.var.db, email, password, c.var.place);
        if (!session) throw new ApiError('UNAUTHORIZED', WRONG_CREDENTIALS);
        setSessionCookie(c, session.token);
        return c.redirect(signedInDestination(c.req.query('next'), c.req.url, session.operator ? OPERATOR_HOME : SIGNED_IN_HOME), 303);
      },
      (c, fields, problem) =>
        signInPage(c, { next: c.req.query('next'), values: fields, problem, signupOpen: readConfig(c.env).dashboardSignup }, problem.status),
    ),
  )
  .get('/sign-up', signupMustBeOpen, (c) => signUpPage(c, {}))
  .post(
    '/sign-up',
    sameOriginForm,
    signupMustBeOpen,
    formHandler(
      async (c, fields) => {
        await enforceRateLimit(c.env.SIGN_UP_IP_RATE_LIMITER, `ip:${clientIp(c)}`);
        const { name, email, password, referral_code } = parseForm(SignUpBody, fields);
        const session = await newSessionToken();
        await signUp(c.var.db, { name, email, password }, session, mailFor(c), c.var.place, signUpReferral(c, referral_code, email));
        setSessionCookie(c, session.token);
        return c.redirect(SIGNED_IN_HOME, 303);
      },
      (c, fields, problem) => signUpPage(c, { values: fields, problem }, problem.status),
    ),
  )
  .post('/sign-out', sameOriginForm, async (c) => {
    const token = sessionCookie(c);
    if (token) await endSession(c.var.db, token);
    clearSessionCookie(c);
    return c.redirect('/dashboard/sign-in', 303);
  });
