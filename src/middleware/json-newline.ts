import { createMiddleware } from 'hono/factory';

// Every JSON answer ends with a line break, as `curl` users expect: the shell prompt no longer glues onto the last
// brace. Added last, on the way out, so whatever was built or stored before it (an idempotent replay, a cached stock
// answer and its ETag) is the same JSON text it was; the break is outside the JSON value, so no parser sees it.

export const jsonNewline = createMiddleware(async (c, next) => {
  await next();
  const res = c.res;
  const type = res.headers.get('Content-Type') ?? '';
  if (res.body === null || !type.startsWith('application/json')) return;
  const text = await res.text();
  const headers = new Headers();
  res.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'set-cookie') headers.set(name, value);
  });
  for (const cookie of res.headers.getSetCookie()) headers.append('Set-Cookie', cookie);
  headers.set('Content-Type', type);
  // Replaced whole (not merged with the old answer's headers, whose Content-Length no longer holds).
  c.res = undefined;
  c.res = new Response(text.endsWith('\n') ? text : `${text}\n`, { status: res.status, statusText: res.statusText, headers });
});
