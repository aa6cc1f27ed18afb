import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';

const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming X-Request-Id, otherwise mint one; every response carries it. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header('X-Request-Id');
  const id = incoming && VALID_REQUEST_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll('-', '')}`;
  c.set('requestId', id);
  await next();
  c.header('X-Request-Id', id);
});
