import { sql } from 'drizzle-orm';
import { columnsOf, rowsOf } from '../../db/batch';
import type { Db } from '../../db/client';
import { webhookEndpoints, type EventType, type WebhookEndpointRow } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { ApiError, fieldError, notFound } from '../../lib/errors';
import { isoNow } from '../../lib/time';
import { webhookUrlProblem } from '../../lib/webhook-url';
import { readAs, writeAs, type Caller } from '../caller';
import { endOwnedRow } from '../accounts/owned-rows';

export const MAX_WEBHOOK_ENDPOINTS = 5;

export interface EndpointInput {
  url: string;
  events: Array<EventType | '*'>;
  description: string | null;
}

/** The URL rule is src/lib/webhook-url.ts (the route's schema checks its pattern; this adds the local-URL switch). */
export async function createWebhookEndpoint(d1: Db, caller: Caller, input: EndpointInput, allowLocalUrls: boolean): Promise<WebhookEndpointRow> {
  const problem = webhookUrlProblem(input.url, allowLocalUrls);
  if (problem) throw fieldError('url', problem);
  // Unique and generated before the batch: the batch's read, and a settle after a fault, find the endpoint by it.
  const secret = `whsec_${randomBase62(32)}`;
  const [created] = await writeAs(d1, caller, {
    writes: [
      sql`INSERT INTO webhook_endpoints (user_id, url, events, description, secret, created_at)
          SELECT owner.id, ${input.url}, ${JSON.stringify(input.events)}, ${input.description}, ${secret}, ${isoNow()}
          FROM (SELECT ${caller.userId} AS id) AS owner
          WHERE owner.id IS NOT NULL
            AND (SELECT count(*) FROM webhook_endpoints WHERE user_id = owner.id AND deleted_at IS NULL) < ${MAX_WEBHOOK_ENDPOINTS}`,
    ],
    reads: [sql`SELECT ${columnsOf(webhookEndpoints)} FROM webhook_endpoints WHERE user_id = ${caller.userId} AND secret = ${secret}`],
    committed: ([row]) => rowsOf(row).length > 0,
  });
  const [endpoint] = rowsOf<WebhookEndpointRow>(created);
  if (!endpoint) {
    throw new ApiError('WEBHOOK_ENDPOINT_LIMIT_REACHED', `A user can have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints. Delete one first.`);
  }
  return endpoint;
}

export async function listWebhookEndpoints(d1: Db, caller: Caller): Promise<WebhookEndpointRow[]> {
  const [rows] = await readAs(d1, caller, [
    sql`SELECT ${columnsOf(webhookEndpoints)} FROM webhook_endpoints
        WHERE user_id = ${caller.userId} AND deleted_at IS NULL ORDER BY created_at DESC, id DESC`,
  ]);
  return rowsOf<WebhookEndpointRow>(rows);
}

/** Deleting an endpoint stops its deliveries, pending retries included; its past attempts stay on its events. */
export async function deleteWebhookEndpoint(d1: Db, caller: Caller, endpointId: number): Promise<void> {
  if (!(await endOwnedRow(d1, caller, webhookEndpoints, webhookEndpoints.deletedAt, endpointId))) throw notFound('Webhook endpoint');
}
