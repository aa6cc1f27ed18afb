import { resilient } from '../../db/d1';
import { readConfig, type Bindings, type Config } from '../../env';
import { isoNow } from '../../lib/time';
import { refreshSandboxMirror, type MirrorReport } from './mirror';
import { sweepTestKeyMakers, type MakerSweepReport } from './key-makers';
import { expireDeposits } from '../payments/deposits';
import { completeHeldOrders } from '../orders/orders';
import { sweepOutbox } from '../events/outbox';

// Test mode's scheduled run (docs/test-mode.md): its own cron, so its own invocation and its own 50 queries (the Free
// plan's budget), never competing with the live shop's jobs and vendor poll: the sandbox's catalogue copied from the
// live shop again (`mirrorSandbox`), then one round of the test keys' live makers swept and the sandbox's own held
// orders, expired deposits and event outbox, as live has them (`runSandboxJobs`): 7 + 14 statements.

/** wrangler.toml's second cron: two minutes after each run of the live shop's jobs (every 5 minutes). */
export const SANDBOX_CRON = '2-59/5 * * * *';

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

export interface SandboxRunReport {
  /** The catalogue's refresh; null when it failed (the next run, or an operator's change, does it). */
  mirror: MirrorReport | null;
  /** The sandbox's own round; null when it failed (the next run does it again). */
  sandbox: SandboxJobReport | null;
}

/** The run of SANDBOX_CRON: null without a sandbox. */
export async function runSandboxScheduled(env: Bindings, nowMs = Date.now()): Promise<SandboxRunReport | null> {
  if (!env.SANDBOX_DB) return null;
  const mirror = await mirrorSandbox(env, env.SANDBOX_DB, nowMs);
  const sandbox = await runSandboxJobs(env, env.SANDBOX_DB, readConfig(env), nowMs, isoNow(nowMs)).catch((err: unknown) => {
    // The next run does it again; the live shop never waits on its sandbox.
    console.warn(JSON.stringify({ level: 'warn', msg: 'sandbox jobs stopped', class: err instanceof Error ? err.name : typeof err }));
    return null;
  });
  return { mirror, sandbox };
}
