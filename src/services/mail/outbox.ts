import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import type { EmailTemplate } from '../../db/schema';
import { randomBase62 } from '../../lib/crypto';
import { isoNow } from '../../lib/time';

// The email outbox, as the event log is for webhooks: an email is one `emails` row written by a statement in the
// batch of the effect that causes it (none when the effect rolls back or is refused), then one queue message,
// enqueued after the response or by the scheduled sweep. A link token is never stored: it travels only in the queue
// message, so an email that carries a link and whose message was lost is marked failed, not re-sent.

import type { EmailJob } from '../../env';
export type { EmailJob };

export const newEmailId = () => `eml_${randomBase62(24)}`;

/** Queues take at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;
/** The sweep leaves younger emails to the request that wrote them, which is enqueueing them right now. */
const SWEEP_GRACE_MS = 60_000;
export const LINK_LOST = 'link not sent; request a new one';

export interface EmailRecord {
  id: string;
  template: EmailTemplate;
  subject: string;
  /** `FROM ... WHERE ...` yielding at most one row: the email exists only when it matches (the effect happened). */
  from: SQL;
  /** Expressions over `from`'s row: the recipient, its user (or NULL), and the template's fields as a JSON object. */
  to: SQL;
  userId: SQL;
  data: SQL;
  carriesLink?: boolean;
  /** Its fields hold a link to the shop (a receipt's order page): like a token link, it needs PUBLIC_BASE_URL. */
  linksToShop?: boolean;
  /** Recorded `failed` with this error and never enqueued (a link is needed while PUBLIC_BASE_URL is unset). */
  failed?: string;
}

/** The statement that records one email in its effect's batch; it goes after the effect's own statements. */
export const recordEmail = (email: EmailRecord, now: string): SQL => sql`
  INSERT INTO emails (id, to_address, user_id, template, subject, data, carries_link, status, error, created_at)
  SELECT ${email.id}, ${email.to}, ${email.userId}, ${email.template}, ${email.subject}, ${email.data}, ${email.carriesLink ? 1 : 0},
         ${email.failed === undefined ? 'queued' : 'failed'}, ${email.failed ?? null}, ${now}
  ${email.from}`;

/** A read for the end of the batch: which of these emails it recorded. */
export const emailsRecorded = (ids: string[]): SQL =>
  sql`SELECT id FROM emails WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;

/** The jobs whose emails the batch recorded, from `emailsRecorded`'s result. */
export function recordedJobs(result: D1Result | undefined, jobs: EmailJob[]): EmailJob[] {
  const recorded = new Set(rowsOf<{ id: string }>(result).map((row) => row.id));
  return jobs.filter((job) => recorded.has(job.email_id));
}

/** Marks emails enqueued, and (with `lostLinks`) fails the lost ones that carry a link: one statement. */
const markEnqueued = (ids: string[], now: string, lostLinks: SQL = sql`0`) => sql`
  UPDATE emails SET enqueued_at = ${now},
                    status = CASE WHEN ${lostLinks} THEN 'failed' ELSE status END,
                    error = CASE WHEN ${lostLinks} THEN ${LINK_LOST} ELSE error END
  WHERE (id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) OR ${lostLinks}) AND enqueued_at IS NULL`;

async function send(queue: Queue<EmailJob>, jobs: EmailJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += SEND_BATCH_LIMIT) {
    await queue.sendBatch(jobs.slice(i, i + SEND_BATCH_LIMIT).map((body) => ({ body })));
  }
}

/**
 * After a request: its committed emails. Without a queue binding they stay in the outbox for the sweep. A mark lost
 * to a fault only means the sweep enqueues those emails again (or, for a link, marks them failed although they were
 * sent: the user asks for a new link).
 */
export async function enqueueEmails(d1: Db, queue: Queue<EmailJob> | undefined, jobs: EmailJob[]): Promise<void> {
  if (!queue || jobs.length === 0) return;
  await send(queue, jobs);
  await runBatch(d1, [markEnqueued(jobs.map((job) => job.email_id), isoNow())]);
}

/**
 * Scheduled job, two statements: the emails whose enqueue was lost (older than a minute, never enqueued) and those
 * this run wrote are enqueued; one that carries a link cannot be rebuilt and is marked failed. Returns how many were
 * enqueued.
 */
export async function sweepEmails(d1: Db, queue: Queue<EmailJob> | undefined, nowMs: number, limit: number): Promise<number> {
  if (!queue) return 0;
  const now = isoNow(nowMs);
  const lost = sql`status = 'queued' AND enqueued_at IS NULL AND (created_at <= ${isoNow(nowMs - SWEEP_GRACE_MS)} OR created_at = ${now})`;
  const [pending] = await runBatch(d1, [sql`SELECT id AS email_id FROM emails WHERE ${lost} AND carries_link = 0 ORDER BY created_at LIMIT ${limit}`]);
  const jobs = rowsOf<EmailJob>(pending);
  await send(queue, jobs);
  await runBatch(d1, [markEnqueued(jobs.map((job) => job.email_id), now, sql`(${lost} AND carries_link = 1)`)]);
  return jobs.length;
}
