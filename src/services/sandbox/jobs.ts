import { resilient } from '../../db/d1';
import type { Bindings, Config } from '../../env';
import { refreshSandboxMirror, type MirrorReport } from './mirror';
import { expireDeposits } from '../payments/deposits';
import { completeHeldOrders } from '../orders/orders';
import { sweepOutbox } from '../events/outbox';

// The scheduled run's share for test mode (docs/test-mode.md): the sandbox's catalogue copied from the live shop
// again, and one round of the sandbox's own held orders, expired deposits and event outbox, as live has them.

/** Statements of one sandbox round (a one-chunk catalogue): the mirror 1 + 6, completions 3, expiries 3, outbox 2. */
export const SANDBOX_JOB_STATEMENTS = 15;
const ROUND = 300;

export interface SandboxJobReport {
  mirror: MirrorReport;
  completedOrders: number;
  expiredDeposits: number;
  enqueuedEvents: number;
}

export async function runSandboxJobs(env: Bindings, sandboxBinding: D1Database, config: Config, nowMs: number, now: string): Promise<SandboxJobReport> {
  const sandbox = resilient(sandboxBinding);
  const mirror = await refreshSandboxMirror(resilient(env.DB), sandbox, nowMs);
  const completedOrders = await completeHeldOrders(sandboxBinding, now, config.orderHoldHours, ROUND);
  const expiredDeposits = await expireDeposits(sandboxBinding, now, ROUND);
  const enqueuedEvents = await sweepOutbox(sandboxBinding, env.WEBHOOK_QUEUE, nowMs, ROUND, true);
  return { mirror, completedOrders, expiredDeposits, enqueuedEvents };
}
