import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { runIdempotent } from '../middleware/idempotency';
import { sameOriginOnly } from '../middleware/same-origin';
import { isUnauthorized } from '../middleware/session';
import type { IdempotencyClaim, KeyOwner } from '../services/idempotency';
import type { z } from 'zod';
import { ApiError, fieldError, fieldErrors, notFound, validationFailed, type FieldErrors } from '../lib/errors';
import { readNumber } from '../lib/exact-json';

// Forms post strings; the API's schemas are strictly typed. A field that is a plain decimal number is handed to the
// schema as a number (what a JSON client would send), read as written like a JSON body's numbers (an amount with more
// digits than a double holds is refused, never rounded); anything else stays a string and fails the schema's own
// type check with the API's own message.

/**
 * First on every dashboard form post: a post from another origin is refused (403) before anything else runs, whatever
 * its Content-Type. Its Origin (or Sec-Fetch-Site: same-origin) must be the service's own; with SameSite=Lax cookies
 * that suffices.
 */
export const sameOriginForm = sameOriginOnly;

// Signed: the console's balance adjustment debits with a negative amount.
const DECIMAL = /^-?\d{1,15}(\.\d{1,15})?$/;

// An amount as an operator types it in the console's Price and Amount: a `$` after the sign (`$14.99`, `-$2.50`) and
// commas between groups of exactly three digits (`$1,234.56`). Anything else is left as typed, so the schema refuses
// it (`14,99`, a decimal comma, is never read as 1499).
const TYPED_AMOUNT = /^(-?)\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$/;

/** A console amount as written, without the `$` and thousands commas (`-$1,234.56` → `-1234.56`); the one parser of the console's money fields. */
export function plainNumber(text: string | undefined): string | undefined {
  const match = text === undefined ? null : TYPED_AMOUNT.exec(text);
  return match ? `${match[1]}${match[2].replaceAll(',', '')}${match[3] ?? ''}` : text;
}

export type FormFields = Record<string, string>;

/** The posted form as strings (a repeated field: its last value; files ignored). Not a form: no fields. */
export async function readForm(c: Context): Promise<FormFields> {
  let body: Record<string, unknown>;
  try {
    body = await c.req.parseBody();
  } catch {
    return {}; // a malformed multipart body is a form without fields
  }
  const fields: FormFields = {};
  for (const [name, value] of Object.entries(body)) {
    const last = Array.isArray(value) ? value.at(-1) : value;
    if (typeof last === 'string') fields[name] = last;
  }
  return fields;
}

/**
 * The form through the API's schema; a failure is the API's 422 (VALIDATION_FAILED with field messages). `fields` may
 * already hold values a page read from its controls (a checkbox's boolean, a list of pack sizes).
 */
export function parseForm<T extends z.ZodType>(schema: T, fields: Record<string, unknown>, numbers: string[] = [], labels?: FormLabels): z.output<T> {
  const input: Record<string, unknown> = { ...fields };
  for (const name of numbers) if (typeof fields[name] === 'string' && DECIMAL.test(fields[name])) input[name] = readNumber(fields[name]);
  const result = schema.safeParse(input);
  if (!result.success) throw validationFailed(labels ? inFormWords(fieldErrors(result.error, input), labels) : fieldErrors(result.error, input));
  return result.data;
}

/** A form's labels by field name (`{ percent_off: 'Percent off' }`). */
export type FormLabels = Record<string, string>;

/**
 * The schema's messages in the form's own words: each field name in a message becomes the label the person sees
 * ("percent_off must be an integer" → "Percent off must be an integer"), the label capitalised at a sentence's start.
 */
export function inFormWords(errors: FieldErrors, labels: FormLabels): FieldErrors {
  const names = Object.keys(labels).sort((a, b) => b.length - a.length);
  if (names.length === 0) return errors;
  const pattern = new RegExp(`\\b(${names.join('|')})\\b`, 'g');
  const relabel = (message: string) =>
    message.replace(pattern, (name, _match, offset: number) => (offset === 0 ? labels[name] : labels[name].toLowerCase()));
  return Object.fromEntries(Object.entries(errors).map(([field, messages]) => [field, messages.map(relabel)]));
}

