import { readConfig, type Bindings } from '../../env';
import { isoNow } from '../../lib/time';
import { expireDeposits } from '../payments/deposits';
import { deleteExpiredEvents } from '../events/log';
import { deleteExpiredRecords } from '../idempotency';
import { completeHeldOrders } from '../orders/orders';
import { sweepOutbox } from '../events/outbox';
import { sweepEmails } from '../mail/outbox';
import { deleteExpiredSessions } from '../accounts/sessions';
import { pollVendors, type PollReport } from '../payments/poll';
import { readMailSettings, scheduledMail } from '../mail/settings';
import { emailAlerts } from '../mail/alerts';

// Each job is one guarded UPDATE (or DELETE) over at most `batchSize` rows, repeated while a backlog remains; two runs
// at once cannot double-apply anything because every UPDATE re-checks the status it changes. D1 allows 50 queries per
// invocation on the Free plan, each statement counting: the jobs make at most 8×3 + 3×3 + 3×2 + 3×1 + 2×1 + 2×2 + 1×2 = 50
// (when every backlog is full; a usual run makes 12), and the vendor poll spends what the run has left.
const QUERIES_PER_INVOCATION = 50;
const BATCH_SIZE = 300;
// Completing orders is the backlog that grows with sales: bigger statements
// and more of them, up to 40,000 orders a run (8,000 a minute). One statement of 5,000
// holds the database for 0.2 to 0.3 s (`npm run bench:jobs`, README "Scheduled jobs").
const ORDER_BATCH_SIZE = 5_000;
const ORDER_ROUNDS = 8;

/** Statements a run has sent so far: each job's rounds times its statements per round. */
interface Spent {
  statements: number;
}

async function drain(job: (limit: number) => Promise<number>, batchSize: number, maxRounds: number, statementsPerRound: number, spent: Spent): Promise<number> {
  let total = 0;
  for (let round = 0; round < maxRounds; round++) {
    spent.statements += statementsPerRound;
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
  /** Emails handed to the email queue whose enqueue after their request was lost (src/services/mail/outbox.ts). */
  enqueuedEmails: number;
  /** Real-provider deposits asked about at their vendors (src/services/payments/poll.ts). */
  poll: PollReport;
}

export async function runScheduledJobs(env: Bindings, nowMs = Date.now()): Promise<JobReport> {
  const config = readConfig(env);
  const now = isoNow(nowMs);
  // Statements per round: a completion or expiry writes its events with the change (3), key cleanup covers users'
  // and the operator's keys (2), the outbox sweep reads and marks (2).
  const spent: Spent = { statements: 0 };
  const completedOrders = await drain((limit) => completeHeldOrders(env.DB, now, config.orderHoldHours, limit), ORDER_BATCH_SIZE, ORDER_ROUNDS, 3, spent);
  const expiredDeposits = await drain((limit) => expireDeposits(env.DB, now, limit), BATCH_SIZE, 3, 3, spent);
  const deletedIdempotencyKeys = await drain((limit) => deleteExpiredRecords(env.DB, now, limit), BATCH_SIZE, 3, 2, spent);
  const deletedEvents = await drain((limit) => deleteExpiredEvents(env.DB, nowMs, limit), BATCH_SIZE, 3, 1, spent);
  const deletedSessions = await drain((limit) => deleteExpiredSessions(env.DB, now, limit), BATCH_SIZE, 2, 1, spent);
  const enqueuedEvents = await drain((limit) => sweepOutbox(env.DB, env.WEBHOOK_QUEUE, nowMs, limit), BATCH_SIZE, 2, 2, spent);
  // Alert emails (2 statements) only when the run can afford them; otherwise the next run sends them.
  if (spent.statements + 2 + 2 <= QUERIES_PER_INVOCATION) {
    spent.statements += 2;
    await emailAlerts(env.DB, readMailSettings(env), now);
  }
  const enqueuedEmails = await drain((limit) => sweepEmails(env.DB, env.EMAIL_QUEUE, nowMs, limit), BATCH_SIZE, 1, 2, spent);
  const poll = await pollVendors(env.DB, config, nowMs, QUERIES_PER_INVOCATION - spent.statements, scheduledMail(env)).catch((err: unknown) => {
    // A database fault in the poll loses nothing: the deposits are asked again on the next run.
    console.warn(JSON.stringify({ level: 'warn', msg: 'deposit poll stopped', class: err instanceof Error ? err.name : typeof err }));
    return { asked: 0, changed: 0, skipped: 0, statements: 0 };
  });
  return { completedOrders, expiredDeposits, deletedIdempotencyKeys, deletedEvents, deletedSessions, enqueuedEvents, enqueuedEmails, poll };
}
