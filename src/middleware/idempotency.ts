import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Db } from '../db/client';
import { isUniqueViolation } from '../db/errors';
import type { AppEnv } from '../env';
import { findLiveRecord, storeResponse, type IdempotencyClaim } from '../services/idempotency';
import { sha256Hex } from '../lib/crypto';
import { ApiError, fieldError } from '../lib/errors';
import { isoNow } from '../lib/time';

export interface Rendered<T, S extends ContentfulStatusCode> {
  status: S;
  body: T;
}

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
// A concurrent first request holding the key stores its response moments after its batch: wait that long for it.
const RESPONSE_WAIT_ATTEMPTS = 40;
const RESPONSE_WAIT_MS = 50;

/** JSON with object keys sorted, so the same input always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Who asks, for what, under which key (`undefined`: not deduplicated). */
export interface IdempotencyScope {
  d1: Db;
  userId: number;
  /** `METHOD path`: with the input, what a replay must match. */
  request: string;
  key: string | undefined;
  /** Where the key came from, named in the 422 for a malformed one. */
  field: string;
}

export interface Outcome<S extends ContentfulStatusCode> {
  status: S;
  /** The response body as JSON text, exactly as stored and replayed. */
  text: string;
  replayed: boolean;
}

/**
 * Runs an effect under an idempotency key, if one was given: the same key with the same request replays the first
 * outcome byte for byte, with another request it is a 422. Only effects are remembered: a request that failed changed
 * nothing and may be retried with the same key. Keys are per user, whichever door (API header, dashboard form) they
 * came through.
 *
 * `run` performs the effect, recording the claim in its own batch; `recover` renders the resource when a record
 * has no stored response (its first request died between the batch and storing the response).
 */
export async function runIdempotent<T extends object, S extends ContentfulStatusCode>(
  scope: IdempotencyScope,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  recover: (resourceId: number) => Promise<Rendered<T, S>>,
): Promise<Outcome<S>> {
  const { d1, userId, key } = scope;
  if (key === undefined) {
    const { status, body } = await run();
    return { status, text: JSON.stringify(body), replayed: false };
  }
  if (!VALID_KEY.test(key)) throw fieldError(scope.field, `${scope.field} must be 1 to 255 printable ASCII characters.`);

  const requestHash = await sha256Hex(`${scope.request}\n${canonicalJson(input)}`);

  const replay = async (record: NonNullable<Awaited<ReturnType<typeof findLiveRecord>>>): Promise<Outcome<S>> => {
    if (record.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', `This ${scope.field} was already used with a different request.`);
    }
    for (let attempt = 0; record.responseBody === null && attempt < RESPONSE_WAIT_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, RESPONSE_WAIT_MS));
      record = (await findLiveRecord(d1, userId, key, isoNow())) ?? record;
    }
    if (record.responseStatus !== null && record.responseBody !== null) {
      return { status: record.responseStatus as S, text: record.responseBody, replayed: true };
    }
    const { status, body } = await recover(record.resourceId);
    const text = JSON.stringify(body);
    await storeResponse(d1, userId, key, status, text);
    return { status, text, replayed: true };
  };

  const existing = await findLiveRecord(d1, userId, key, isoNow());
  if (existing) return replay(existing);
  try {
    const { status, body } = await run({ userId, key, requestHash, now: isoNow() });
    const text = JSON.stringify(body);
    await storeResponse(d1, userId, key, status, text);
    return { status, text, replayed: false };
  } catch (err) {
    // Another request with this key committed its effect first: ours either rolled back whole (the key's unique
    // index) or found nothing left to do (its stock or balance was just taken by that very request, an order already
    // cancelled). Either way it changed nothing, and the key now answers with the first request's response.
    if (!(err instanceof ApiError) && !isUniqueViolation(err, 'idempotency_keys.idempotency_key')) throw err;
    const winner = await findLiveRecord(d1, userId, key, isoNow());
    if (!winner) throw err;
    return replay(winner);
  }
}

/** An API route's effect under the `Idempotency-Key` header (see runIdempotent); replays carry `Idempotent-Replayed: true`. */
export async function idempotent<T extends object, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  recover: (resourceId: number) => Promise<Rendered<T, S>>,
): Promise<TypedResponse<JSONParsed<T>, S, 'json'>> {
  const scope = {
    d1: c.var.db,
    userId: c.var.principal.userId,
    request: `${c.req.method} ${c.req.path}`,
    key: c.req.header('Idempotency-Key'),
    field: 'Idempotency-Key',
  };
  const { status, text, replayed } = await runIdempotent(scope, input, run, recover);
  // Stored responses are replayed as raw bytes; the type says what they contain.
  return c.body(text, status, {
    'Content-Type': 'application/json',
    ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
  }) as unknown as TypedResponse<JSONParsed<T>, S, 'json'>;
}
