import type { Context } from 'hono';
import type { AppEnv } from '../env';
import type { CatalogueChange } from '../services/catalogue/events';
import type { Publish } from '../services/events/log';
import type { IdempotencyClaim } from '../services/idempotency';
import { enqueueEvents } from '../services/events/outbox';
import { runAfterResponse } from './after-response';
import { requestDatabase } from './mode';

/**
 * What a route hands to a service that reports changes: the ids of events its batch committed are enqueued for
 * webhook delivery after the response (waitUntil), never on the request's latency path. A lost enqueue is the
 * scheduled sweep's to redo (the outbox row says it was not enqueued).
 */
export const publishAfterResponse =
  (c: Context<AppEnv>): Publish =>
  (eventIds) => {
    // A sandbox event is delivered from the sandbox (its message says so): src/services/events/outbox.ts.
    if (eventIds.length > 0) runAfterResponse(c, enqueueEvents(requestDatabase(c), c.env.WEBHOOK_QUEUE, eventIds, c.var.mode === 'test'));
  };

/** A change that may write catalogue events: published after the response, their image URLs on this request's origin. */
export const catalogueChange = (c: Context<AppEnv>, claim?: IdempotencyClaim): CatalogueChange => ({
  origin: new URL(c.req.url).origin,
  claim,
  publish: publishAfterResponse(c),
});