/** Why a form was refused, shown on its page: a message and the messages next to each field. */
export interface FormProblem {
  status: 400 | 401 | 422 | 429 | 503;
  code: string;
  message: string;
  fields: FieldErrors;
}

/** Statuses a form answers by showing its page again; anything else (404, 5xx) is the error page. */
const FORM_STATUSES = new Set([400, 401, 422, 429]);
/**
 * A payment provider that cannot be reached is not the database: the page can be shown again, with what was typed,
 * and the API's 503 and Retry-After (nothing was stored, nothing charged).
 */
const isFormProblem = (err: ApiError) => FORM_STATUSES.has(err.status) || err.code === 'GATEWAY_UNAVAILABLE';

function formProblem(c: Context<AppEnv>, err: unknown): FormProblem | null {
  if (!(err instanceof ApiError) || !isFormProblem(err)) return null;
  // A session that is not live (any signed-in form) is no problem of the form's: the browser goes to sign-in.
  if (isUnauthorized(err) && c.get('caller') !== undefined) return null;
  const fields = err.code === 'VALIDATION_FAILED' ? ((err.errors ?? {}) as FieldErrors) : {};
  return { status: err.status as FormProblem['status'], code: err.code, message: err.message, fields };
}

type FormAction = (c: Context<AppEnv>, fields: FormFields) => Promise<Response>;
type FormAgain = (c: Context<AppEnv>, fields: FormFields, problem: FormProblem) => Promise<Response>;

/**
 * A form post's handler: reads the form and runs `action`. When the action is refused (invalid fields, a rule of the
 * API, throttling), `again` shows the page again with the problem, the API's status and its headers (Retry-After).
 * Nothing was changed then: the service functions change nothing when they refuse.
 */
export const formHandler = (action: FormAction, again: FormAgain) => async (c: Context<AppEnv>) => {
  const fields = await readForm(c);
  try {
    return await action(c, fields);
  } catch (err) {
    const problem = formProblem(c, err);
    if (!problem) throw err;
    for (const [name, value] of Object.entries((err as ApiError).headers ?? {})) c.header(name, value);
    return again(c, fields, problem);
  }
};

const ID = /^[1-9]\d{0,14}$/;

/** A path id that is not even well-formed names nothing of the user's: the same 404 as another user's id. */
export function idFromPath(raw: string | undefined, what: string): number {
  if (raw === undefined || !ID.test(raw)) throw notFound(what);
  return Number(raw);
}

/**
 * A console form that moves money (a refund, a balance adjustment, a claim's refund) carries its `idempotency_key`:
 * a post without one is refused (422 on the field, nothing changes) rather than repeated on every re-send.
 */
export function requireFormKey(fields: FormFields): void {
  if (fields.idempotency_key === undefined || fields.idempotency_key === '') {
    throw fieldError('idempotency_key', 'idempotency_key is required: this form moves money; open the page again and send it from there.');
  }
}

/**
 * A money form's effect under its hidden `idempotency_key`: the API's idempotency mechanism, in the user's own key
 * space. `run` performs the effect and names the page to go to; a re-sent form (double click, reload) makes no second
 * effect and is sent where the first one went, found from the record's snapshot of the resource (`locate`). Without
 * the field the post is simply not deduplicated. The console's forms pass `owner: OPERATOR`: their effects are the
 * admin API's, whose keys are the operator's namespace.
 */
export async function redirectOnce<Snapshot>(
  c: Context<AppEnv>,
  fields: FormFields,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<string>,
  locate: (snapshot: Snapshot) => string,
  owner?: KeyOwner,
): Promise<Response> {
  const to = (location: string) => ({ status: 303 as const, body: { location } });
  const source = { key: fields.idempotency_key, field: 'idempotency_key' };
  const { body } = await runIdempotent(c, source, input, async (claim) => to(await run(claim)), {
    owner,
    render: (snapshot) => to(locate(snapshot as Snapshot)),
  });
  return c.redirect(body.location, 303);
}
