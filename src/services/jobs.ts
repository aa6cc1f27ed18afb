import { readConfig, type Bindings } from '../env';
import { isoNow } from '../lib/time';
import { expireDeposits } from './deposits';
import { deleteExpiredRecords } from './idempotency';
import { completeHeldOrders } from './orders';
import { deleteExpiredSessions } from './sessions';

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
  deletedSessions: number;
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  const completedOrders = await drain(() => completeHeldOrders(env.DB, now, config.orderHoldHours, BATCH_SIZE));
  const expiredDeposits = await drain(() => expireDeposits(env.DB, now, BATCH_SIZE));
  const deletedIdempotencyKeys = await drain(() => deleteExpiredRecords(env.DB, now, BATCH_SIZE));
  const deletedSessions = await drain(() => deleteExpiredSessions(env.DB, now, BATCH_SIZE));
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys, deletedSessions };
}
