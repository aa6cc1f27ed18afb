import { sql } from 'drizzle-orm';
import { rowsOf, runBatch } from '../../db/batch';
import type { Db } from '../../db/client';
import type { EmailRow } from '../../db/schema';
import { isoNow } from '../../lib/time';
import { LINK_LOST, type EmailJob } from './outbox';
import { renderEmail } from './templates';
import type { MailSettings } from './settings';
import { keepPreview } from './previews';

// The EMAIL_QUEUE consumer: each message is one email. A send that throws is retried by the platform after a delay
// (30 s, doubled each time), at most MAX_EMAIL_ATTEMPTS in all, then the email is `failed`; nothing else changes. The
// mail binding is a parameter, so tests hand it a recording stand-in.

export const MAX_EMAIL_ATTEMPTS = 5;
const RETRY_BASE_SECONDS = 30;

export interface EmailContext {
  d1: Db;
  /** env.EMAIL, or null while mail is off. */
  mailer: SendEmail | null;
  settings: MailSettings | null;
  /** EMAIL_PREVIEW=true (local development only): keep each sent email's bodies for the console (src/services/mail/previews.ts). */
  preview?: boolean;
}

type Queued = Pick<EmailRow, 'id' | 'template' | 'subject' | 'data' | 'attempts'> & { to: string; carriesLink: number };

const queuedEmail = (id: string) =>
  sql`SELECT id, to_address AS "to", template, subject, data, carries_link AS carriesLink, attempts FROM emails WHERE id = ${id} AND status = 'queued'`;

/** The email's row after one attempt; guarded on `status = 'queued'` so a redelivered message counts once. */
const settle = (id: string, outcome: { status: 'queued' | 'sent' | 'failed'; messageId?: string; error?: string; attempted: boolean }) => sql`
  UPDATE emails SET status = ${outcome.status}, attempts = attempts + ${outcome.attempted ? 1 : 0}, message_id = ${outcome.messageId ?? null},
                    error = ${outcome.error ?? null}, sent_at = ${outcome.status === 'sent' ? isoNow() : null}
  WHERE id = ${id} AND status = 'queued'`;

/**
 * A message naming no email but carrying a link: "Forgot password?" for an address without an account sends one, so
 * that nothing tells the addresses apart (src/services/accounts/forgot-password.ts). It gets the work of a reset email up to
 * the send: the template rendered with its link, and the "sent" write, which matches no row (no queued email has this
 * id: the read just said so). A redelivered message of a link email that was already sent does the same, harmlessly.
 */
async function decoy(link: string, id: string, { d1, settings }: EmailContext): Promise<Outcome> {
  renderEmail('password_reset', {}, settings?.shopName ?? '', link);
  await runBatch(d1, [settle(id, { status: 'sent', messageId: '', attempted: true })]);
  return { kind: 'skipped' };
}

/** What may be recorded of a failed send: its message, short. */
const sendError = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);

export async function deliverEmails(batch: MessageBatch<EmailJob>, context: EmailContext) {
  const report = { sent: 0, retried: 0, failed: 0, skipped: 0 };
  for (const message of batch.messages) {
    try {
      const outcome = await deliverOne(message.body, context);
      report[outcome.kind] += 1;
      if (outcome.kind === 'retried') message.retry({ delaySeconds: outcome.delaySeconds });
      else message.ack();
    } catch {
      // The database did not answer: the attempt is not counted, the platform redelivers the message.
      message.retry();
      report.retried += 1;
    }
  }
  return report;
}

type Outcome = { kind: 'sent' | 'failed' | 'skipped' } | { kind: 'retried'; delaySeconds: number };

async function deliverOne(job: EmailJob, context: EmailContext): Promise<Outcome> {
  const { d1, mailer, settings, preview = false } = context;
  if (typeof job?.email_id !== 'string') return { kind: 'skipped' };
  const [email] = rowsOf<Queued>((await runBatch(d1, [queuedEmail(job.email_id)]))[0]);
  // Unknown, or already sent or failed (a redelivered message): nothing to send.
  if (!email) return job.link ? decoy(job.link, job.email_id, context) : { kind: 'skipped' };
  const fail = async (error: string, attempted: boolean): Promise<Outcome> => {
    await runBatch(d1, [settle(email.id, { status: 'failed', error, attempted })]);
    return { kind: 'failed' };
  };
  if (!mailer || !settings) return fail('mail is off', false);
  if (email.carriesLink === 1 && !job.link) return fail(LINK_LOST, false);
  const { text, html } = renderEmail(email.template, JSON.parse(email.data) as Record<string, unknown>, settings.shopName, job.link, settings.supportEmail);
  let messageId: string;
  try {
    ({ messageId } = await mailer.send({ from: settings.from, to: email.to, subject: email.subject, text, html }));
  } catch (err) {
    const attempt = email.attempts + 1;
    if (attempt >= MAX_EMAIL_ATTEMPTS) return fail(sendError(err), true);
    await runBatch(d1, [settle(email.id, { status: 'queued', error: sendError(err), attempted: true })]);
    return { kind: 'retried', delaySeconds: RETRY_BASE_SECONDS * 2 ** (attempt - 1) };
  }
  await runBatch(d1, [settle(email.id, { status: 'sent', messageId, attempted: true }), ...(preview ? [keepPreview(email.id, text, html, isoNow())] : [])]);
  return { kind: 'sent' };
}
