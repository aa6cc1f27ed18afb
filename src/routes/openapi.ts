import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { requireScope } from '../middleware/auth';
import type { Scope } from '../lib/scopes';
import { ErrorBody } from '../lib/envelope';
import { fieldErrors, validationFailed } from '../lib/errors';
import { ID_TEXT, IDEMPOTENCY_KEY, MAX_PATH_ID } from '../lib/validation';

/** Every router validates through this hook, so a bad request is always the same 422 envelope. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    // @hono/zod-validator hands the hook the input it validated as `data` (zod-openapi's type leaves it out): a field
    // missing from it is reported as required.
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(fieldErrors(result.error, (result as { data?: unknown }).data));
    },
  });
}

/**
 * A JSON request body. It is `required` unless the schema accepts `{}`: a request without a body is validated as
 * `{}`, so an all-optional body (a partial update) may be left out, and the document says so.
 */
export const jsonBody = <T extends z.ZodType>(schema: T, description?: string) => ({
  required: !schema.safeParse({}).success,
  description,
  content: { 'application/json': { schema } },
});

export const jsonResponse = <T extends z.ZodType>(schema: T, description: string, links?: ReturnType<typeof idLinks>) => ({
  description,
  content: { 'application/json': { schema } },
  ...(links && { links }),
});

/**
 * OpenAPI links from a response to the operations that take the id it returns (`{ operationId: parameter }`, the
 * id at `pointer` in the body), so generated clients and stateful fuzzers can chain the calls.
 */
export const idLinks = (pointer: string, targets: Record<string, string>) =>
  Object.fromEntries(
    Object.entries(targets).map(([operationId, parameter]) => [operationId, { operationId, parameters: { [parameter]: `$response.body#${pointer}` } }]),
  );

const ERROR_DESCRIPTIONS = {
  400: 'Business rule rejected the request (see `code`)',
  401: 'Missing, invalid or revoked credentials (`UNAUTHORIZED`)',
  403: "A form post from another origin (`FORBIDDEN`); an API key lacking the route's scope or making a wider key (`INSUFFICIENT_SCOPE`), used from outside its allowed IPs (`IP_NOT_ALLOWED`), or past its daily spend limit (`SPEND_LIMIT_REACHED`); a deposit or purchase before the email is verified (`EMAIL_NOT_VERIFIED`, with EMAIL_VERIFICATION=required); a sign-up, deposit or purchase matching the shop's blocklist (`BLOCKED`); a deposit or purchase by an account on hold (`ACCOUNT_ON_HOLD`)",
  404: 'Unknown resource (`NOT_FOUND`)',
  409: 'The purchase\'s total now differs from `expected_total` (`PRICE_CHANGED`, `errors: { expected_total, total }`); nothing was charged. An item already reported (`ALREADY_REPORTED`); a claim already resolved (`CLAIM_RESOLVED`)',
  413: 'Body too large (`PAYLOAD_TOO_LARGE`)',
  422: 'Invalid fields (`VALIDATION_FAILED`); creating a deposit, also a payment provider that refused the invoice (`GATEWAY_REJECTED`)',
  429: 'Rate limit exceeded (`RATE_LIMITED`)',
  500: 'Unexpected error (`INTERNAL_ERROR`)',
  503: 'The database (`SERVICE_UNAVAILABLE`) or, creating a deposit, a payment provider (`GATEWAY_UNAVAILABLE`) was briefly unavailable and nothing was changed; with `Retry-After`',
} as const;

export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

/**
 * The route's own error statuses, plus those any route can answer: a body over the limit, an unexpected error, and
 * a database briefly unavailable.
 */
export function errorResponses(...statuses: ErrorStatus[]) {
  return Object.fromEntries(
    [...new Set<ErrorStatus>([...statuses, 413, 500, 503])].map((status) => [status, jsonResponse(ErrorBody, ERROR_DESCRIPTIONS[status])]),
  ) as Record<ErrorStatus, ReturnType<typeof jsonResponse<typeof ErrorBody>>>;
}

export { ID_TEXT, MAX_PATH_ID };

/** Positive integer path id (1..MAX_PATH_ID); anything else is a 422, never a 500 or a silent coercion. */
export const pathId = (name: string) =>
  z
    .string()
    .regex(ID_TEXT, `${name} must be a positive integer, at most ${MAX_PATH_ID}`)
    .transform(Number)
    .openapi({ param: { name, in: 'path' }, type: 'integer', minimum: 1, maximum: MAX_PATH_ID, example: 1 });

export const IdParams = z.object({ id: pathId('id') });

/**
 * A route behind an API key, with the one scope it needs: the security requirement (and `x-required-scope`) of its
 * OpenAPI operation, and the middleware that makes the request's proof check that scope. Spread into `createRoute`.
 */
export const needsScope = (scope: Scope) => ({
  security: [{ ApiKeyHeader: [scope] }, { ApiKeyQuery: [scope] }] as Array<Record<string, string[]>>,
  'x-required-scope': scope,
  middleware: requireScope(scope),
});

/**
 * Documents the optional `Idempotency-Key` header (as a plain parameter, so typed clients need not pass it);
 * src/middleware/idempotency.ts validates it with the same pattern and applies it.
 */
export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description: '1..255 printable ASCII characters. Same key and same request within 24 h replays the first response.',
  schema: { type: 'string' as const, pattern: IDEMPOTENCY_KEY.source, example: 'order-2026-11-21-0001' },
};
