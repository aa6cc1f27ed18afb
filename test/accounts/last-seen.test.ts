import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SELF } from '../contract';
import { newEmail, signIn, visit } from '../dashboard-helpers';
import { newUser } from '../helpers';

// Who to block (contract, "fourth pass"): users record their sign-up address and country, and their last sign-in
// address, country and time (a dashboard sign-in, an API key's use), for the console's user page.

const seen = (email: string) =>
  env.DB.prepare('SELECT signup_ip, last_seen_ip, last_seen_ip_hex, last_seen_at FROM users WHERE email = ?').bind(email).first<Record<string, string | null>>();

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 50; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return read();
}

describe('where a user signed up and was last seen', () => {
  it('a dashboard sign-up records its address as sign-up and last seen; a sign-in from elsewhere moves last seen', async () => {
    const email = newEmail();
    const res = await visit('/dashboard/sign-up', {
      form: { name: 'New', email, password: 'correct horse battery', password_confirmation: 'correct horse battery', },
      vars: { DASHBOARD_SIGNUP: 'open' },
      ip: '198.51.100.7',
    });
    expect(res.status, res.text).toBe(303);
    expect(await seen(email)).toMatchObject({ signup_ip: '198.51.100.7', last_seen_ip: '198.51.100.7', last_seen_ip_hex: '00000000000000000000ffffc6336407' });
    await signIn(email, 'correct horse battery', { ip: '203.0.113.9' });
    expect(await seen(email)).toMatchObject({ signup_ip: '198.51.100.7', last_seen_ip: '203.0.113.9' });
  });

  it("an API key's use records where its user was last seen, after the response", async () => {
    const user = await newUser();
    expect((await seen(user.email))?.last_seen_ip).toBeNull();
    const res = await SELF.fetch('http://localhost/api/v2/wallet/balance', { headers: { 'X-API-Key': user.key, 'CF-Connecting-IP': '2001:db8::5' } });
    expect(res.status).toBe(200);
    const row = await eventually(() => seen(user.email), (r) => r?.last_seen_ip !== null);
    expect(row).toMatchObject({ last_seen_ip: '2001:db8::5', last_seen_ip_hex: '20010db8000000000000000000000005' });
    expect(row?.last_seen_at).toMatch(/Z$/);
  });
});
