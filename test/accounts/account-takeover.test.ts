import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PASSWORD, signedInUser, visit } from '../dashboard-helpers';
import { callWithQueue, send } from '../email-helpers';
import { call, expectError, newUser, unique, type CallOptions, type TestUser } from '../helpers';

// An account a key cannot take: a restricted key changes the email only with the current password, and every reset
// link of a user stops working as soon as one is used, the password or the email changes, or the account is disabled.
// And "Forgot password?" does the same database work for an address with or without an account.

afterEach(() => vi.restoreAllMocks());

const newEmail = () => `${unique('moved')}@example.com`;
const here: CallOptions['headers'] = { 'CF-Connecting-IP': '203.0.113.9' };

async function keyWith(user: TestUser, limits: Record<string, unknown>): Promise<string> {
  const res = await call('/api-keys', { key: user.key, body: { name: 'restricted', ...limits } });
  expect(res.status, res.text).toBe(201);
  return res.json.data.key;
}

const changeEmail = (key: string, body: Record<string, unknown>) => call('/user/profile', { key, method: 'PUT', headers: here, body });
const emailOf = async (user: TestUser) => (await env.DB.prepare('SELECT email FROM users WHERE id = ?').bind(user.id).first<{ email: string }>())!.email;

describe('an email change with a restricted key needs the current password', () => {
  const RESTRICTIONS: Array<[string, Record<string, unknown>]> = [
    ['fewer than all six scopes', { scopes: ['read', 'account'] }],
    ['a spend limit', { spend_limit_per_day: 5 }],
    ['an IP list', { allowed_ips: ['203.0.113.0/24'] }],
    ['an expiry', { expires_at: new Date(Date.now() + 86_400_000).toISOString() }],
  ];
  for (const [what, limits] of RESTRICTIONS) {
    it(`a key with ${what}: missing or wrong → 422 errors.current_password, nothing changes; right → changed`, async () => {
      const user = await newUser();
      const key = await keyWith(user, limits);
      const missing = await changeEmail(key, { email: newEmail() });
      expectError(missing, 422, 'VALIDATION_FAILED');
      expect(Object.keys(missing.json.errors)).toEqual(['current_password']);
      const wrong = await changeEmail(key, { email: newEmail(), current_password: 'not the password' });
      expectError(wrong, 422, 'VALIDATION_FAILED');
      expect(wrong.json.errors.current_password).toEqual(['The current password is incorrect.']);
      expect(await emailOf(user)).toBe(user.email);
      const email = newEmail();
      const right = await changeEmail(key, { email, current_password: PASSWORD });
      expect(right.status, right.text).toBe(200);
      expect(await emailOf(user)).toBe(email);
    });
  }

  it('a restricted key still renames, and keeps its own address in another letter case, without a password', async () => {
    const user = await newUser();
    const key = await keyWith(user, { scopes: ['account'] });
    expect((await changeEmail(key, { name: 'Renamed' })).status).toBe(200);
    expect((await changeEmail(key, { email: user.email.toUpperCase() })).status).toBe(200);
  });

  it('an unrestricted key (every scope, no limit, anywhere, never expires) changes the email as before', async () => {
    const user = await newUser();
    const full = await keyWith(user, {});
    const email = newEmail();
    expect((await changeEmail(full, { email })).status).toBe(200);
    expect((await changeEmail(user.key, { email: newEmail() })).status).toBe(200);
  });

  it('its checks count with the other password checks: the 6th in a minute is 429 before any hashing, even when right', async () => {
    const user = await newUser();
    const key = await keyWith(user, { scopes: ['account', 'read'] });
    const wrongChange = { current_password: 'wrong guess', new_password: 'a brand new secret', new_password_confirmation: 'a brand new secret' };
    for (let i = 0; i < 3; i++) expect((await call('/user/password', { key: user.key, body: wrongChange })).status).toBe(422);
    for (let i = 0; i < 2; i++) expect((await changeEmail(key, { email: newEmail(), current_password: 'wrong guess' })).status).toBe(422);
    const pbkdf2 = vi.spyOn(crypto.subtle, 'deriveBits');
    const limited = await changeEmail(key, { email: newEmail(), current_password: PASSWORD });
    expectError(limited, 429, 'RATE_LIMITED');
    expect(pbkdf2).not.toHaveBeenCalled();
    expect(await emailOf(user)).toBe(user.email);
  });

  it('the dashboard profile form asks for "Current password" whenever the email changes', async () => {
    const user = await signedInUser();
    const page = await visit('/dashboard/profile', { cookie: user.cookie });
    expect(page.text).toMatch(/<form method="post" action="\/dashboard\/profile">[\s\S]*<label for="profile-current_password">Current password<\/label>[\s\S]*<\/form>/);
    const save = (form: Record<string, string>) => visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'Test User', ...form } });
    expect((await save({ email: user.email, current_password: '' })).status).toBe(303);
    const missing = await save({ email: newEmail(), current_password: '' });
    expect(missing.status).toBe(422);
    expect(missing.text).toContain('current_password is required to change the email');
    expect((await save({ email: newEmail(), current_password: 'wrong one' })).status).toBe(422);
    expect(await emailOf(user)).toBe(user.email);
    const email = newEmail();
    expect((await save({ email, current_password: PASSWORD })).status).toBe(303);
    expect(await emailOf(user)).toBe(email);
  });
});

