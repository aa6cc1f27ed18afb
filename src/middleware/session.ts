import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { resilient } from '../db/d1';
import type { AppEnv } from '../env';
import { sha256Hex } from '../lib/crypto';
import { ApiError } from '../lib/errors';
import { queryAsOperator, readAs } from '../services/caller';
import { notFound } from '../lib/errors';
import { SESSION_ABSOLUTE_MS, SESSION_TOKEN_SHAPE, sessionCaller, touchSession } from '../services/accounts/sessions';
import { runAfterResponse } from './after-response';

// The dashboard's session cookie. HttpOnly (no script reads it), Secure, SameSite=Lax (not sent on cross-site posts),
// and scoped to /dashboard, so it never travels with API requests; it lives no longer than the session can.

const SESSION_COOKIE = 'dashboard_session';
const COOKIE = { httpOnly: true, secure: true, sameSite: 'Lax', path: '/dashboard' } as const;

export const sessionCookie = (c: Context) => getCookie(c, SESSION_COOKIE);

export const setSessionCookie = (c: Context, token: string) =>
  setCookie(c, SESSION_COOKIE, token, { ...COOKIE, maxAge: SESSION_ABSOLUTE_MS / 1000 });

export const clearSessionCookie = (c: Context) => deleteCookie(c, SESSION_COOKIE, COOKIE);

/**
 * Dashboard pages read and write the primary: the page a form redirects to must show what the form did, and the
 * browser holds no cookie but the session's to carry a replica bookmark in.
 */
export const dashboardDatabase = createMiddleware<AppEnv>(async (c, next) => {
  c.set('db', resilient(c.env.DB).withSession('first-primary') as unknown as D1DatabaseSession);
  await next();
});

/**
 * A URL's path and query for a redirect, without `api_key`: an API key pasted into a dashboard URL (which never
 * authenticates it) is dropped rather than copied into a Location, browser history and logs.
 */
export function pathAndQuery(url: URL): string {
  url.searchParams.delete('api_key');
  return url.pathname + url.search;
}

/**
 * A page or form that found no live session: 303 to sign-in with `next` (this page with its query, or the path a
 * form posted to). A response of its own, so it can replace one already rendered. A stale cookie is left for the
 * sign-in page, which drops it and says the session ended (see endedSession).
 */
export function signInAgain(c: Context): Response {
  const url = new URL(c.req.url);
  const back = c.req.method === 'GET' ? pathAndQuery(url) : url.pathname;
  return new Response(null, { status: 303, headers: { Location: `/dashboard/sign-in?next=${encodeURIComponent(back)}` } });
}

/**
 * For the sign-in page: whether the browser still holds the cookie of a session that is no longer live (it expired,
 * was signed out elsewhere, or a password change ended it); such a cookie, or a malformed one, is dropped. Told by
 * the cookie and the database, never by the URL, so a link from elsewhere cannot make the page claim a session ended.
 * One round trip, only when a cookie came with the request.
 */
export async function endedSession(c: Context<AppEnv>): Promise<boolean> {
  const token = sessionCookie(c);
  if (token === undefined) return false;
  let ended = false;
  if (SESSION_TOKEN_SHAPE.test(token)) {
    try {
      await readAs(c.var.db, sessionCaller(await sha256Hex(token)), []);
      return false;
    } catch (err) {
      if (!isUnauthorized(err)) throw err;
      ended = true;
    }
  }
  clearSessionCookie(c);
  return ended;
}

/** The hash of the session this request came with (a password change keeps it). */
export const currentSessionHash = async (c: Context) => sha256Hex(sessionCookie(c) ?? '');

export const isUnauthorized = (err: unknown) => err instanceof ApiError && err.code === 'UNAUTHORIZED';

/**
 * Dashboard pages and form posts act for the session's user. Like an API key ([auth.ts](./auth.ts)), nothing is
 * looked up here: the cookie's hash becomes the request's `caller`, proved by the first statement of the page's own
 * batch; a session that is not live makes the page answer 303 to sign-in (the dashboard's error handler), and its
 * writes change nothing. The idle expiry slides forward after the response.
 */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  const token = sessionCookie(c);
  if (!token || !SESSION_TOKEN_SHAPE.test(token)) return signInAgain(c);
  const tokenHash = await sha256Hex(token);
  const caller = sessionCaller(tokenHash);
  caller.place = c.var.place;
  c.set('caller', caller);
  await next();
  // Refused before any batch ran (a malformed id, an invalid form): without a live session that is a sign-in too.
  if (!caller.proved && c.res.status >= 400 && c.res.status < 500 && c.res.status !== 429) {
    await readAs(c.var.db, caller, []).catch((err) => {
      if (!isUnauthorized(err)) throw err;
      c.res = undefined;
      c.res = signInAgain(c);
    });
  }
  const touch = caller.proved && touchSession(resilient(c.env.DB), tokenHash, caller.proved.lastUsedAt);
  if (touch) runAfterResponse(c, touch);
});

/**
 * The console's pages and posts: a session (as requireSession) whose user is an operator. Each page's and form's own
 * batch proves both (queryAsOperator, writeAsActor); a response made without such a batch (an idempotent form's
 * replay, a refusal before any batch) pays one proof read here. A signed-in non-operator gets 404: the console is
 * not revealed.
 */
export const requireOperatorSession = createMiddleware<AppEnv>((c, next) =>
  requireSession(c, async () => {
    await next();
    const caller = c.var.caller;
    if (!caller.proved) await queryAsOperator(c.var.db, caller, []);
    else if (caller.proved.role !== 'operator') throw notFound('Page');
  }),
);
