import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { contractFetch } from './checked-fetch';

// `npm run dev` as a newcomer meets it, on E2E_PORT (the suite's server is started with PORT and no PAYMENT_BASE_URL):
// payment links on the port in use, one line per migration, no network error, a banner that tells the truth, and a
// demo database with a month of history whose money adds up.

const { startup, stateDir } = inject('devScript');
const server = inject('devServer');
const fetch = contractFetch(server.api);
const bannerLine = (label: string) => new RegExp(`^\\s*${label}:\\s*(.*)$`, 'm').exec(startup)?.[1];

describe('npm run dev', () => {
  it("follows PORT: a deposit's payment_url, and the banner's checkout page, are on the port in use", async () => {
    const created = (await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Port Follower', email: `port-${Date.now()}@example.com`, password: 'port password 1' }) })).json()).data;
    const res = await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: { 'X-API-Key': created.api_key, 'Content-Type': 'application/json' }, body: JSON.stringify({ amount: 10, gateway: 'gateway_one' }) });
    const deposit = (await res.json()).data;
    expect(deposit.payment_url).toBe(`${server.origin}/pay/${deposit.deposit_id}`);
    expect((await globalThis.fetch(deposit.payment_url)).status).toBe(200);
    expect(bannerLine('Checkout page')).toMatch(new RegExp(`^${server.origin}/pay/<deposit id> `));
  });

  it('prints one line per migration and no table, and no network error', () => {
    const migrations = readdirSync('migrations').filter((name) => name.endsWith('.sql'));
    for (const name of migrations) expect(startup).toContain(`Local database: applied migration ${name}\n`);
    const beforeWrangler = startup.slice(0, startup.indexOf('Empty database: seeded'));
    expect(beforeWrangler.split('\n').filter((line) => line.trim() !== '').length, beforeWrangler).toBeLessThanOrEqual(migrations.length + 3);
    expect(startup).not.toMatch(/[┌│└]/);
    expect(startup).not.toMatch(/ENOTFOUND|getaddrinfo|Unable to fetch the `Request.cf`/);
  });

  it("the banner's wallet is the demo user's balance as the API reads it", async () => {
    const key = bannerLine('Demo API key')!;
    expect(key).toMatch(/^sk_live_/);
    const balance = (await (await fetch(`${server.api}/wallet/balance`, { headers: { 'X-API-Key': key } })).json()).data.balance;
    expect(bannerLine('Demo user')).toContain(`(wallet: $${balance.toFixed(2)})`);
  });

  it('prints a demo test key beside the live one: test mode, with its test money and the catalogue', async () => {
    const key = bannerLine('Demo test key')!;
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{40} /);
    const headers = { 'X-API-Key': key.split(' ')[0] };
    expect((await (await fetch(`${server.api}/wallet/balance`, { headers })).json()).data.balance).toBe(1000);
    const sandboxStock = (await (await fetch(`${server.api}/stock`, { headers })).json()).data as Array<{ sku: string }>;
    expect(sandboxStock.map((p) => p.sku)).toEqual(expect.arrayContaining(['INDIE-KEY', 'NFLX-1M', 'STEAM-10', 'WIN11-PRO']));
    expect(startup).toMatch(/Sandbox database \(test mode\): applied \d+ migrations; seeded/);
  });

  it('seeds a month of history: customers, orders, deposits and refunds over 30 days', async () => {
    const admin = { Authorization: `Bearer ${server.adminToken}` };
    expect(startup).toMatch(/Empty database: seeded the demo data and 30 days of history \(7 customers, \d+ orders, \d+ deposits, \d+ refunds\)/);
    const orders: Array<{ created_at: string; status: string }> = [];
    for (const page of [1, 2]) orders.push(...(await (await fetch(`${server.api}/admin/orders?per_page=100&page=${page}`, { headers: admin })).json()).data);
    const days = new Set(orders.map((o) => o.created_at.slice(0, 10)));
    expect(days.size, 'orders on many days').toBeGreaterThan(15);
    expect(new Set(orders.map((o) => o.status))).toEqual(new Set(['pending', 'completed', 'cancelled']));
    const oldest = Math.min(...orders.map((o) => Date.parse(o.created_at)));
    expect(Date.now() - oldest).toBeGreaterThan(25 * 86_400_000);
  });

  it('the seeded history keeps the ledger rules: `npm run audit:ledger` on its database reports nothing', () => {
    const output = execFileSync('npm', ['run', '--silent', 'audit:ledger'], { env: { ...process.env, DEV_STATE_DIR: stateDir }, encoding: 'utf8' });
    expect(output).toContain('Ledger consistent.');
    expect(output).not.toMatch(/^FAIL/m);
  });
});
