import { createMiddleware } from 'hono/factory';
import { resilient } from '../db/d1';
import type { AppEnv } from '../env';
import { bindingFor, requestMode } from './mode';
import { setResponseHeaders } from './finish-response';

// D1 read replication through the Sessions API. Reads (GET) may be served by a nearby replica: from any replica
// ('first-unconstrained'), or from one at least as fresh as the bookmark the client sends in X-D1-Bookmark, which
// is how a client reads its own writes. Everything else starts on the primary. A GET proves its API key in the
// same replica-served batch as its data, so a revoked key keeps reading for at most the replication lag (seconds);
// a write proves it on the primary, so a revoked key never moves money. Authenticated responses return the bookmark.

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const readOnly = c.req.method === 'GET' || c.req.method === 'HEAD';
  const presented = c.req.header('X-D1-Bookmark');
  // A malformed bookmark (an empty one too) cannot be honoured; the primary satisfies any bookmark, so it is the safe
  // fallback.
  const constraint = !readOnly || (presented !== undefined && !BOOKMARK.test(presented)) ? 'first-primary' : (presented ?? 'first-unconstrained');
  // A test key's request runs on the sandbox, whole (src/middleware/mode.ts).
  const mode = requestMode(c);
  c.set('mode', mode);
  const session = resilient(bindingFor(c.env, mode)).withSession(constraint);
  c.set('db', session as unknown as D1DatabaseSession);
  await next();
  const bookmark = session.getBookmark();
  if (bookmark && c.get('caller')?.proved) setResponseHeaders(c, (headers) => headers.set('X-D1-Bookmark', bookmark));
});