describe('every reset link of a user stops working when one of these happens', () => {
  const newLink = async (user: TestUser) => {
    const res = await call(`/admin/users/${user.id}/password-reset`, { admin: true, method: 'POST' });
    expect(res.status, res.text).toBe(201);
    return new URL(res.json.data.url).pathname;
  };
  const setPassword = (path: string, password = 'set by a link') => visit(path, { form: { new_password: password, new_password_confirmation: password } });

  async function expectRetired(user: TestUser, links: string[]) {
    const hash = await env.DB.prepare('SELECT password_hash AS h FROM users WHERE id = ?').bind(user.id).first<{ h: string }>();
    for (const link of links) {
      expect((await visit(link)).status).toBe(404);
      expect((await setPassword(link, 'taken over')).status).toBe(404);
    }
    expect(await env.DB.prepare('SELECT password_hash AS h FROM users WHERE id = ?').bind(user.id).first()).toEqual(hash);
  }

  const CHANGES: Array<[string, (user: TestUser & { cookie: string }, links: string[]) => Promise<void>]> = [
    ['one of them is used', async (_user, links) => expect((await setPassword(links.pop()!)).status).toBe(303)],
    [
      'the password changes through the API',
      async (user) =>
        expect((await call('/user/password', { key: user.key, body: { current_password: PASSWORD, new_password: 'another one', new_password_confirmation: 'another one' } })).status).toBe(200),
    ],
    [
      'the password changes in the dashboard',
      async (user) =>
        expect((await visit('/dashboard/password', { cookie: user.cookie, form: { current_password: PASSWORD, new_password: 'another one', new_password_confirmation: 'another one' } })).status).toBe(303),
    ],
    ['the email changes through the API', async (user) => expect((await call('/user/profile', { key: user.key, method: 'PUT', body: { email: newEmail() } })).status).toBe(200)],
    [
      'the email changes in the dashboard',
      async (user) => expect((await visit('/dashboard/profile', { cookie: user.cookie, form: { name: 'X', email: newEmail(), current_password: PASSWORD } })).status).toBe(303),
    ],
    ['the operator changes the email', async (user) => expect((await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { email: newEmail() } })).status).toBe(200)],
    [
      'the operator disables the account (enabling it again brings none back)',
      async (user) => {
        expect((await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { disabled: true } })).status).toBe(200);
        expect((await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { disabled: false } })).status).toBe(200);
      },
    ],
  ];
  for (const [what, change] of CHANGES) {
    it(what, async () => {
      const user = await signedInUser();
      const other = await newUser();
      const links = [await newLink(user), await newLink(user), await newLink(user)];
      const othersLink = await newLink(other);
      await change(user, links);
      await expectRetired(user, links);
      // Another user's link is not touched.
      expect((await visit(othersLink)).status).toBe(200);
    });
  }

  it('a rename, the same address in another case, or a refused password change retires nothing', async () => {
    const user = await signedInUser();
    const link = await newLink(user);
    expect((await call('/user/profile', { key: user.key, method: 'PUT', body: { name: 'Renamed', email: user.email.toUpperCase() } })).status).toBe(200);
    expect((await call(`/admin/users/${user.id}`, { admin: true, method: 'PATCH', body: { name: 'Again', email: user.email } })).status).toBe(200);
    const wrong = { current_password: 'wrong guess', new_password: 'another one', new_password_confirmation: 'another one' };
    expect((await call('/user/password', { key: user.key, body: wrong })).status).toBe(422);
    expect((await visit(link)).status).toBe(200);
    expect((await setPassword(link)).status).toBe(303);
  });
});

