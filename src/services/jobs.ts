import { readConfig, type Bindings } from '../env';
import { isoNow } from '../lib/time';
import { expireDeposits } from './deposits';
import { deleteExpiredEvents } from './events';
import { deleteExpiredRecords } from './idempotency';
import { completeHeldOrders } from './orders';
import { sweepOutbox } from './outbox';

// Each job is one guarded UPDATE (or DELETE) over at most BATCH_SIZE rows, repeated a few times while a backlog remains; two
// runs at once cannot double-apply anything because every UPDATE re-checks the status it changes.
const BATCH_SIZE = 300;
const MAX_ROUNDS = 5;

async function drain(job: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const changed = await job();
    total += changed;
    if (changed < BATCH_SIZE) break;
  }
  return total;
}

export interface JobReport {
  completedOrders: number;
  expiredDeposits: number;
  deletedIdempotencyKeys: number;
  deletedEvents: number;
  /** Events handed to the webhook queue: this run's own (completions, expiries) and any whose enqueue was lost. */
  enqueuedEvents: number;
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  const completedOrders = await drain(() => completeHeldOrders(env.DB, now, config.orderHoldHours, BATCH_SIZE));
  const expiredDeposits = await drain(() => expireDeposits(env.DB, now, BATCH_SIZE));
  const deletedIdempotencyKeys = await drain(() => deleteExpiredRecords(env.DB, now, BATCH_SIZE));
  const deletedEvents = await drain(() => deleteExpiredEvents(env.DB, nowMs, BATCH_SIZE));
  const enqueuedEvents = await drain(() => sweepOutbox(env.DB, env.WEBHOOK_QUEUE, nowMs, BATCH_SIZE));
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys, deletedEvents, enqueuedEvents };
}
