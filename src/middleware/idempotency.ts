import type { SQL } from 'drizzle-orm';
import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isUniqueViolation } from '../db/errors';
import type { AppEnv } from '../env';
import { findClaim, type ClaimRecord, type IdempotencyClaim, type KeyOwner } from '../services/idempotency';
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

/**
 * Runs an effectful request under the `Idempotency-Key` header, if one was sent: the same key with the same request
 * replays the first response byte for byte (`Idempotent-Replayed: true`), with another request it is a 422. Only
 * effects are remembered: a request that failed changed nothing and may be retried with the same key.
 *
 * No lookup precedes the effect: `run` records the claim in the effect's own batch, and a key already held makes
 * that batch fail whole on the key's unique index (or find nothing left to do, when the holder just took the stock
 * or cancelled the order). Only then is the record read, once, and the first outcome rendered from its snapshot.
 */
export async function idempotent<T extends object, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  replay: Replay<T, S>,
): Promise<TypedResponse<JSONParsed<T>, S, 'json'>> {
  // Replays are rendered from stored rows; the type says what they contain.
  const typed = (response: Response) => response as unknown as TypedResponse<JSONParsed<T>, S, 'json'>;
  const key = c.req.header('Idempotency-Key');
  if (key === undefined) {
    const { status, body } = await run();
    return typed(c.json(body, status));
  }
  if (!IDEMPOTENCY_KEY.test(key)) throw fieldError('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.');

  const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${canonicalJson(input)}`);
  try {
    const { status, body } = await run({ key, requestHash, now: isoNow() });
    return typed(c.json(body, status));
  } catch (err) {
    if (!(err instanceof ApiError) && !isUniqueViolation(err, 'idempotency_keys.idempotency_key')) throw err;
    const found = await findClaim(c.var.db, replay.owner ?? c.var.caller, key, replay.related);
    // Nobody holds the key (or only a record of an earlier version that kept no response): the failure is this
    // request's own.
    if (!found || (found.record.responseBody === null && found.record.responseSnapshot === null)) throw err;
    if (found.record.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request.');
    }
    return typed(await replayed(c, found.record, replay, found.related));
  }
}

async function replayed<T, S extends ContentfulStatusCode>(c: Context<AppEnv>, record: ClaimRecord, replay: Replay<T, S>, related: D1Result[]) {
  const replayedHeader = { 'Idempotent-Replayed': 'true' };
  if (record.responseStatus !== null && record.responseBody !== null) {
    return c.body(record.responseBody, record.responseStatus as ContentfulStatusCode, { ...replayedHeader, 'Content-Type': 'application/json' });
  }
  // Rendered first: a replay that cannot be rendered answers its error without the replay header.
  const { status, body } = await replay.render(JSON.parse(record.responseSnapshot ?? 'null'), related);
  return c.json(body as object, status, replayedHeader);
}
