import { resilient } from '../../db/d1';
import type { Bindings, Config } from '../../env';
import { refreshSandboxMirror, type MirrorReport } from './mirror';
import { sweepTestKeyMakers, type MakerSweepReport } from './key-makers';
import { expireDeposits } from '../payments/deposits';
import { completeHeldOrders } from '../orders/orders';
import { sweepOutbox } from '../events/outbox';

// The scheduled run's share for test mode (docs/test-mode.md): the sandbox's catalogue copied from the live shop
// again (`mirrorSandbox`, in every run that has its statements left), and one round of the test keys' live makers
// swept and the sandbox's own held orders, expired deposits and event outbox, as live has them (`runSandboxJobs`).

/** Statements of one sandbox round: completions 3, expiries 3, outbox 2, the test keys' makers 6. */
export const SANDBOX_JOB_STATEMENTS = 14;
/** Statements of the mirror of a catalogue up to about a megabyte (one chunk): the live read 1, the sandbox batch 6. */
export const MIRROR_STATEMENTS = 7;
const ROUND = 300;

export interface SandboxJobReport {
  /** Test keys whose live makers are revoked or gone, revoked now; users disabled (or enabled) as live says. */
  makers: MakerSweepReport;
  completedOrders: number;
  expiredDeposits: number;
  enqueuedEvents: number;
}

/** The sandbox's catalogue made the live shop's; null when it failed (the next run, or an operator's change, does it). */
export async function mirrorSandbox(env: Bindings, sandboxBinding: D1Database, nowMs: number): Promise<MirrorReport | null> {
  return refreshSandboxMirror(resilient(env.DB), resilient(sandboxBinding), nowMs).catch((err: unknown) => {
    // The live shop never waits on its sandbox.
    console.warn(JSON.stringify({ level: 'warn', msg: 'sandbox mirror stopped', class: err instanceof Error ? err.name : typeof err }));
    return null;
  });
}

export async function runSandboxJobs(env: Bindings, sandboxBinding: D1Database, config: Config, nowMs: number, now: string): Promise<SandboxJobReport> {
  const makers = await sweepTestKeyMakers(resilient(env.DB), resilient(sandboxBinding), nowMs);
  const completedOrders = await completeHeldOrders(sandboxBinding, now, config.orderHoldHours, ROUND);
  const expiredDeposits = await expireDeposits(sandboxBinding, now, ROUND);
  const enqueuedEvents = await sweepOutbox(sandboxBinding, env.WEBHOOK_QUEUE, nowMs, ROUND, true);
  return { makers, completedOrders, expiredDeposits, enqueuedEvents };
}
