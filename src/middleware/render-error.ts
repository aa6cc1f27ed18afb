import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { DatabaseUnavailable } from '../db/d1';
import type { AppEnv } from '../env';
import { errorBody } from '../lib/envelope';
import { ApiError } from '../lib/errors';
import { errorSummary } from './after-response';
import { routeOf } from './request-log';

// Every error answer is shaped here, in the contract's envelope (app.onError and notFound use it).

/** The stack's frames without its first line, which repeats the message (and drizzle puts SQL parameters there). */
const framesOf = (err: Error) => (err.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).slice(0, 8).join('\n');

/** Hono's own HTTP exceptions (malformed JSON, unsupported media type) rendered as contract errors. */
function fromHttpException(err: HTTPException): ApiError {
  if (err.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
  if (err.status === 400 || err.status === 415) {
    const message = err.status === 415 ? 'The body must be JSON (Content-Type: application/json).' : 'The body is not valid JSON.';
    return new ApiError('VALIDATION_FAILED', message, { body: [message] });
  }
  if (err.status === 401) return new ApiError('UNAUTHORIZED', err.message || 'Unauthorized.');
  if (err.status === 403) return new ApiError('FORBIDDEN', 'Posts from another origin are not accepted here.');
  if (err.status === 404) return new ApiError('NOT_FOUND', 'Not found.');
  return new ApiError('INTERNAL_ERROR', 'Internal server error.');
}

/** Nothing was committed and the database did not answer in time: the client may retry after a moment. */
const unavailable = (err: DatabaseUnavailable) =>
  new ApiError('SERVICE_UNAVAILABLE', 'The service is briefly unavailable; nothing was changed. Retry after the Retry-After delay.', undefined, {
    'Retry-After': String(err.retryAfterSeconds),
  });

/** drizzle wraps errors of the binding (its message quotes the SQL): the database's verdict is in the cause chain. */
function unavailableCause(err: unknown): DatabaseUnavailable | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) if (e instanceof DatabaseUnavailable) return e;
  return null;
}

export function renderError(err: Error, c: Context<AppEnv>) {
  const dbUnavailable = unavailableCause(err);
  const apiError =
    err instanceof ApiError ? err : err instanceof HTTPException ? fromHttpException(err) : dbUnavailable ? unavailable(dbUnavailable) : null;
  if (!apiError || apiError.code === 'INTERNAL_ERROR' || apiError.code === 'SERVICE_UNAVAILABLE') {
    // Logged: the error's class and D1's own message, the route and the request id; never SQL parameters, keys,
    // hashes or stock items. The client only gets the request id to quote.
    console.error(
      JSON.stringify({ level: 'error', request_id: c.get('requestId'), route: routeOf(c), ...errorSummary(err), stack: framesOf(err) }),
    );
  }
  if (!apiError) return c.json(errorBody('INTERNAL_ERROR', 'Internal server error.'), 500);
  for (const [name, value] of Object.entries(apiError.headers ?? {})) c.header(name, value);
  return c.json(errorBody(apiError.code, apiError.message, apiError.errors), apiError.status);
}

