import { readConfig, type Bindings } from '../env';
import { isoNow } from '../lib/time';
import { expireDeposits } from './deposits';
import { deleteExpiredRecords } from './idempotency';
import { completeHeldOrders } from './orders';

// Each job is one guarded UPDATE (or DELETE) over at most `batchSize` rows, repeated while a backlog remains; two runs
// at once cannot double-apply anything because every UPDATE re-checks the status it changes. D1 allows 50 queries per
// invocation on the Free plan, each statement counting: a run makes at most 20 + 5 + 5 of them.
const BATCH_SIZE = 300;
const MAX_ROUNDS = 5;
// Completing orders is the backlog that grows with sales: bigger statements
// and more of them, up to 100,000 orders a run, more than D1 takes in purchases in 5 minutes. One statement of 5,000
// holds the database for 0.2 to 0.3 s (`npm run bench:jobs`, README "Scheduled jobs").
const ORDER_BATCH_SIZE = 5_000;
const ORDER_ROUNDS = 20;

async function drain(job: (limit: number) => Promise<number>, batchSize = BATCH_SIZE, maxRounds = MAX_ROUNDS): Promise<number> {
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
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  const completedOrders = await drain((limit) => completeHeldOrders(env.DB, now, config.orderHoldHours, limit), ORDER_BATCH_SIZE, ORDER_ROUNDS);
  const expiredDeposits = await drain((limit) => expireDeposits(env.DB, now, limit));
  const deletedIdempotencyKeys = await drain((limit) => deleteExpiredRecords(env.DB, now, limit));
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys };
}
