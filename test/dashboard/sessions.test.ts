import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, signIn as startSession } from '../../src/services/accounts/sessions';
import { freshIp, liveSession, ORIGIN, PASSWORD, sessionFrom, signedInUser, signIn, visit } from '../dashboard-helpers';
import { call, newUser } from '../helpers';
import { changedTables, snapshot } from '../snapshot';

// Dashboard sessions: the cookie, what is stored, expiry (idle and absolute), sign-out, revocation on password
// changes, and the wall between sessions and the API.

const DAY = 24 * 3_600_000;

async function sha256Hex(value: string) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const sessionRow = async (token: string) =>
  env.DB.prepare('SELECT id, user_id, created_at, idle_expires_at, expires_at FROM sessions WHERE token_hash = ?')
    .bind(await sha256Hex(token))
    .first<{ id: number; user_id: number; created_at: string; idle_expires_at: string; expires_at: string }>();

const isSignedIn = async (cookie: string) => (await visit('/dashboard', { cookie })).status === 200;

describe('sign-in and the session cookie', () => {
  it('sets one HttpOnly, Secure, SameSite=Lax cookie for /dashboard holding 256 random bits; only its SHA-256 is stored', async () => {
    const user = await newUser();
    const res = await visit('/dashboard/sign-in', { form: { email: user.email, password: PASSWORD } });
    expect(res.status, res.text).toBe(303);
    expect(res.location).toBe('/dashboard');
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    const [pair, ...attributes] = cookies[0].split(/;\s*/);
    expect(pair).toMatch(/^dashboard_session=[A-Za-z0-9_-]{43}$/);
    expect(attributes.sort()).toEqual(['HttpOnly', `Max-Age=${SESSION_ABSOLUTE_MS / 1000}`, 'Path=/dashboard', 'SameSite=Lax', 'Secure'].sort());

    const token = sessionFrom(res.setCookie)!;
    const bytes = Uint8Array.from(atob(token.replaceAll('-', '+').replaceAll('_', '/') + '='), (ch) => ch.charCodeAt(0));
    expect(bytes).toHaveLength(32);
    const row = await sessionRow(token);
    expect(row?.user_id).toBe(user.id);
    const { results } = await env.DB.prepare('SELECT * FROM sessions WHERE user_id = ?').bind(user.id).all();
    expect(JSON.stringify(results)).not.toContain(token);

    const again = await signIn(user.email);
    expect(again).not.toBe(token);
    expect(await isSignedIn(token)).toBe(true);
    expect(await isSignedIn(again)).toBe(true);
  });

  it('matches the email case-insensitively', async () => {
    const user = await newUser();
    const token = await signIn(user.email.toUpperCase());
    expect((await sessionRow(token))?.user_id).toBe(user.id);
  });

  it('answers a wrong password and an unknown email alike: the same 401 page, no cookie, a PBKDF2 each', async () => {
    const user = await newUser();
    const unknown = `nobody-${user.email}`;
    const attempt = async (email: string) => {
      const started = Date.now();
      const res = await visit('/dashboard/sign-in', { form: { email, password: 'not the password' } });
      return { ...res, ms: Date.now() - started, page: res.text.replaceAll(email, '<email>') };
    };
    const wrong = [await attempt(user.email), await attempt(user.email), await attempt(user.email)];
    const absent = [await attempt(unknown), await attempt(unknown), await attempt(unknown)];
    for (const res of [...wrong, ...absent]) {
      expect(res.status).toBe(401);
      expect(res.setCookie).toBeNull();
      expect(res.page).toBe(wrong[0].page);
    }
    expect(wrong[0].page).toContain('The email or password is incorrect.');
    // An unknown email is checked against a decoy hash: it costs a PBKDF2 too (median of three, generous margin).
    const median = (list: Array<{ ms: number }>) => list.map((r) => r.ms).sort((a, b) => a - b)[1];
    expect(median(absent)).toBeGreaterThan(median(wrong) * 0.5);
    const { results } = await env.DB.prepare('SELECT id FROM sessions WHERE user_id = ?').bind(user.id).all();
    expect(results).toHaveLength(0);
  });

  it('returns to `next` when it is a path under /dashboard, and never to another site', async () => {
    const page = await visit(`/dashboard/sign-in?next=${encodeURIComponent('/dashboard/orders?page=2')}`);
    expect(page.text).toContain('action="/dashboard/sign-in?next=%2Fdashboard%2Forders%3Fpage%3D2"');
    // A user per attempt: one email may try 5 times a minute.
    const signInWith = async (next: string) => {
      const user = await newUser();
      return visit(`/dashboard/sign-in?next=${encodeURIComponent(next)}`, { form: { email: user.email, password: PASSWORD } });
    };
    expect((await signInWith('/dashboard/orders?page=2')).location).toBe('/dashboard/orders?page=2');
    expect((await signInWith('/dashboard/keys')).location).toBe('/dashboard/keys');
    const hostile = [
      'https://evil.example/dashboard',
      '//evil.example/dashboard',
      '/\\evil.example/dashboard',
      '/api/v2/user/profile',
      '/dashboard/../api/v2/user/profile',
      'javascript:alert(1)',
      '/dashboardx',
      `${ORIGIN}.evil.example/dashboard`,
    ];
    for (const next of hostile) {
      const res = await signInWith(next);
      expect(res.status).toBe(303);
      expect(res.location, next).toBe('/dashboard');
    }
  });
});

