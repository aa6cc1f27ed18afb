import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { resilient } from '../db/d1';
import { placeOf, type RequestPlace } from '../lib/place';
import { countHits } from '../services/accounts/blocklist';
import { runAfterResponse } from './after-response';

declare module 'hono' {
  interface ContextVariableMap {
    /** Where the request comes from (address, country, network), for the blocklist. */
    place: RequestPlace;
  }
}

/**
 * Every request knows where it comes from (`CF-Connecting-IP`, `request.cf`); a change the blocklist refused names
 * the rules it matched on it, and their hits are counted after the response, never delaying it.
 */
export const requestPlace = createMiddleware<AppEnv>(async (c, next) => {
  const place = placeOf(c.req.raw, c.req.header('CF-Connecting-IP'));
  c.set('place', place);
  await next();
  if (place.blockedBy?.length) runAfterResponse(c, countHits(c.var.db ?? resilient(c.env.DB), place.blockedBy));
});
