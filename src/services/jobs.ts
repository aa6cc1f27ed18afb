import { readConfig, type Bindings } from '../env';
import { isoNow } from '../lib/time';
import { expireDeposits } from './deposits';
import { deleteExpiredEvents } from './events';
import { deleteExpiredRecords } from './idempotency';
import { completeHeldOrders } from './orders';
import { enqueueEvents, sweepOutbox } from './outbox';

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
  sweptEvents: number;
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  // A job that reports changes hands its committed events to delivery right away.
  const reporting = (job: () => Promise<string[]>) => async () => {
    const eventIds = await job();
    await enqueueEvents(env.DB, env.WEBHOOK_QUEUE, eventIds);
    return eventIds.length;
  };
  const completedOrders = await drain(reporting(() => completeHeldOrders(env.DB, now, config.orderHoldHours, BATCH_SIZE)));
  const expiredDeposits = await drain(reporting(() => expireDeposits(env.DB, now, BATCH_SIZE)));
  const deletedIdempotencyKeys = await drain(() => deleteExpiredRecords(env.DB, now, BATCH_SIZE));
  const deletedEvents = await drain(() => deleteExpiredEvents(env.DB, nowMs, BATCH_SIZE));
  const sweptEvents = await drain(() => sweepOutbox(env.DB, env.WEBHOOK_QUEUE, nowMs, BATCH_SIZE));
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys, deletedEvents, sweptEvents };
}
