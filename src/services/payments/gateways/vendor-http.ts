import { z } from 'zod';
import { ApiError, unauthorized } from '../../../lib/errors';
import type { Slot } from './slots';

// Every call to a payment vendor: one attempt (no retry that could create a second invoice), at most 10 s, and the
// contract's mapping of what went wrong. Logs name the slot, the provider and what failed, never a key, a
// signature or a vendor body.

export const VENDOR_TIMEOUT_MS = 10_000;
/** How long a client should wait before retrying a deposit the vendor could not take. */
const RETRY_AFTER_SECONDS = 30;
const REASON_LIMIT = 200;

export interface VendorRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Why a vendor call failed, for the log only. */
type Failure = 'timeout' | 'unreachable' | `http ${number}` | 'not json' | 'unexpected answer';

function logFailure(slot: Slot, purpose: string, failure: Failure) {
  console.warn(JSON.stringify({ level: 'warn', msg: 'payment provider call failed', gateway: slot.name, provider: slot.provider, purpose, failure }));
}

/** A failed vendor call as the console's payments page shows it (src/services/payments/vendor-failures.ts). */
export interface VendorFailure {
  gateway: Slot['name'];
  provider: Slot['provider'];
  purpose: string;
  failure: Failure;
  at: string;
}

/** The vendor failure an error carries, if it is one. */
export const vendorFailureOf = (err: unknown): VendorFailure | undefined => (err as { vendorFailure?: VendorFailure } | undefined)?.vendorFailure;

const withFailure = (error: ApiError, slot: Slot, purpose: string, failure: Failure) =>
  Object.assign(error, { vendorFailure: { gateway: slot.name, provider: slot.provider, purpose, failure, at: new Date().toISOString() } satisfies VendorFailure });

export function gatewayUnavailable(slot: Slot, purpose: string, failure: Failure): ApiError {
  logFailure(slot, purpose, failure);
  const error = new ApiError(
    'GATEWAY_UNAVAILABLE',
    'The payment provider could not be reached or failed; nothing was stored. Retry after the Retry-After delay.',
    undefined,
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
  return withFailure(error, slot, purpose, failure);
}

/** The vendor's own reason for refusing, from its usual error fields (its text only, at most 200 characters). */
function refusalReason(text: string): string {
  let reason = '';
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body?.error as Record<string, unknown> | string | undefined;
    const candidates = [typeof error === 'object' ? error?.message : error, body?.message, body?.errors, body];
    const found = candidates.find((c) => typeof c === 'string' && c.trim() !== '') ?? candidates.find((c) => c && typeof c === 'object');
    reason = typeof found === 'string' ? found : JSON.stringify(found ?? '');
  } catch {
    reason = text;
  }
  reason = reason.replace(/\s+/g, ' ').trim();
  return reason === '' ? 'The payment provider refused the invoice.' : reason.slice(0, REASON_LIMIT);
}

/** The request at the vendor: JSON accepted, no redirect followed, at most VENDOR_TIMEOUT_MS. */
const send = (slot: Slot, request: VendorRequest) =>
  fetch(`${slot.apiUrl}${request.path}`, {
    method: request.method,
    headers: { Accept: 'application/json', ...request.headers },
    body: request.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(VENDOR_TIMEOUT_MS),
  });

const failureOf = (err: unknown): Failure => (err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'unreachable');

/**
 * One call to the slot's vendor API, its JSON answer returned. Unreachable, over 10 s, 5xx, 401/403, 3xx or an answer
 * that is not JSON → GATEWAY_UNAVAILABLE (503). Another 4xx → GATEWAY_REJECTED (422) with the vendor's reason when
 * creating an invoice; a lookup has no refusal to report, so it is GATEWAY_UNAVAILABLE too.
 */
export async function callVendor(slot: Slot, purpose: 'invoice' | 'lookup', request: VendorRequest): Promise<unknown> {
  let status: number;
  let text: string;
  try {
    const res = await send(slot, request);
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw gatewayUnavailable(slot, purpose, failureOf(err));
  }
  const refused = status >= 400 && status < 500 && status !== 401 && status !== 403;
  if (refused && purpose === 'invoice') {
    logFailure(slot, purpose, `http ${status}`);
    throw withFailure(new ApiError('GATEWAY_REJECTED', refusalReason(text)), slot, purpose, `http ${status}`);
  }
  if (status < 200 || status >= 300) throw gatewayUnavailable(slot, purpose, `http ${status}`);
  try {
    return JSON.parse(text);
  } catch {
    throw gatewayUnavailable(slot, purpose, 'not json');
  }
}

/** What a connection check learnt: the key was accepted, refused (401/403), or the vendor could not answer. */
export type ProbeResult = { ok: true } | { ok: false; refused: boolean; failure: Failure };

/**
 * One harmless authenticated read at the vendor ("Check connection"), with the same timeout and no redirect: a 2xx
 * means reachable with the key accepted. Nothing of the answer is kept; a failure is logged as any vendor call's.
 */
export async function probeVendor(slot: Slot, request: VendorRequest): Promise<ProbeResult> {
  let status: number;
  try {
    const res = await send(slot, request);
    status = res.status;
    await res.body?.cancel();
  } catch (err) {
    const failure = failureOf(err);
    logFailure(slot, 'check', failure);
    return { ok: false, refused: false, failure };
  }
  if (status >= 200 && status < 300) return { ok: true };
  logFailure(slot, 'check', `http ${status}`);
  return { ok: false, refused: status === 401 || status === 403, failure: `http ${status}` };
}

/** The vendor's answer in the shape the adapter reads, or GATEWAY_UNAVAILABLE (nothing of it logged). */
export function readAnswer<T extends z.ZodType>(slot: Slot, purpose: string, schema: T, answer: unknown): z.infer<T> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw gatewayUnavailable(slot, purpose, 'unexpected answer');
  return parsed.data;
}

/** A notification that fails the vendor's signature scheme (or cannot be read as one): 401, nothing changes. */
export const forgedNotification = () => unauthorized('Invalid payment provider notification signature.');

/** A verified notification's body as JSON; a signed body that is not JSON is not a notification we can apply. */
export function parseJsonObject(rawBody: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(rawBody) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A payment page the buyer is sent to: an http(s) URL, nothing else (a redirect target must not be a script URL). */
export const PageUrl = z.url({ protocol: /^https?$/ });

/** A vendor id, given as a string or a number. */
export const VendorId = z.union([z.string().min(1).max(255), z.number().int().nonnegative()]).transform(String);
