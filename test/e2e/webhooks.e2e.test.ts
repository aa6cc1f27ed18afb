import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { verifyWebhook } from '../../src/client';
import { contractFetch } from './checked-fetch';

// Outgoing webhooks end to end: `npm run dev` (wrangler dev, local D1 and local Queues, no account) delivers signed
// events to a real HTTP receiver on 127.0.0.1, and retries one that fails (WEBHOOK_RETRY_BASE_SECONDS is 1 here).

const server = inject('devServer');
const fetch = contractFetch(server.api);

interface Delivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  answered: number;
}

/** A receiver on 127.0.0.1: `/flaky` answers 500 to its first two requests, every other path 200. */
function startReceiver(): Promise<{ server: Server; url: string; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const earlier = deliveries.filter((d) => d.path === path).length;
      const answered = path === '/flaky' && earlier < 2 ? 500 : 200;
      deliveries.push({ path, headers: request.headers, body, answered });
      response.writeHead(answered).end();
    });
  });
  return new Promise((resolve) =>
    receiver.listen(0, '127.0.0.1', () => resolve({ server: receiver, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, deliveries })),
  );
}

async function json(res: Response) {
  const body = await res.json();
  if (!res.ok) throw new Error(`${res.status} ${JSON.stringify(body)}`);
  return body as any;
}

const admin = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };

async function newUserWithKey(name: string) {
  const body = JSON.stringify({ name, email: `${name.toLowerCase()}-${Date.now()}@example.com`, password: 'a-long-password' });
  const user = (await json(await fetch(`${server.api}/admin/users`, { method: 'POST', headers: admin, body }))).data;
  return { id: user.id as number, headers: { 'X-API-Key': user.api_key as string, 'Content-Type': 'application/json' } };
}

const adjust = (userId: number, amount: number) =>
  fetch(`${server.api}/admin/users/${userId}/balance-adjustments`, { method: 'POST', headers: admin, body: JSON.stringify({ amount, description: 'e2e' }) }).then(json);

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('outgoing webhooks against npm run dev', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
  });

  afterAll(() => new Promise<void>((resolve) => receiver.server.close(() => resolve())));

  it('buy, cancel and a deposit paid on the checkout page reach the receiver, each signed with the endpoint secret', async () => {
    const user = await newUserWithKey('Receiver');
    await adjust(user.id, 20);
    const endpoint = (
      await json(
        await fetch(`${server.api}/webhook-endpoints`, {
          method: 'POST',
          headers: user.headers,
          body: JSON.stringify({ url: `${receiver.url}/hooks`, events: ['order.created', 'order.cancelled', 'deposit.paid'] }),
        }),
      )
    ).data;

    const order = (await json(await fetch(`${server.api}/orders`, { method: 'POST', headers: user.headers, body: JSON.stringify({ product_id: 2, quantity: 1 }) }))).data;
    await json(await fetch(`${server.api}/orders/${order.id}/cancel`, { method: 'POST', headers: user.headers }));
    const deposit = (await json(await fetch(`${server.api}/wallet/deposit`, { method: 'POST', headers: user.headers, body: JSON.stringify({ amount: 15, gateway: 'gateway_one' }) }))).data;
    // The checkout page's Pay button (the page posts to its own origin), on this server's page (never a URL followed
    // blindly: with another PAYMENT_BASE_URL it would lead elsewhere).
    const checkout = `${server.origin}/pay/${deposit.deposit_id}`;
    expect(deposit.payment_url).toBe(checkout);
    await json(await fetch(`${checkout}/pay`, { method: 'POST', headers: { Origin: server.origin } }));

    const hooks = () => receiver.deliveries.filter((d) => d.path === '/hooks');
    await waitFor(() => hooks().length >= 3, 'three deliveries');
    const events = [];
    for (const delivery of hooks()) {
      const event = await verifyWebhook(delivery.body, delivery.headers['x-signature'] as string, endpoint.secret);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['x-event-id']).toBe(event.id);
      expect(delivery.headers['x-event-type']).toBe(event.type);
      await expect(verifyWebhook(delivery.body, delivery.headers['x-signature'] as string, `whsec_${'0'.repeat(32)}`)).rejects.toThrow();
      events.push(event);
    }
    // Delivery is unordered: compare as a set.
    expect(events.map((e) => `${e.type} ${e.data.object.id}`).sort()).toEqual(
      [`deposit.paid ${deposit.deposit_id}`, `order.cancelled ${order.id}`, `order.created ${order.id}`].sort(),
    );
    expect(events.find((e) => e.type === 'order.cancelled')!.data.object).toMatchObject({ status: 'cancelled' });
    expect(events.find((e) => e.type === 'deposit.paid')!.data.object).toMatchObject({ status: 'paid', amount: 15 });
    // The adjustment happened before the endpoint existed: not delivered.
    expect(events.some((e) => e.type === 'balance.adjusted')).toBe(false);
  });

  it('a receiver that fails twice gets the event on the third attempt, and /events shows each attempt', async () => {
    const user = await newUserWithKey('Flaky');
    const endpoint = (
      await json(await fetch(`${server.api}/webhook-endpoints`, { method: 'POST', headers: user.headers, body: JSON.stringify({ url: `${receiver.url}/flaky`, events: ['*'] }) }))
    ).data;
    await adjust(user.id, 5);

    const flaky = () => receiver.deliveries.filter((d) => d.path === '/flaky');
    await waitFor(() => flaky().length >= 3, 'the third attempt');
    expect(flaky().map((d) => d.answered)).toEqual([500, 500, 200]);
    const event = await verifyWebhook(flaky()[2].body, flaky()[2].headers['x-signature'] as string, endpoint.secret);
    expect(event).toMatchObject({ type: 'balance.adjusted', data: { object: { amount: 5, type: 'adjustment' } } });
    expect(new Set(flaky().map((d) => d.headers['x-event-id']))).toEqual(new Set([event.id]));

    // The third attempt is recorded right after the receiver answered it.
    let attempts: Array<{ attempt: number; status_code: number }> = [];
    await waitFor(async () => {
      attempts = (await json(await fetch(`${server.api}/events/${event.id}`, { headers: user.headers }))).data.deliveries;
      return attempts.length === 3;
    }, 'three recorded attempts', 10_000);
    expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([[3, 200], [2, 500], [1, 500]]);
  });
});
