/** The closed set of machine codes of the contract, each with its one HTTP status. */
import type { ZodError } from 'zod';

export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  // A post from another origin (the CSRF rule of the local checkout page, any content type); the contract names no code.
  FORBIDDEN: 403,
  // EMAIL_VERIFICATION=required: a deposit or purchase by a user whose email is not verified yet.
  EMAIL_NOT_VERIFIED: 403,
  API_KEY_LIMIT_REACHED: 400,
  INSUFFICIENT_SCOPE: 403,
  SPEND_LIMIT_REACHED: 403,
  IP_NOT_ALLOWED: 403,
  // A test-mode route (/test/...) called with a live key.
  TEST_KEY_REQUIRED: 403,
  NOT_FOUND: 404,
  // A known path called with a method it does not serve (with `Allow`: src/middleware/method-not-allowed.ts).
  METHOD_NOT_ALLOWED: 405,
  VALIDATION_FAILED: 422,
  INSUFFICIENT_BALANCE: 400,
  INSUFFICIENT_STOCK: 400,
  INVALID_PACK_SIZE: 400,
  PRODUCT_UNAVAILABLE: 400,
  ORDER_NOT_CANCELLABLE: 400,
  CANCEL_LIMIT_REACHED: 400,
  AMOUNT_MISMATCH: 400,
  WEBHOOK_ENDPOINT_LIMIT_REACHED: 400,
  COUPON_INVALID: 400,
  PRICE_CHANGED: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  PAYLOAD_TOO_LARGE: 413,
  BLOCKED: 403,
  ACCOUNT_ON_HOLD: 403,
  WARRANTY_EXPIRED: 422,
  ALREADY_REPORTED: 409,
  CLAIM_RESOLVED: 409,
  // POST /user/referral/transfer with less available than the shop's min_transfer.
  TRANSFER_TOO_SMALL: 400,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_UNAVAILABLE: 503,
  GATEWAY_REJECTED: 422,
  INTERNAL_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type FieldErrors = Record<string, string[]>;

export class ApiError extends Error {
  readonly status: (typeof ERROR_STATUS)[ErrorCode];

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new ApiError('NOT_FOUND', `${what} not found.`);

export const unauthorized = (message = 'A valid API key is required (X-API-Key header).') =>
  new ApiError('UNAUTHORIZED', message);

/** A key without the scope(s) a request needs, or asking for a key wider than itself. */
export const insufficientScope = (scopes: string[], message = `This API key lacks the scope this request needs: ${scopes.join(', ')}.`) =>
  new ApiError('INSUFFICIENT_SCOPE', message, { scope: scopes });

export const validationFailed = (errors: FieldErrors, message = 'The given data was invalid.') =>
  new ApiError('VALIDATION_FAILED', message, errors);

export const fieldError = (field: string, message: string) => validationFailed({ [field]: [message] });

/** What a field that is not there at all fails with (a rule across fields, a `custom` issue, keeps its own words). */
const TYPE_ISSUES = new Set(['invalid_type', 'invalid_value', 'invalid_union']);

/** The value at `path` in `input`, or undefined when a step is missing. */
function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const step of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, step)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[step];
  }
  return value;
}

/**
 * zod issues as the contract's `errors` object: field path -> messages. With the `input` that was validated, a field
 * that is missing altogether says so ("quantity is required") rather than naming the type it should have had.
 */
export function fieldErrors(error: ZodError, input?: unknown): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
    const missing = input !== undefined && TYPE_ISSUES.has(issue.code) && issue.path.length > 0 && valueAt(input, issue.path) === undefined;
    (errors[field] ??= []).push(missing ? `${field} is required` : issue.message);
  }
  return errors;
}
