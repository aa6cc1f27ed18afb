import { createExecutionContext, createMessageBatch, env, getQueueResult } from 'cloudflare:test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { verifyWebhook, WebhookSignatureError } from '../../src/client';
import entry from '../../src/index';
import { runScheduledJobs } from '../../src/services/operator/jobs';
import { enqueueEvents } from '../../src/services/events/outbox';
import type { DeliveryMessage } from '../../src/services/events/delivery';
import { createCheckedApp } from '../contract';
import { BASE, buy, call, hmacSha256Hex, newProduct, newUser, unique, type TestUser } from '../helpers';

// Outgoing webhooks: the queue consumer (the worker's own `queue()` export) signs and POSTs each event to each
// endpoint, records every attempt, and retries a failure with a doubling delay, one endpoint at a time. Receivers are
// hosts under `.receiver.test`, answered by a stand-in for the network (global fetch, which the worker shares with the
// tests); every other request goes out untouched. D1 and the queue are real.

// ---------------------------------------------------------------------------------------------------------------
// A network with receivers
// ---------------------------------------------------------------------------------------------------------------

type Receiver = (request: Request, signal: AbortSignal | null | undefined) => Response | Promise<Response>;
interface Received {
  host: string;
  headers: Headers;
  body: string;
  at: number;
}

const receivers = new Map<string, Receiver>();
let received: Received[] = [];
const realFetch = globalThis.fetch;

beforeEach(() => {
  received = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    const host = new URL(request.url).host;
    const receiver = receivers.get(host);
    if (!receiver) return realFetch(input as RequestInfo, init);
    received.push({ host, headers: request.headers, body: await request.clone().text(), at: Date.now() });
    return receiver(request, init?.signal);
  });
});

afterEach(() => {
  vi.restoreAllMocks();
  receivers.clear();
});

/** A receiver host answering with `answer`; returns its https URL. */
function receiver(answer: Receiver = () => new Response('ok')) {
  const host = `${unique('r')}.receiver.test`.toLowerCase();
  receivers.set(host, answer);
  return `https://${host}/hook`;
}

const failing = (status = 500) => receiver(() => new Response('nope', { status }));
/** Never answers: the delivery's own timeout ends the request. */
const hanging = () =>
  receiver((_request, signal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason))));

/** The worker's exports as the runtime sees them (its `queue()` takes the execution context too). */
const worker = entry as ExportedHandler<Cloudflare.Env>;

const requestsTo = (url: string) => received.filter((r) => r.host === new URL(url).host);

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

async function addEndpoint(user: TestUser, url: string, events: string[] = ['*']) {
  const res = await call('/webhook-endpoints', { key: user.key, body: { url, events } });
  expect(res.status, res.text).toBe(201);
  return res.json.data as { id: number; secret: string; url: string };
}

/**
 * A user with one event (the funding adjustment of newUser) and endpoints registered after it: the queue never sends
 * that event to them (an endpoint only gets events that happen after it is registered), so the test drives the
 * consumer alone.
 */
async function eventThenEndpoints(...urls: string[]) {
  const user = await newUser({ balance: 5 });
  const [event] = (await call('/events', { key: user.key })).json.data;
  const endpoints = [];
  for (const url of urls) endpoints.push(await addEndpoint(user, url));
  return { user, event, endpoints };
}

interface Delivery {
  event_id: string;
  endpoint_id: number;
  attempts?: number;
}

/**
 * One batch through the worker's `queue()` handler, as the platform would deliver it: the acks, and the retries with
 * the delay each asked for (read from the retry calls: the test batch does not keep the options).
 */
async function consume(deliveries: Delivery[], vars: Record<string, unknown> = {}) {
  const batch = createMessageBatch<DeliveryMessage>(
    'stock-wallet-webhooks',
    deliveries.map(({ attempts = 1, ...body }, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts, body })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, 'retry'));
  const ctx = createExecutionContext();
  await worker.queue!(batch, { ...env, ...vars }, ctx);
  const { explicitAcks } = await getQueueResult(batch, ctx);
  const retryMessages = batch.messages.flatMap((message, i) =>
    retries[i].mock.calls.map(([options]) => ({ msgId: message.id, delaySeconds: options?.delaySeconds })),
  );
  return { explicitAcks, retryMessages };
}

