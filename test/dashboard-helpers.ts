import { env } from 'cloudflare:test';
import { expect } from 'vitest';
import { sha256Hex } from '../src/lib/crypto';
import { isoNow } from '../src/lib/time';
import { readAs } from '../src/services/caller';
import { sessionCaller, touchSession } from '../src/services/accounts/sessions';
import { createCheckedApp, SELF } from './contract';
import { newUser, unique, type TestUser } from './helpers';

// Browser-like requests to the dashboard: form posts from the service's own origin, cookies carried by hand, redirects
// not followed (their Location is what the tests check).

export const ORIGIN = 'http://localhost';
export const PASSWORD = 'correct horse battery'; // what helpers.newUser gives every user

let ipSequence = 0;
/** A client IP of its own, so that a test's sign-ins are not throttled by the rest of the suite's. */
export const freshIp = () => `10.${Math.floor(Math.random() * 200)}.${(ipSequence >> 8) & 255}.${ipSequence++ & 255}`;

export interface PageOptions {
  cookie?: string;
  /** Form fields: sent as a urlencoded POST. */
  form?: Record<string, string>;
  method?: string;
  headers?: Record<string, string>;
  /** The Origin header of a form post; `null` sends none. */
  origin?: string | null;
  ip?: string;
  /** Vars that differ from vitest.config.ts for this request (a payment provider on a slot). */
  vars?: Record<string, string>;
}

let appWithVars: ReturnType<typeof createCheckedApp> | undefined;

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  setCookie: string | null;
}

export async function visit(path: string, { cookie, form, method, headers = {}, origin = ORIGIN, ip = freshIp(), vars }: PageOptions = {}): Promise<PageResponse> {
  const h: Record<string, string> = { 'CF-Connecting-IP': ip, ...headers };
  if (cookie) h.Cookie = `dashboard_session=${cookie}`;
  const init: RequestInit = { method: method ?? (form ? 'POST' : 'GET'), headers: h, redirect: 'manual' };
  if (form) {
    h['Content-Type'] ??= 'application/x-www-form-urlencoded';
    if (origin !== null) h.Origin ??= origin;
    init.body = new URLSearchParams(form).toString();
  }
  const res = vars ? await (appWithVars ??= createCheckedApp()).request(`${ORIGIN}${path}`, init, vars) : await SELF.fetch(`${ORIGIN}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get('Location'), setCookie: res.headers.get('Set-Cookie') };
}

/** The session token a Set-Cookie header carries (`undefined` when it sets none, '' when it clears it). */
export function sessionFrom(setCookie: string | null): string | undefined {
  const match = /(?:^|,\s*)dashboard_session=([^;]*)/.exec(setCookie ?? '');
  return match?.[1];
}

export async function signIn(email: string, password = PASSWORD, options: PageOptions = {}): Promise<string> {
  const res = await visit('/dashboard/sign-in', { ...options, form: { email, password } });
  expect(res.status, res.text).toBe(303);
  const token = sessionFrom(res.setCookie);
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return token!;
}

/** A user (with an API key, made by the operator) signed in to the dashboard. */
export async function signedInUser({ balance = 0 }: { balance?: number } = {}): Promise<TestUser & { cookie: string }> {
  const user = await newUser({ balance });
  return { ...user, cookie: await signIn(user.email) };
}

/** The hidden idempotency key of the (first) money form on a page. */
export function idempotencyKeyIn(html: string): string {
  const match = /name="idempotency_key" value="([^"]+)"/.exec(html);
  expect(match, 'the page has a money form').not.toBeNull();
  return match![1];
}

/**
 * Whether the session a cookie value stands for is live at `nowMs` (the proof a page's batch starts with), and how
 * that page's bookkeeping would slide its idle expiry; null when it is not live.
 */
export async function liveSession(token: string, nowMs = Date.now()) {
  const tokenHash = await sha256Hex(token);
  const caller = sessionCaller(tokenHash, isoNow(nowMs));
  const live = await readAs(env.DB, caller, []).then(() => true, () => false);
  return live ? { touch: () => touchSession(env.DB, tokenHash, caller.proved!.lastUsedAt, nowMs) } : null;
}

export const newEmail = () => `${unique('dash')}@example.com`;

/**
 * The local limiter counts in windows aligned to the wall clock's minutes: a test that counts to a limit starts far
 * enough from a minute's end to finish inside one window.
 */
export async function startOfRateWindow(need = 10_000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < need) await new Promise((resolve) => setTimeout(resolve, left + 100));
}

/** A multipart form post from the service's own origin (a file field: the stock upload, a product image). */
export async function postMultipart(path: string, cookie: string, fields: Record<string, string | File>) {
  const body = new FormData();
  for (const [name, value] of Object.entries(fields)) body.append(name, value);
  const res = await SELF.fetch(`${ORIGIN}${path}`, {
    method: 'POST',
    body,
    headers: { Cookie: `dashboard_session=${cookie}`, Origin: ORIGIN, 'CF-Connecting-IP': freshIp() },
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('Location'), text: await res.text() };
}
