import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { findSession, SESSION_ABSOLUTE_MS } from '../services/sessions';
import { runAfterResponse } from './auth';

// The dashboard's session cookie. HttpOnly (no script reads it), Secure, SameSite=Lax (not sent on cross-site posts),
// and scoped to /dashboard, so it never travels with API requests; it lives no longer than the session can.

const SESSION_COOKIE = 'dashboard_session';
const COOKIE = { httpOnly: true, secure: true, sameSite: 'Lax', path: '/dashboard' } as const;

export const sessionCookie = (c: Context) => getCookie(c, SESSION_COOKIE);

export const setSessionCookie = (c: Context, token: string) =>
  setCookie(c, SESSION_COOKIE, token, { ...COOKIE, maxAge: SESSION_ABSOLUTE_MS / 1000 });

export const clearSessionCookie = (c: Context) => deleteCookie(c, SESSION_COOKIE, COOKIE);

/** Where sign-in sends the browser back to: this page with its query, or the path a form posted to. */
function returnPath(c: Context): string {
  const url = new URL(c.req.url);
  return c.req.method === 'GET' ? url.pathname + url.search : url.pathname;
}

/**
 * Dashboard pages and form posts: resolves the session (one query) and sets `session`, or answers 303 to the sign-in
 * page with `next` and runs nothing else. The idle expiry slides forward after the response.
 */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  const token = sessionCookie(c);
  const session = token ? await findSession(c.var.db, token) : null;
  if (!session) {
    if (token) clearSessionCookie(c);
    return c.redirect(`/dashboard/sign-in?next=${encodeURIComponent(returnPath(c))}`, 303);
  }
  c.set('session', { id: session.id, userId: session.userId });
  if (session.touch) runAfterResponse(c, session.touch());
  await next();
});