describe('"Forgot password?" does the same database work for any address', () => {
  const counts = async () => {
    const tables = ['password_reset_requests', 'password_resets', 'emails'];
    const rows = await env.DB.batch(tables.map((t) => env.DB.prepare(`SELECT count(*) AS n FROM ${t}`)));
    return Object.fromEntries(tables.map((t, i) => [t, (rows[i].results[0] as { n: number }).n]));
  };
  const diff = (a: Record<string, number>, b: Record<string, number>) => Object.fromEntries(Object.keys(a).map((k) => [k, b[k] - a[k]]));
  const forgot = (email: string) => call('/auth/forgot-password', { body: { email } });
  const rowOf = async (email: string) => {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(email.toLowerCase()));
    const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
    return env.DB.prepare('SELECT recent FROM password_reset_requests WHERE address_hash = ?').bind(hash).first<{ recent: string }>();
  };

  it("an unknown address writes its request row as a real one does (and no link, no email); the row holds no address in clear", async () => {
    const user = await newUser();
    const nobody = `${unique('nobody')}@example.com`;
    let before = await counts();
    expect((await forgot(nobody)).status).toBe(202);
    expect(diff(before, await counts())).toEqual({ password_reset_requests: 1, password_resets: 0, emails: 0 });
    before = await counts();
    expect((await forgot(user.email.toUpperCase())).status).toBe(202);
    expect(diff(before, await counts())).toEqual({ password_reset_requests: 1, password_resets: 1, emails: 1 });
    expect(JSON.parse((await rowOf(nobody))!.recent)).toHaveLength(1);
    expect(JSON.parse((await rowOf(user.email))!.recent)).toHaveLength(1);
    const stored = await env.DB.prepare('SELECT address_hash || recent AS t FROM password_reset_requests').all<{ t: string }>();
    expect(stored.results.some((r) => r.t.includes(nobody))).toBe(false);
  });

  it('the same row counts the limit for both: 3 an hour let through, in any letter case; an hour later, 3 more', async () => {
    const user = await newUser();
    const nobody = `${unique('nobody')}@example.com`;
    for (let i = 0; i < 5; i++) {
      expect((await forgot(i % 2 ? user.email.toUpperCase() : user.email)).status).toBe(202);
      expect((await forgot(nobody)).status).toBe(202);
    }
    expect(JSON.parse((await rowOf(nobody))!.recent)).toHaveLength(3);
    expect(JSON.parse((await rowOf(user.email))!.recent)).toHaveLength(3);
    const links = await env.DB.prepare('SELECT count(*) AS n FROM password_resets WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(links!.n).toBe(3);
    // An hour on, the log has room again.
    const hourAgo = new Date(Date.now() - 3_600_001).toISOString();
    const row = await rowOf(user.email);
    const aged = JSON.stringify((JSON.parse(row!.recent) as string[]).map((entry) => `${hourAgo} ${entry.split(' ')[1]}`));
    await env.DB.prepare('UPDATE password_reset_requests SET recent = ? WHERE recent = ?').bind(aged, row!.recent).run();
    expect((await forgot(user.email)).status).toBe(202);
    const after = await env.DB.prepare('SELECT count(*) AS n FROM password_resets WHERE user_id = ?').bind(user.id).first<{ n: number }>();
    expect(after!.n).toBe(4);
  });

  it('after the answer, one queue message either way; the one for an unknown address names no email, the consumer drops it', async () => {
    const user = await newUser();
    const known = await callWithQueue('/auth/forgot-password', { body: { email: user.email } });
    const unknown = await callWithQueue('/auth/forgot-password', { body: { email: `${unique('nobody')}@example.com` } });
    expect(known.jobs).toHaveLength(1);
    expect(unknown.jobs).toHaveLength(1);
    expect(unknown.jobs[0]).toEqual({ email_id: expect.stringMatching(/^eml_/) });
    const { sent } = await send(unknown.jobs);
    expect(sent).toEqual([]);
  });

  it('rows nobody touched for an hour are deleted by later requests', async () => {
    const stale = new Date(Date.now() - 2 * 3_600_000).toISOString();
    await env.DB.prepare("INSERT INTO password_reset_requests (address_hash, recent, updated_at) VALUES ('stale-test-row', '[]', ?)").bind(stale).run();
    expect((await forgot(`${unique('nobody')}@example.com`)).status).toBe(202);
    expect(await env.DB.prepare("SELECT 1 FROM password_reset_requests WHERE address_hash = 'stale-test-row'").first()).toBeNull();
  });
});