describe('without a session', () => {
  // Malformed ids and invalid forms are refused before any batch runs: the session is proved for them all the same.
  const PAGES = [
    '/dashboard',
    '/dashboard/keys',
    '/dashboard/wallet?page=2',
    '/dashboard/orders',
    '/dashboard/orders/1',
    '/dashboard/orders/abc',
    '/dashboard/orders/1/export',
    '/dashboard/orders/0/export',
    '/dashboard/shop',
    '/dashboard/profile',
  ];
  const POSTS: Array<[string, Record<string, string>]> = [
    ['/dashboard/keys', { name: 'sneaky' }],
    ['/dashboard/keys/1/revoke', {}],
    ['/dashboard/keys/abc/revoke', {}],
    ['/dashboard/orders/abc/cancel', { idempotency_key: 'k4' }],
    ['/dashboard/shop', { product_id: 'x', quantity: '-1' }],
    ['/dashboard/wallet/deposit', { amount: '10', gateway: 'gateway_one', crypto_currency: 'USDT', idempotency_key: 'k1' }],
    ['/dashboard/shop', { product_id: '1', quantity: '1', idempotency_key: 'k2' }],
    ['/dashboard/orders/1/cancel', { idempotency_key: 'k3' }],
    ['/dashboard/profile', { name: 'Mallory', email: 'mallory@example.com' }],
    ['/dashboard/password', { current_password: 'x', new_password: 'y'.repeat(10), new_password_confirmation: 'y'.repeat(10) }],
  ];

  it('every page and form post answers 303 to sign-in with `next`, and changes nothing', async () => {
    const user = await newUser({ balance: 50 });
    const ended = await signIn(user.email);
    expect((await visit('/dashboard/sign-out', { cookie: ended, form: {} })).status).toBe(303);
    const before = await snapshot();
    const credentials: Array<{ label: string; cookie?: string; headers?: Record<string, string> }> = [
      { label: 'nothing' },
      { label: 'a signed-out session', cookie: ended },
      { label: 'a made-up token', cookie: 'A'.repeat(43) },
      { label: 'a malformed cookie', cookie: '"; DROP TABLE sessions; --' },
      { label: 'an API key', headers: { 'X-API-Key': user.key } },
    ];
    for (const { label, cookie, headers } of credentials) {
      for (const path of PAGES) {
        const res = await visit(path, { cookie, headers });
        expect(res.status, `${label} GET ${path}`).toBe(303);
        expect(res.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent(path)}`);
      }
      for (const [path, form] of POSTS) {
        const res = await visit(path, { cookie, headers, form });
        expect(res.status, `${label} POST ${path}`).toBe(303);
        expect(res.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent(path)}`);
      }
    }
    // An API key in the query string does not open the dashboard either.
    expect((await visit(`/dashboard?api_key=${user.key}`)).status).toBe(303);
    expect(changedTables(before, await snapshot())).toEqual([]);
  });

  it('a session never authenticates /api/v2, in a cookie or where a key goes', async () => {
    const user = await signedInUser();
    expect(await isSignedIn(user.cookie)).toBe(true);
    const presented: Array<Record<string, string>> = [{ Cookie: `dashboard_session=${user.cookie}` }, { 'X-API-Key': user.cookie }, { Authorization: `Bearer ${user.cookie}` }];
    for (const headers of presented) {
      const res = await call('/user/profile', { headers });
      expect(res.status).toBe(401);
      expect(res.json.code).toBe('UNAUTHORIZED');
    }
    expect((await call(`/user/profile?api_key=${user.cookie}`)).status).toBe(401);
  });
});

