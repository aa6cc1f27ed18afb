import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractFetch } from './checked-fetch';
import { freePort, startDevServer, type DevServer } from './dev-server';

// `npm run dev` runs the scheduled job on its own (every minute; DEV_SCHEDULED_SECONDS here, to keep the test short),
// so a deposit expires locally as in production, with no manual trigger. A server of its own, on the next port: its
// deposits live one minute (`--var DEPOSIT_TTL_MINUTES:1`), which the shared server's tests must not meet. Its port is
// one the system says is free (not E2E_PORT + 1, which may be another checkout's server).

describe('npm run dev: the scheduled loop', () => {
  let server: DevServer;

  beforeAll(async () => {
    server = await startDevServer(await freePort(), { args: ['--var', 'DEPOSIT_TTL_MINUTES:1'], env: { DEV_SCHEDULED_SECONDS: '5' } });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('expires a deposit a minute old without anyone triggering the job; the bindings table is printed once', async () => {
    const fetch = contractFetch(server.api);
    const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
    const user = (await (await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Tick Tock', email: `tick-${Date.now()}@example.com`, password: 'tick tock password' }) })).json()).data;
    const created = await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: { 'X-API-Key': user.api_key, 'Content-Type': 'application/json' }, body: JSON.stringify({ amount: 10, gateway: 'gateway_one' }) });
    const deposit = (await created.json()).data;
    expect(deposit.status).toBe('pending');
    const status = async () => (await (await fetch(`${server.api}/wallet/deposits/${deposit.deposit_id}/status`, { headers: { 'X-API-Key': user.api_key } })).json()).data.status;
    await expect.poll(status, { timeout: 120_000, interval: 2_000 }).toBe('expired');
    expect(server.output().split('Your Worker has access to the following bindings:').length - 1).toBe(1);
    expect(server.output()).not.toContain('GET /__scheduled');
    // the run that expired it reports it (its line may reach the terminal a moment after the answer)
    await expect.poll(() => server.output(), { timeout: 10_000 }).toMatch(/"msg":"scheduled jobs".*"expiredDeposits":1/);
  }, 150_000);
});
