import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { ErrorBody } from '../lib/envelope';
import { fieldErrors, validationFailed } from '../lib/errors';

/** Every router validates through this hook, so a bad request is always the same 422 envelope. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(fieldErrors(result.error));
    },
  });
}

export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: true,
  description,
  content: { 'application/json': { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

const ERROR_DESCRIPTIONS = {
  400: 'Business rule rejected the request (see `code`)',
  401: 'Missing, invalid or revoked credentials (`UNAUTHORIZED`)',
  404: 'Unknown resource (`NOT_FOUND`)',
  413: 'Body too large (`PAYLOAD_TOO_LARGE`)',
  422: 'Invalid fields (`VALIDATION_FAILED`)',
  429: 'Rate limit exceeded (`RATE_LIMITED`)',
  500: 'Unexpected error (`INTERNAL_ERROR`)',
} as const;

export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/** The route's own error statuses, plus the two any route can answer: a body over the limit, an unexpected error. */
export function errorResponses(...statuses: ErrorStatus[]) {
  return Object.fromEntries(
    [...new Set<ErrorStatus>([...statuses, 413, 500])].map((status) => [status, jsonResponse(ErrorBody, ERROR_DESCRIPTIONS[status])]),
  ) as Record<ErrorStatus, ReturnType<typeof jsonResponse<typeof ErrorBody>>>;
}

/** Positive integer path id; anything else is a 422, never a 500 or a silent coercion. */
export const pathId = (name: string) =>
  z
    .string()
    .regex(/^[1-9]\d{0,14}$/, `${name} must be a positive integer`)
    .transform(Number)
    .openapi({ param: { name, in: 'path' }, type: 'integer', example: 1 });

export const IdParams = z.object({ id: pathId('id') });

export const securedByApiKey: Array<Record<string, string[]>> = [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }];

/**
 * Documents the optional `Idempotency-Key` header (as a plain parameter, so typed clients need not pass it);
 * src/middleware/idempotency.ts validates and applies it.
 */
export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description: '1..255 printable characters. Same key and same request within 24 h replays the first response.',
  schema: { type: 'string' as const, minLength: 1, maxLength: 255, example: 'order-2026-11-21-0001' },
};