describe('session expiry', () => {
  it('ends after 7 days without use (the sign-in page then drops the stale cookie)', async () => {
    const user = await newUser();
    const session = (await startSession(env.DB, user.email, PASSWORD))!;
    const now = Date.now();
    expect(await liveSession(session.token, now + SESSION_IDLE_MS - 1000)).not.toBeNull();
    expect(await liveSession(session.token, now + SESSION_IDLE_MS + 1000)).toBeNull();

    const token = await signIn(user.email);
    await env.DB.prepare('UPDATE sessions SET idle_expires_at = ? WHERE token_hash = ?').bind(new Date(Date.now() - 1000).toISOString(), await sha256Hex(token)).run();
    const res = await visit('/dashboard', { cookie: token });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/sign-in?next=%2Fdashboard');
    const signInPage = await visit(res.location!, { cookie: token });
    expect(signInPage.setCookie).toMatch(/^dashboard_session=; Max-Age=0; Path=\/dashboard; HttpOnly; Secure; SameSite=Lax$/);
  });

  it('ends 30 days after sign-in, however often it is used', async () => {
    const user = await newUser();
    const session = (await startSession(env.DB, user.email, PASSWORD))!;
    const signedInAt = Date.now();
    // Used every 6 days: each use slides the idle expiry, never past the absolute one.
    for (let day = 6; day < 30; day += 6) {
      const active = await liveSession(session.token, signedInAt + day * DAY);
      expect(active, `day ${day}`).not.toBeNull();
      await active!.touch?.();
    }
    expect(await liveSession(session.token, signedInAt + SESSION_ABSOLUTE_MS - 60_000)).not.toBeNull();
    expect(await liveSession(session.token, signedInAt + SESSION_ABSOLUTE_MS + 1000)).toBeNull();
    const row = (await sessionRow(session.token))!;
    expect(Date.parse(row.idle_expires_at)).toBeLessThanOrEqual(Date.parse(row.expires_at));
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(SESSION_ABSOLUTE_MS);
  });

  it('slides the idle expiry forward after a request, at most once a minute', async () => {
    const user = await signedInUser();
    const tokenHash = await sha256Hex(user.cookie);
    const idle = async () => Date.parse((await sessionRow(user.cookie))!.idle_expires_at);
    // Last used two minutes ago: the next page slides the expiry.
    await env.DB.prepare('UPDATE sessions SET idle_expires_at = ?, last_used_at = ? WHERE token_hash = ?')
      .bind(new Date(Date.now() + DAY).toISOString(), new Date(Date.now() - 120_000).toISOString(), tokenHash)
      .run();
    expect((await visit('/dashboard', { cookie: user.cookie })).status).toBe(200);
    for (let i = 0; i < 50 && (await idle()) < Date.now() + 6 * DAY; i++) await new Promise((r) => setTimeout(r, 20));
    const slid = await idle();
    expect(slid).toBeGreaterThan(Date.now() + SESSION_IDLE_MS - 60_000);
    // Within the minute, further requests do not write.
    expect((await visit('/dashboard/keys', { cookie: user.cookie })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await idle()).toBe(slid);
  });
});

describe('ending sessions', () => {
  it('the scheduled job forgets ended sessions and keeps live ones', async () => {
    const user = await newUser();
    const [ended, live] = [await signIn(user.email), await signIn(user.email)];
    const past = new Date(Date.now() - 1000).toISOString();
    await env.DB.prepare('UPDATE sessions SET idle_expires_at = ? WHERE token_hash = ?').bind(past, await sha256Hex(ended)).run();
    const report = await runScheduledJobs(env);
    expect(report.deletedSessions).toBeGreaterThanOrEqual(1);
    expect(await sessionRow(ended)).toBeNull();
    expect(await sessionRow(live)).not.toBeNull();
  });

  it('sign-out ends the session and clears the cookie', async () => {
    const user = await signedInUser();
    const res = await visit('/dashboard/sign-out', { cookie: user.cookie, form: {} });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/sign-in');
    expect(sessionFrom(res.setCookie)).toBe('');
    expect(res.setCookie).toContain('Max-Age=0');
    expect(await sessionRow(user.cookie)).toBeNull();
    expect(await isSignedIn(user.cookie)).toBe(false);
  });

  it('the dashboard password form keeps its own session and ends the others', async () => {
    const user = await newUser();
    const here = await signIn(user.email);
    const elsewhere = await signIn(user.email);
    const bystander = await signedInUser();

    const wrong = await visit('/dashboard/password', {
      cookie: here,
      form: { current_password: 'wrong password', new_password: 'a brand new password', new_password_confirmation: 'a brand new password' },
    });
    expect(wrong.status).toBe(422);
    expect(await isSignedIn(elsewhere)).toBe(true);

    const res = await visit('/dashboard/password', {
      cookie: here,
      form: { current_password: PASSWORD, new_password: 'a brand new password', new_password_confirmation: 'a brand new password' },
    });
    expect(res.status, res.text).toBe(303);
    expect(res.location).toBe('/dashboard/profile?done=password_changed');
    expect(await isSignedIn(here)).toBe(true);
    expect(await isSignedIn(elsewhere)).toBe(false);
    expect(await isSignedIn(bystander.cookie)).toBe(true);
    expect((await visit('/dashboard/sign-in', { form: { email: user.email, password: PASSWORD } })).status).toBe(401);
    expect(await isSignedIn(await signIn(user.email, 'a brand new password'))).toBe(true);
  });

  it('POST /api/v2/user/password ends every session of the user', async () => {
    const user = await newUser();
    const sessions = [await signIn(user.email), await signIn(user.email)];
    const bystander = await signedInUser();
    const res = await call('/user/password', {
      key: user.key,
      body: { current_password: PASSWORD, new_password: 'another new password', new_password_confirmation: 'another new password' },
    });
    expect(res.status, res.text).toBe(200);
    for (const token of sessions) expect(await isSignedIn(token)).toBe(false);
    expect(await isSignedIn(bystander.cookie)).toBe(true);
    expect(await isSignedIn(await signIn(user.email, 'another new password', { ip: freshIp() }))).toBe(true);
  });
});
