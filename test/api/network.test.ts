import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { network } from '../network';

// The suite has no network: a request nobody declared fails, a declared one is answered by the test's stand-in.
describe('the test network', () => {
  it('refuses a request that no test declared', async () => {
    await expect(fetch('https://undeclared.example.test/anything')).rejects.toThrow(/\[MSW\] Cannot bypass a request/);
  });

  it('answers a declared host from the test, never from the real one', async () => {
    network.use(http.get('https://vendor.example.test/ping', () => HttpResponse.json({ pong: true })));
    const res = await fetch('https://vendor.example.test/ping');
    expect(await res.json()).toEqual({ pong: true });
  });
});
