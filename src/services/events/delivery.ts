import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import { writeBatch } from '../../db/d1';
import { events, webhookEndpoints, type EventRow, type WebhookEndpointRow } from '../../db/schema';
import type { Config, DeliveryMessage } from '../../env';
import { signatureHeader } from '../../lib/signature';
import { isoNow } from '../../lib/time';
import { webhookUrlProblem } from '../../lib/webhook-url';
import type { MailSettings } from '../mail/settings';
import { recordWebhookAlerts } from '../mail/alerts';

// The queue consumer: each message is one event for one endpoint, so an endpoint that fails is retried on its own
// schedule and never delays another. Retries are the platform's (`message.retry` with a delay); what exhausted
// WEBHOOK_MAX_ATTEMPTS goes to the dead-letter queue.

export type { DeliveryMessage };

export const DELIVERY_TIMEOUT_MS = 10_000;
/** The longest delay Queues accept for a retry (12 hours). */
const MAX_RETRY_DELAY_SECONDS = 43_200;

/** Delay before the retry that follows failed attempt `attempt` (1-based): the base, doubled each time. */
export const retryDelaySeconds = (attempt: number, baseSeconds: number) => Math.min(baseSeconds * 2 ** (attempt - 1), MAX_RETRY_DELAY_SECONDS);

export interface DeliveryContext {
  d1: Db;
  config: Config;
  deadLetters?: Queue<DeliveryMessage>;
  /** Mail on: an endpoint that exhausts its attempts is an operator alert. */
  alerts?: MailSettings | null;
  /** The event as the API renders it (GET /events/{id} without deliveries): the body that is signed and sent. */
  render: (event: EventRow) => unknown;
}

interface Attempt {
  event_id: string;
  endpoint_id: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: string;
}

const isDeliveryMessage = (body: unknown): body is DeliveryMessage =>
  typeof body === 'object' && body !== null && typeof (body as DeliveryMessage).event_id === 'string' && Number.isSafeInteger((body as DeliveryMessage).endpoint_id);

/**
 * POST the signed event; any answer but a 2xx within the timeout is a failure (redirects are not followed). The URL
 * rule is checked again first: an endpoint stored before the rule was tightened (an IP address) is never called.
 */
async function post(event: EventRow, endpoint: WebhookEndpointRow, { render, config }: Pick<DeliveryContext, 'render' | 'config'>) {
  const refused = webhookUrlProblem(endpoint.url, config.allowLocalWebhookUrls);
  if (refused) return { status_code: null, error: `Not sent: ${refused}.` };
  const body = JSON.stringify(render(event));
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'stock-wallet-api-webhooks',
    'X-Event-Id': event.id,
    'X-Event-Type': event.type,
    'X-Signature': await signatureHeader(endpoint.secret, body, Date.now()),
  };
  try {
    const response = await fetch(endpoint.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    await response.body?.cancel();
    return { status_code: response.status, error: response.ok ? null : `The endpoint answered HTTP ${response.status}.` };
  } catch (err) {
    const timedOut = err instanceof Error && err.name === 'TimeoutError';
    return { status_code: null, error: timedOut ? `No answer within ${DELIVERY_TIMEOUT_MS / 1000} s.` : `Network error: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The attempts as delivery rows; a message delivered twice by the queue records its attempt once. */
async function recordAttempts(d1: Db, attempts: Attempt[]) {
  if (attempts.length === 0) return;
  const rows = JSON.stringify(attempts);
  const field = (name: keyof Attempt) => sql`json_extract(a.value, ${`$.${name}`})`;
  await writeBatch(d1, {
    writes: [
      sql`INSERT OR IGNORE INTO webhook_deliveries (event_id, endpoint_id, attempt, status_code, error, at)
          SELECT ${field('event_id')}, ${field('endpoint_id')}, ${field('attempt')}, ${field('status_code')}, ${field('error')}, ${field('at')}
          FROM json_each(${rows}) AS a
          WHERE EXISTS (SELECT 1 FROM events WHERE id = ${field('event_id')})`,
    ],
    reads: [
      sql`SELECT count(*) AS recorded FROM json_each(${rows}) AS a
          WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ${field('event_id')} AND d.endpoint_id = ${field('endpoint_id')} AND d.attempt = ${field('attempt')})`,
    ],
    committed: ([result]) => rowsOf<{ recorded: number }>(result)[0].recorded > 0,
  });
}

export interface DeliveryReport {
  delivered: number;
  retried: number;
  deadLettered: number;
  dropped: number;
}

export async function deliverWebhooks(batch: MessageBatch<unknown>, { d1, config, deadLetters, render, alerts }: DeliveryContext): Promise<DeliveryReport> {
  const report: DeliveryReport = { delivered: 0, retried: 0, deadLettered: 0, dropped: 0 };
  const messages = batch.messages.filter((message): message is Message<DeliveryMessage> => {
    if (isDeliveryMessage(message.body)) return true;
    message.ack();
    report.dropped++;
    return false;
  });
  const eventIds = JSON.stringify(messages.map((m) => m.body.event_id));
  const endpointIds = JSON.stringify(messages.map((m) => m.body.endpoint_id));
  const [eventRows, endpointRows] = await runBatch(d1, [
    sql`SELECT ${columnsOf(events)} FROM events WHERE id IN (SELECT value FROM json_each(${eventIds}))`,
    sql`SELECT ${columnsOf(webhookEndpoints)} FROM webhook_endpoints WHERE id IN (SELECT value FROM json_each(${endpointIds})) AND deleted_at IS NULL`,
  ]);
  const eventById = new Map(rowsOf<EventRow>(eventRows).map((e) => [e.id, e]));
  const endpointById = new Map(rowsOf<WebhookEndpointRow>(endpointRows).map((w) => [w.id, w]));

  const outcomes = await Promise.all(
    messages.map(async (message) => {
      const event = eventById.get(message.body.event_id);
      const endpoint = endpointById.get(message.body.endpoint_id);
      // Past retention, deleted endpoint (its pending retries stop), or not the event owner's endpoint.
      if (!event || !endpoint || endpoint.userId !== event.userId) return { message, attempt: null };
      const result = await post(event, endpoint, { render, config });
      const attempt: Attempt = { ...message.body, attempt: message.attempts, at: isoNow(), ...result };
      return { message, attempt };
    }),
  );
  await recordAttempts(d1, outcomes.flatMap(({ attempt }) => (attempt ? [attempt] : [])));

  const failed = (o: (typeof outcomes)[number]) => o.attempt !== null && o.attempt.error !== null;
  const exhausted = outcomes.filter((o) => failed(o) && o.message.attempts >= config.webhookMaxAttempts);
  // Kept before the acks: a failed hand-over throws, and the platform then redelivers these messages.
  if (exhausted.length > 0) await deadLetters?.sendBatch(exhausted.map(({ message }) => ({ body: message.body })));
  const gaveUp = exhausted.map(({ message }) => ({ endpointId: message.body.endpoint_id, eventId: message.body.event_id }));
  await recordWebhookAlerts(d1, alerts ?? null, gaveUp, isoNow());
  for (const outcome of outcomes) {
    const { message } = outcome;
    if (failed(outcome) && message.attempts < config.webhookMaxAttempts) {
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts, config.webhookRetryBaseSeconds) });
      report.retried++;
      continue;
    }
    message.ack();
    if (outcome.attempt === null) report.dropped++;
    else if (failed(outcome)) report.deadLettered++;
    else report.delivered++;
  }
  return report;
}
