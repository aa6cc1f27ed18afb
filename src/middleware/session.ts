import type { Context } from 'hono';
import { deleteCookie, generateCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { resilient } from '../db/d1';
import type { AppEnv } from '../env';
import { sha256Hex } from '../lib/crypto';
import { ApiError } from '../lib/errors';
import { readAs } from '../services/caller';
import { SESSION_ABSOLUTE_MS, SESSION_TOKEN_SHAPE, sessionCaller, touchSession } from '../services/sessions';
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
 * form posted to), the stale cookie dropped. A response of its own, so it can replace one already rendered.
 */
export function signInAgain(c: Context): Response {
  const url = new URL(c.req.url);
  const back = c.req.method === 'GET' ? pathAndQuery(url) : url.pathname;
  const headers = new Headers({ Location: `/dashboard/sign-in?next=${encodeURIComponent(back)}` });
  if (sessionCookie(c) !== undefined) headers.append('Set-Cookie', generateCookie(SESSION_COOKIE, '', { ...COOKIE, maxAge: 0 }));
  return new Response(null, { status: 303, headers });
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
