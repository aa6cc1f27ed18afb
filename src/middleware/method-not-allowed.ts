import type { Context } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import type { AppEnv } from '../env';
import { ApiError } from '../lib/errors';
import { renderError } from './render-error';

// A known path called with a method it does not serve is a 405 METHOD_NOT_ALLOWED with `Allow`, an unknown path a
// 404. What each path serves is read from the app's own routes (never a list kept by hand), with HEAD wherever GET is
// served, as Hono answers a HEAD with the GET handler.

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface Route {
  method: string;
  path: string;
}

/** The methods a path serves, by the routes registered (middleware, registered for `ALL`, serves nothing). */
export function methodsServed(routes: readonly Route[]): (path: string) => string[] {
  const router = new TrieRouter<string>();
  for (const { method, path } of routes) if (method !== 'ALL') router.add('ALL', path, method);
  return (path) => {
    const methods = new Set(router.match('GET', path)[0].map(([method]) => method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...ORDER.filter((method) => methods.has(method)), ...[...methods].filter((method) => !ORDER.includes(method)).sort()];
  };
}

function methodNotAllowed(c: Context<AppEnv>, allowed: string[]) {
  const allow = allowed.join(', ');
  return renderError(new ApiError('METHOD_NOT_ALLOWED', `${c.req.method} is not served here; this path serves ${allow}.`, undefined, { Allow: allow }), c);
}

/** The app's notFound: 405 with `Allow` for a path some route serves, else 404. The index is built on first use. */
export function methodNotAllowedOrNotFound(routes: readonly Route[]) {
  let served: ((path: string) => string[]) | undefined;
  return (c: Context<AppEnv>) => {
    const allowed = (served ??= methodsServed(routes))(c.req.path);
    if (allowed.length === 0) return renderError(new ApiError('NOT_FOUND', 'No such route.'), c);
    return methodNotAllowed(c, allowed);
  };
}

/**
 * The method is decided before any credential: a method the path does not serve needs no key (`DELETE
 * /wallet/balance` without one is a 405, not a 401). Registered before the auth middleware; the routes are read on
 * the first request, when every router has been mounted. An unknown path passes on (its auth, then the 404), and
 * so does OPTIONS: a CORS preflight is answered by its route's middleware (the public stock routes).
 */
export function refuseMethodsNotServed(routes: readonly Route[]) {
  let served: ((path: string) => string[]) | undefined;
  return async (c: Context<AppEnv>, next: () => Promise<void>) => {
    const allowed = (served ??= methodsServed(routes))(c.req.path);
    if (c.req.method !== 'OPTIONS' && allowed.length > 0 && !allowed.includes(c.req.method)) return methodNotAllowed(c, allowed);
    await next();
  };
}
