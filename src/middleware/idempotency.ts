import type { SQL } from 'drizzle-orm';
import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isUniqueViolation } from '../db/errors';
import type { AppEnv } from '../env';
import { findClaim, type IdempotencyClaim, type KeyOwner } from '../services/idempotency';
import { sha256Hex } from '../lib/crypto';
import { ApiError, fieldError } from '../lib/errors';
import { IDEMPOTENCY_KEY } from '../lib/validation';
import { isoNow } from '../lib/time';

export interface Rendered<T, S extends ContentfulStatusCode> {
  status: S;
  body: T;
}

/** How a route renders its first outcome again from the record: the snapshot row plus reads keyed on its id. */
export interface Replay<T, S extends ContentfulStatusCode> {
  /** Whose key namespace: the request's caller (a user) unless given; the admin routes pass `OPERATOR`. */
  owner?: KeyOwner;
  related?: (resourceId: SQL) => SQL[];
  render: (snapshot: unknown, related: D1Result[]) => Rendered<T, S> | Promise<Rendered<T, S>>;
}


/** JSON with object keys sorted, so the same input always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Where a request's idempotency key came from: the API's `Idempotency-Key` header or a dashboard form's field. */
export interface KeySource {
  key: string | undefined;
  /** Named in the 422 for a malformed or reused key. */
  field: string;
}

/** An effect's outcome: rendered now or from the record; `text` is a response stored whole by an earlier version. */
export interface Outcome<T, S extends ContentfulStatusCode> extends Rendered<T, S> {
  replayed: boolean;
  text?: string;
}

/**
 * Runs an effect under an idempotency key, if one was given: the same key with the same request replays the first
 * outcome, with another request it is a 422. Only effects are remembered: a request that failed changed nothing and
 * may be retried with the same key. Keys are per user, whichever door (API header, dashboard form) they came through.
 *
 * No lookup precedes the effect: `run` records the claim in the effect's own batch, and a key already held makes
 * that batch fail whole on the key's unique index (or find nothing left to do, when the holder just took the stock
 * or cancelled the order). Only then is the record read, once, and the first outcome rendered from its snapshot.
 */
export async function runIdempotent<T extends object, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  { key, field }: KeySource,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  replay: Replay<T, S>,
): Promise<Outcome<T, S>> {
  if (key === undefined) return { ...(await run()), replayed: false };
  if (!IDEMPOTENCY_KEY.test(key)) throw fieldError(field, `${field} must be 1 to 255 printable ASCII characters.`);

  const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${canonicalJson(input)}`);
  try {
    return { ...(await run({ key, requestHash, now: isoNow() })), replayed: false };
  } catch (err) {
    if (!(err instanceof ApiError) && !isUniqueViolation(err, 'idempotency_keys.idempotency_key')) throw err;
    const found = await findClaim(c.var.db, replay.owner ?? c.var.caller, key, replay.related);
    // Nobody holds the key (or only a record of an earlier version that kept no response): the failure is this
    // request's own.
    if (!found || (found.record.responseBody === null && found.record.responseSnapshot === null)) throw err;
    if (found.record.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', `This ${field} was already used with a different request.`);
    }
    const { record } = found;
    if (record.responseStatus !== null && record.responseBody !== null) {
      return { status: record.responseStatus as S, body: JSON.parse(record.responseBody) as T, text: record.responseBody, replayed: true };
    }
    return { ...(await replay.render(JSON.parse(record.responseSnapshot ?? 'null'), found.related)), replayed: true };
  }
}

/**
 * An API route's effect under the `Idempotency-Key` header (see runIdempotent): a replay answers the first response
 * (`Idempotent-Replayed: true`), rendered from the record's snapshot; a replay that cannot be rendered answers its
 * error without the replay header.
 */
export async function idempotent<T extends object, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  replay: Replay<T, S>,
): Promise<TypedResponse<JSONParsed<T>, S, 'json'>> {
  const source = { key: c.req.header('Idempotency-Key'), field: 'Idempotency-Key' };
  const { status, body, text, replayed } = await runIdempotent(c, source, input, run, replay);
  const headers = replayed ? { 'Idempotent-Replayed': 'true' } : undefined;
  // Replays are rendered from stored rows; the type says what they contain.
  const response = text === undefined ? c.json(body, status, headers) : c.body(text, status, { ...headers, 'Content-Type': 'application/json' });
  return response as unknown as TypedResponse<JSONParsed<T>, S, 'json'>;
}