async function deliveriesOf(user: TestUser, eventId: string) {
  const res = await call(`/events/${eventId}`, { key: user.key });
  expect(res.status, res.text).toBe(200);
  return res.json.data.deliveries as Array<{ endpoint_id: number; attempt: number; status_code: number | null; error: string | null; at: string }>;
}

/** A stand-in for a queue binding that keeps what is sent to it. */
function recordingQueue() {
  const sent: DeliveryMessage[] = [];
  const queue = {
    send: async (body: DeliveryMessage) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: DeliveryMessage }>) => void sent.push(...[...messages].map((m) => m.body)),
  };
  return { sent, queue: queue as unknown as Queue<DeliveryMessage> };
}

const waitFor = async (condition: () => boolean | Promise<boolean>, what: string, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Signing
// ---------------------------------------------------------------------------------------------------------------

describe('a delivery', () => {
  it('POSTs the event as GET /events/{id} renders it, signed with the endpoint secret, and records the attempt', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(receiver());
    const before = Math.floor(Date.now() / 1000);
    const result = await consume([{ event_id: event.id, endpoint_id: endpoint.id }]);
    expect(result.explicitAcks).toEqual(['msg-0']);
    expect(result.retryMessages).toEqual([]);

    const [request] = requestsTo(endpoint.url);
    expect(request.headers.get('Content-Type')).toBe('application/json');
    expect(request.headers.get('X-Event-Id')).toBe(event.id);
    expect(request.headers.get('X-Event-Type')).toBe('balance.adjusted');
    expect(JSON.parse(request.body)).toEqual(event);

    // X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>, recomputed independently.
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(request.headers.get('X-Signature') ?? '') ?? [];
    expect(Number(t)).toBeGreaterThanOrEqual(before);
    expect(Number(t)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(v1).toBe(await hmacSha256Hex(endpoint.secret, `${t}.${request.body}`));
    await expect(verifyWebhook(request.body, request.headers.get('X-Signature'), endpoint.secret)).resolves.toEqual(event);
    await expect(verifyWebhook(request.body, request.headers.get('X-Signature'), `whsec_${'x'.repeat(32)}`)).rejects.toThrow(WebhookSignatureError);

    expect(await deliveriesOf(user, event.id)).toEqual([{ endpoint_id: endpoint.id, attempt: 1, status_code: 200, error: null, at: expect.any(String) }]);
  });

  it('counts only a 2xx as delivered: an error status, a redirect or a network error is a failed attempt', async () => {
    const unreachable = receiver(() => Promise.reject(new TypeError('connection refused')));
    const redirecting = receiver(() => new Response(null, { status: 302, headers: { Location: 'https://elsewhere.example/' } }));
    const { user, event, endpoints } = await eventThenEndpoints(failing(503), redirecting, unreachable);
    const result = await consume(endpoints.map((e) => ({ event_id: event.id, endpoint_id: e.id })));
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages.map((m) => m.msgId).sort()).toEqual(['msg-0', 'msg-1', 'msg-2']);
    const byEndpoint = new Map((await deliveriesOf(user, event.id)).map((d) => [d.endpoint_id, d]));
    expect(byEndpoint.get(endpoints[0].id)).toMatchObject({ attempt: 1, status_code: 503, error: expect.stringContaining('503') });
    expect(byEndpoint.get(endpoints[1].id)).toMatchObject({ attempt: 1, status_code: 302 });
    expect(byEndpoint.get(endpoints[2].id)).toMatchObject({ attempt: 1, status_code: null, error: expect.stringContaining('connection refused') });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Retries
// ---------------------------------------------------------------------------------------------------------------

describe('retries', () => {
  it('follow the schedule: WEBHOOK_RETRY_BASE_SECONDS (60) after the first failure, doubled each time, 10 attempts in all', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(failing());
    const deadLetters = recordingQueue();
    const message = { event_id: event.id, endpoint_id: endpoint.id };
    const delays: number[] = [];
    for (let attempts = 1; attempts <= 9; attempts++) {
      const result = await consume([{ ...message, attempts }], { WEBHOOK_DLQ: deadLetters.queue });
      expect(result.explicitAcks).toEqual([]);
      delays.push(result.retryMessages[0].delaySeconds!);
    }
    expect(delays).toEqual([60, 120, 240, 480, 960, 1920, 3840, 7680, 15360]);
    expect(deadLetters.sent).toEqual([]);

    // The 10th attempt fails too: no retry, the message goes to the dead-letter queue.
    const last = await consume([{ ...message, attempts: 10 }], { WEBHOOK_DLQ: deadLetters.queue });
    expect(last.retryMessages).toEqual([]);
    expect(last.explicitAcks).toEqual(['msg-0']);
    expect(deadLetters.sent).toEqual([message]);
    expect((await deliveriesOf(user, event.id)).map((d) => d.attempt)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(requestsTo(endpoint.url)).toHaveLength(10);
  });

  it('an endpoint that exhausts its attempts is an operator alert (mail on); nothing is recorded before', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(failing());
    const message = { event_id: event.id, endpoint_id: endpoint.id };
    const alerts = async () =>
      (await env.DB.prepare("SELECT line FROM operator_alerts WHERE kind = 'webhook_endpoint' AND line LIKE ?").bind(`Endpoint #${endpoint.id} %`).all()).results;
    await consume([{ ...message, attempts: 9 }], { WEBHOOK_DLQ: recordingQueue().queue });
    expect(await alerts()).toEqual([]);
    await consume([{ ...message, attempts: 10 }], { WEBHOOK_DLQ: recordingQueue().queue });
    expect(await alerts()).toEqual([{ line: `Endpoint #${endpoint.id} (${endpoint.url}) of user #${user.id} gave up on event ${event.id}` }]);
  });

  it('read WEBHOOK_RETRY_BASE_SECONDS and WEBHOOK_MAX_ATTEMPTS', async () => {
    const { event, endpoints: [endpoint] } = await eventThenEndpoints(failing());
    const deadLetters = recordingQueue();
    const vars = { WEBHOOK_RETRY_BASE_SECONDS: '5', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_DLQ: deadLetters.queue };
    const message = { event_id: event.id, endpoint_id: endpoint.id };
    expect((await consume([{ ...message, attempts: 1 }], vars)).retryMessages[0].delaySeconds).toBe(5);
    expect((await consume([{ ...message, attempts: 2 }], vars)).retryMessages[0].delaySeconds).toBe(10);
    expect((await consume([{ ...message, attempts: 3 }], vars)).retryMessages).toEqual([]);
    expect(deadLetters.sent).toEqual([message]);
  });

  it('a success on a later attempt ends the retries', async () => {
    let calls = 0;
    const flaky = receiver(() => new Response(null, { status: ++calls <= 2 ? 500 : 204 }));
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(flaky);
    const message = { event_id: event.id, endpoint_id: endpoint.id };
    for (const attempts of [1, 2]) expect((await consume([{ ...message, attempts }])).retryMessages).toHaveLength(1);
    const third = await consume([{ ...message, attempts: 3 }]);
    expect(third.explicitAcks).toEqual(['msg-0']);
    expect((await deliveriesOf(user, event.id)).map((d) => [d.attempt, d.status_code])).toEqual([[3, 204], [2, 500], [1, 500]]);
  });

  it('are per endpoint: a hanging endpoint times out after 10 s and is retried alone, the others are delivered at once', async () => {
    const slow = hanging();
    const { user, event, endpoints } = await eventThenEndpoints(slow, receiver(), receiver());
    const started = Date.now();
    const result = await consume(endpoints.map((e) => ({ event_id: event.id, endpoint_id: e.id })));
    const elapsed = Date.now() - started;

    expect(result.retryMessages).toEqual([{ msgId: 'msg-0', delaySeconds: 60 }]);
    expect(result.explicitAcks.sort()).toEqual(['msg-1', 'msg-2']);
    expect(elapsed).toBeGreaterThanOrEqual(9_500);
    for (const endpoint of endpoints.slice(1)) expect(requestsTo(endpoint.url)[0].at - started).toBeLessThan(2_000);
    const byEndpoint = new Map((await deliveriesOf(user, event.id)).map((d) => [d.endpoint_id, d]));
    expect(byEndpoint.get(endpoints[0].id)).toMatchObject({ status_code: null, error: 'No answer within 10 s.' });
    expect(byEndpoint.get(endpoints[1].id)).toMatchObject({ status_code: 200, error: null });
  }, 30_000);

  it('a redelivered message records its attempt once', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(failing());
    const message = { event_id: event.id, endpoint_id: endpoint.id, attempts: 1 };
    await consume([message]);
    await consume([message]);
    expect(await deliveriesOf(user, event.id)).toHaveLength(1);
  });
});

describe('messages that no longer apply are dropped', () => {
  it('a deleted endpoint gets no more requests: its pending retries stop', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(failing());
    await call(`/webhook-endpoints/${endpoint.id}`, { key: user.key, method: 'DELETE' });
    const result = await consume([{ event_id: event.id, endpoint_id: endpoint.id, attempts: 3 }]);
    expect(result.explicitAcks).toEqual(['msg-0']);
    expect(result.retryMessages).toEqual([]);
    expect(requestsTo(endpoint.url)).toEqual([]);
    expect(await deliveriesOf(user, event.id)).toEqual([]);
  });

  it('an endpoint stored before the URL rule tightened (an IP address) is never called: a failed attempt, not a request', async () => {
    const { user, event, endpoints: [endpoint] } = await eventThenEndpoints(receiver());
    const legacy = 'https://169.254.169.254/latest/meta-data';
    await env.DB.prepare('UPDATE webhook_endpoints SET url = ? WHERE id = ?').bind(legacy, endpoint.id).run();
    const result = await consume([{ event_id: event.id, endpoint_id: endpoint.id }]);
    expect(result.retryMessages).toEqual([{ msgId: 'msg-0', delaySeconds: 60 }]);
    expect(vi.mocked(globalThis.fetch)).not.toHaveBeenCalled();
    const [attempt] = await deliveriesOf(user, event.id);
    expect(attempt).toMatchObject({ status_code: null, error: 'Not sent: url must name a DNS host, not an IP address.' });
  });

  it('an unknown event, another user\'s endpoint or a malformed message is acknowledged without a request', async () => {
    const { event, endpoints: [endpoint] } = await eventThenEndpoints(receiver());
    const { endpoints: [foreign] } = await eventThenEndpoints(receiver());
    const batch = createMessageBatch<unknown>('stock-wallet-webhooks', [
      { id: 'unknown-event', timestamp: new Date(), attempts: 1, body: { event_id: 'evt_000000000000000000000000', endpoint_id: endpoint.id } },
      { id: 'foreign-endpoint', timestamp: new Date(), attempts: 1, body: { event_id: event.id, endpoint_id: foreign.id } },
      { id: 'malformed', timestamp: new Date(), attempts: 1, body: 'not a delivery' },
    ]);
    const ctx = createExecutionContext();
    await worker.queue!(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(['foreign-endpoint', 'malformed', 'unknown-event']);
    expect(received).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// From the outbox to the queue
// ---------------------------------------------------------------------------------------------------------------

describe('enqueueing', () => {
  it('a purchase reaches a registered endpoint through the real local queue, after the response', async () => {
    const user = await newUser({ balance: 10 });
    const endpoint = await addEndpoint(user, receiver());
    const product = await newProduct({ stock: 1 });
    const bought = await buy(user, product.id);
    expect(bought.status).toBe(201);

    await waitFor(() => requestsTo(endpoint.url).length > 0, 'the delivery');
    const [request] = requestsTo(endpoint.url);
    const event = await verifyWebhook(request.body, request.headers.get('X-Signature'), endpoint.secret);
    expect(event).toMatchObject({ type: 'order.created', data: { object: { id: bought.json.data.id, status: 'pending' } } });
    await waitFor(async () => (await deliveriesOf(user, event.id)).length > 0, 'the recorded attempt');
    expect(await deliveriesOf(user, event.id)).toEqual([{ endpoint_id: endpoint.id, attempt: 1, status_code: 200, error: null, at: expect.any(String) }]);
    const row = await env.DB.prepare('SELECT enqueued_at FROM events WHERE id = ?').bind(event.id).first<{ enqueued_at: string | null }>();
    expect(row!.enqueued_at).not.toBeNull();
  });

  it('one message per subscribed endpoint registered before the event; the event is then marked enqueued, once', async () => {
    const user = await newUser();
    const everything = await addEndpoint(user, receiver());
    const orders = await addEndpoint(user, receiver(), ['order.created', 'balance.adjusted']);
    await addEndpoint(user, receiver(), ['deposit.paid']);
    const deleted = await addEndpoint(user, receiver());
    await call(`/webhook-endpoints/${deleted.id}`, { key: user.key, method: 'DELETE' });
    await addEndpoint(await newUser(), receiver());
    // Funded through an app without a queue binding: the event stays in the outbox.
    const app = createCheckedApp();
    const funded = await app.request(
      `${BASE}/admin/users/${user.id}/balance-adjustments`,
      { method: 'POST', headers: { Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/json' }, body: JSON.stringify({ amount: 3, description: 'outbox' }) },
      { ...env, WEBHOOK_QUEUE: undefined },
    );
    expect(funded.status).toBe(201);
    const [event] = (await call('/events', { key: user.key })).json.data;
    const later = await addEndpoint(user, receiver());

    const { sent, queue } = recordingQueue();
    await enqueueEvents(env.DB, queue, [event.id, 'evt_000000000000000000000000']);
    expect(sent.map((m) => m.endpoint_id).sort((a, b) => a - b)).toEqual([everything.id, orders.id]);
    expect(sent.every((m) => m.event_id === event.id)).toBe(true);
    expect(sent.some((m) => m.endpoint_id === later.id)).toBe(false);

    await enqueueEvents(env.DB, queue, [event.id]);
    expect(sent).toHaveLength(2);
  });

  it('an event no endpoint is subscribed to never enters the outbox', async () => {
    const user = await newUser({ balance: 5 });
    await addEndpoint(user, receiver(), ['deposit.paid']);
    // Another user's endpoint takes everything: it must not count for this user.
    await addEndpoint(await newUser(), receiver());
    const product = await newProduct({ stock: 1 });
    const bought = await buy(user, product.id);
    const [event] = (await call('/events?type=order.created', { key: user.key })).json.data;
    const row = await env.DB.prepare('SELECT created_at, enqueued_at FROM events WHERE id = ?').bind(event.id).first<{ created_at: string; enqueued_at: string | null }>();
    // Marked in the purchase's own batch, not by a later enqueue.
    expect(row).toEqual({ created_at: bought.json.data.created_at, enqueued_at: bought.json.data.created_at });
    const { sent, queue } = recordingQueue();
    await enqueueEvents(env.DB, queue, [event.id]);
    expect(sent).toEqual([]);
  });

  it('a scheduled run enqueues the events it writes (order.completed) itself', async () => {
    const user = await newUser({ balance: 5 });
    const product = await newProduct({ stock: 1 });
    const orderId = (await buy(user, product.id)).json.data.id;
    const endpoint = await addEndpoint(user, receiver(), ['order.completed']);
    const dayAgo = new Date(Date.now() - 25 * 3_600_000).toISOString();
    await env.DB.prepare('UPDATE orders SET created_at = ? WHERE id = ?').bind(dayAgo, orderId).run();
    await env.DB.prepare('UPDATE webhook_endpoints SET created_at = ? WHERE id = ?').bind(dayAgo, endpoint.id).run();

    const { sent, queue } = recordingQueue();
    const report = await runScheduledJobs({ ...env, WEBHOOK_QUEUE: queue });
    const [completed] = (await call('/events?type=order.completed', { key: user.key })).json.data;
    expect(completed.data.object).toMatchObject({ id: orderId, status: 'completed' });
    expect(sent.filter((m) => m.endpoint_id === endpoint.id)).toEqual([{ event_id: completed.id, endpoint_id: endpoint.id }]);
    expect(report.enqueuedEvents).toBeGreaterThanOrEqual(1);
  });

  it('the scheduled sweep enqueues events whose enqueue was lost, leaving the youngest to their own request', async () => {
    const user = await newUser();
    const endpoint = await addEndpoint(user, receiver());
    const app = createCheckedApp();
    const adjust = (amount: number) =>
      app.request(
        `${BASE}/admin/users/${user.id}/balance-adjustments`,
        { method: 'POST', headers: { Authorization: 'Bearer test-admin-token', 'Content-Type': 'application/json' }, body: JSON.stringify({ amount, description: 'lost' }) },
        { ...env, WEBHOOK_QUEUE: undefined },
      );
    await adjust(1);
    await adjust(2);
    const [young, lost] = (await call('/events', { key: user.key })).json.data;
    // Two minutes old (and so is the endpoint, which only gets events that happen after it is registered).
    const twoMinutesAgo = new Date(Date.now() - 120_000).toISOString();
    await env.DB.prepare('UPDATE events SET created_at = ? WHERE id = ?').bind(twoMinutesAgo, lost.id).run();
    await env.DB.prepare('UPDATE webhook_endpoints SET created_at = ? WHERE id = ?').bind(twoMinutesAgo, endpoint.id).run();

    const { sent, queue } = recordingQueue();
    await runScheduledJobs({ ...env, WEBHOOK_QUEUE: queue });
    expect(sent.filter((m) => m.endpoint_id === endpoint.id)).toEqual([{ event_id: lost.id, endpoint_id: endpoint.id }]);
    const enqueued = async (id: string) => (await env.DB.prepare('SELECT enqueued_at FROM events WHERE id = ?').bind(id).first<{ enqueued_at: string | null }>())!.enqueued_at;
    expect(await enqueued(lost.id)).not.toBeNull();
    expect(await enqueued(young.id)).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The receivers' helper
// ---------------------------------------------------------------------------------------------------------------

describe('verifyWebhook (typed client)', () => {
  const secret = `whsec_${'a'.repeat(32)}`;
  const body = JSON.stringify({ id: 'evt_123456789012345678901234', type: 'order.created', created_at: '2026-11-21T12:00:00.000Z', data: { object: {} } });
  const sign = async (t: number, key = secret, payload = body) => `t=${t},v1=${await hmacSha256Hex(key, `${t}.${payload}`)}`;
  const now = Date.parse('2026-11-21T12:00:00.000Z');
  const t = now / 1000;

  it('accepts a signature within 300 s and returns the parsed event', async () => {
    await expect(verifyWebhook(body, await sign(t), secret, { now })).resolves.toEqual(JSON.parse(body));
    await expect(verifyWebhook(body, await sign(t - 300), secret, { now })).resolves.toBeTruthy();
    await expect(verifyWebhook(body, await sign(t + 300), secret, { now })).resolves.toBeTruthy();
  });

  it('refuses a tampered body, another secret, an old or future timestamp, a malformed or missing header', async () => {
    const refused = [
      verifyWebhook(body.replace('order.created', 'order.cancelled'), await sign(t), secret, { now }),
      verifyWebhook(body, await sign(t, 'whsec_other'), secret, { now }),
      verifyWebhook(body, await sign(t - 301), secret, { now }),
      verifyWebhook(body, await sign(t + 301), secret, { now }),
      verifyWebhook(body, `t=${t}`, secret, { now }),
      verifyWebhook(body, `v1=${'0'.repeat(64)}`, secret, { now }),
      verifyWebhook(body, null, secret, { now }),
      verifyWebhook(body, await sign(t - 10), secret, { now, toleranceSeconds: 5 }),
    ];
    for (const attempt of refused) await expect(attempt).rejects.toThrow(WebhookSignatureError);
  });
});
