import { readConfig, type Bindings } from '../env';
import { isoNow } from '../lib/time';
import { expireDeposits } from './deposits';
import { deleteExpiredEvents } from './events';
import { deleteExpiredRecords } from './idempotency';
import { completeHeldOrders } from './orders';
import { sweepOutbox } from './outbox';
import { deleteExpiredSessions } from './sessions';

// Each job is one guarded UPDATE (or DELETE) over at most `batchSize` rows, repeated while a backlog remains; two runs
// at once cannot double-apply anything because every UPDATE re-checks the status it changes. D1 allows 50 queries per
// invocation on the Free plan, each statement counting: a run makes at most 8×3 + 3×3 + 3×2 + 3×1 + 2×1 + 2×2 = 48.
const BATCH_SIZE = 300;
// Completing orders is the backlog that grows with sales: bigger statements
// and more of them, up to 40,000 orders a run (8,000 a minute). One statement of 5,000
// holds the database for 0.2 to 0.3 s (`npm run bench:jobs`, README "Scheduled jobs").
const ORDER_BATCH_SIZE = 5_000;
const ORDER_ROUNDS = 8;

async function drain(job: (limit: number) => Promise<number>, batchSize: number, maxRounds: number): Promise<number> {
  let total = 0;
  for (let round = 0; round < maxRounds; round++) {
    const changed = await job(batchSize);
    total += changed;
    if (changed < batchSize) break;
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
  deletedSessions: number;
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  // Statements per round: a completion or expiry writes its events with the change (3), key cleanup covers users'
  // and the operator's keys (2), the outbox sweep reads and marks (2).
  const completedOrders = await drain((limit) => completeHeldOrders(env.DB, now, config.orderHoldHours, limit), ORDER_BATCH_SIZE, ORDER_ROUNDS);
  const expiredDeposits = await drain((limit) => expireDeposits(env.DB, now, limit), BATCH_SIZE, 3);
  const deletedIdempotencyKeys = await drain((limit) => deleteExpiredRecords(env.DB, now, limit), BATCH_SIZE, 3);
  const deletedEvents = await drain((limit) => deleteExpiredEvents(env.DB, nowMs, limit), BATCH_SIZE, 3);
  const deletedSessions = await drain((limit) => deleteExpiredSessions(env.DB, now, limit), BATCH_SIZE, 2);
  const enqueuedEvents = await drain((limit) => sweepOutbox(env.DB, env.WEBHOOK_QUEUE, nowMs, limit), BATCH_SIZE, 2);
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys, deletedEvents, deletedSessions, enqueuedEvents };
}
