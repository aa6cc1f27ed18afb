import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';

// What every answer carries, applied once, on the way out, by the app's outermost middleware:
// - `X-Request-Id`: a well-formed incoming X-Request-Id echoed, otherwise one minted (`c.var.requestId` from the start);
// - `Cache-Control: no-store` unless the route set its own (only the public stock routes opt into caching; everything
//   else is private to its caller);
// - `X-Content-Type-Options: nosniff`: every answer is what its Content-Type says, a browser never sniffs JSON or text
//   into HTML or script;
// - every JSON answer ends with a line break, as `curl` users expect (the shell prompt no longer glues onto the last
//   brace). Added last, so whatever was built or stored before (an idempotent replay, a cached stock answer and its
//   ETag) is the same JSON text it was; the break is outside the JSON value, so no parser sees it.
// One middleware rather than three: Hono's `c.header()` after the handler copies the whole Response each time, so the
// headers are set on the answer's own (mutable) headers, and a JSON answer is made again once, with all of them.

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const finishResponse = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header('X-Request-Id');
  const id = incoming && VALID_REQUEST_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll('-', '')}`;
  c.set('requestId', id);
  await next();
  const res = c.res;
  if (res.body !== null && (res.headers.get('Content-Type') ?? '').startsWith('application/json')) {
    const text = await res.text();
    // Replaced whole (not merged with the old answer's headers, whose Content-Length no longer holds). Copied name by
    // name: `new Headers(res.headers)` of a Cache API hit comes out empty on workerd.
    const headers = new Headers();
    res.headers.forEach((value, name) => {
      if (name !== 'content-length' && name !== 'set-cookie') headers.set(name, value);
    });
    for (const cookie of res.headers.getSetCookie()) headers.append('Set-Cookie', cookie);
    setFinalHeaders(headers, id);
    c.res = undefined;
    c.res = new Response(text.endsWith('\n') ? text : `${text}\n`, { status: res.status, statusText: res.statusText, headers });
    return;
  }
  setResponseHeaders(c, (headers) => setFinalHeaders(headers, id));
});

function setFinalHeaders(headers: Headers, requestId: string) {
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'no-store');
  headers.set('X-Content-Type-Options', 'nosniff');
  headers.set('X-Request-Id', requestId);
}

/**
 * Sets headers on the answer already made, in place when its headers are mutable (a Response the app made), else on
 * a copy (a Response whose headers are immutable, as `fetch()` returns): what `c.header()` does after the handler,
 * without copying the Response every time.
 */
export function setResponseHeaders(c: Context, set: (headers: Headers) => void): void {
  try {
    set(c.res.headers);
  } catch {
    const copy = new Response(c.res.body, c.res);
    set(copy.headers);
    c.res = undefined;
    c.res = copy;
  }
}
