import type { Context, TypedResponse } from 'hono';
import type { JSONParsed } from 'hono/utils/types';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isUniqueViolation } from '../db/errors';
import type { AppEnv } from '../env';
import { findLiveRecord, storeResponse, type IdempotencyClaim } from '../services/idempotency';
import { sha256Hex } from '../lib/crypto';
import { ApiError, fieldError } from '../lib/errors';
import { IDEMPOTENCY_KEY } from '../lib/openapi';
import { isoNow } from '../lib/time';

export interface Rendered<T, S extends ContentfulStatusCode> {
  status: S;
  body: T;
}

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

const jsonResponse = (c: Context<AppEnv>, status: number, body: string, replayed: boolean) =>
  c.body(body, status as ContentfulStatusCode, {
    'Content-Type': 'application/json',
    ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
  });

/**
 * Runs an effectful request under the `Idempotency-Key` header, if one was sent: the same key with the same request
 * replays the first response byte for byte (`Idempotent-Replayed: true`), with another request it is a 422. Only
 * effects are remembered: a request that failed changed nothing and may be retried with the same key.
 *
 * `run` performs the effect, recording the claim in its own batch; `recover` renders the resource when a record
 * has no stored response (its first request died between the batch and storing the response).
 */
export async function idempotent<T extends object, S extends ContentfulStatusCode>(
  c: Context<AppEnv>,
  input: unknown,
  run: (claim?: IdempotencyClaim) => Promise<Rendered<T, S>>,
  recover: (resourceId: number) => Promise<Rendered<T, S>>,
): Promise<TypedResponse<JSONParsed<T>, S, 'json'>> {
  // Stored responses are replayed as raw bytes; the type says what they contain.
  const typed = (response: Response) => response as unknown as TypedResponse<JSONParsed<T>, S, 'json'>;
  const key = c.req.header('Idempotency-Key');
  if (key === undefined) {
    const { status, body } = await run();
    return typed(c.json(body, status));
  }
  if (!IDEMPOTENCY_KEY.test(key)) throw fieldError('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.');

  const d1 = c.var.db;
  const { userId } = c.var.principal;
  const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${canonicalJson(input)}`);

  const replay = async (record: NonNullable<Awaited<ReturnType<typeof findLiveRecord>>>) => {
    if (record.requestHash !== requestHash) {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request.');
    }
    for (let attempt = 0; record.responseBody === null && attempt < RESPONSE_WAIT_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, RESPONSE_WAIT_MS));
      record = (await findLiveRecord(d1, userId, key, isoNow())) ?? record;
    }
    if (record.responseStatus !== null && record.responseBody !== null) {
      return typed(jsonResponse(c, record.responseStatus, record.responseBody, true));
    }
    const { status, body } = await recover(record.resourceId);
    const text = JSON.stringify(body);
    await storeResponse(d1, userId, key, status, text);
    return typed(jsonResponse(c, status, text, true));
  };

  const existing = await findLiveRecord(d1, userId, key, isoNow());
  if (existing) return replay(existing);
  try {
    const { status, body } = await run({ userId, key, requestHash, now: isoNow() });
    const text = JSON.stringify(body);
    await storeResponse(d1, userId, key, status, text);
    return typed(jsonResponse(c, status, text, false));
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
