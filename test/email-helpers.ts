import { createExecutionContext, createMessageBatch, env, getQueueResult } from 'cloudflare:test';
import { vi } from 'vitest';
import entry from '../src/index';
import { runScheduledJobs } from '../src/services/operator/jobs';
import type { EmailJob } from '../src/services/mail/outbox';
import { call, type CallOptions } from './helpers';

// Email tests: requests whose emails go to a recording queue (not the real one, whose consumer would send them on
// its own), and the worker's own queue() handed a recording stand-in for the EMAIL binding.

export interface SentEmail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** A stand-in for EMAIL that keeps what it was asked to send; `failing` makes every send throw. */
export function recordingMailer({ failing = false } = {}) {
  const sent: SentEmail[] = [];
  const mailer = {
    send: async (message: SentEmail) => {
      if (failing) throw new Error('Email Service refused the message');
      sent.push(message);
      return { messageId: `<msg-${sent.length}@example.com>` };
    },
  };
  return { sent, mailer: mailer as unknown as SendEmail };
}

/** A stand-in for EMAIL_QUEUE that keeps what is enqueued. */
export function recordingQueue() {
  const jobs: EmailJob[] = [];
  const queue = {
    send: async (body: EmailJob) => void jobs.push(body),
    sendBatch: async (messages: Iterable<{ body: EmailJob }>) => void jobs.push(...[...messages].map((m) => m.body)),
  };
  return { jobs, queue: queue as unknown as Queue<EmailJob> };
}

const worker = entry as ExportedHandler<Cloudflare.Env>;

/** One batch of email jobs through the worker's queue(), as the platform would deliver it: acks and retry delays. */
export async function consumeEmails(jobs: EmailJob[], vars: Record<string, unknown>) {
  const batch = createMessageBatch<EmailJob>(
    'stock-wallet-emails',
    jobs.map((body, i) => ({ id: `email-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const retries = batch.messages.map((message) => vi.spyOn(message, 'retry'));
  const ctx = createExecutionContext();
  await worker.queue!(batch, { ...env, ...vars } as Cloudflare.Env, ctx);
  const { explicitAcks } = await getQueueResult(batch, ctx);
  const retryDelays = retries.flatMap((spy) => spy.mock.calls.map(([options]) => options?.delaySeconds));
  return { explicitAcks, retryDelays };
}

/** A request whose emails go to a recording queue. */
export async function callWithQueue(path: string, options: CallOptions = {}) {
  const recorded = recordingQueue();
  const res = await call(path, { ...options, vars: { ...(options.vars ?? {}), EMAIL_QUEUE: recorded.queue as unknown as RateLimit } });
  return { res, jobs: recorded.jobs };
}

/** Consumes the jobs with a recording mailer: what was sent. */
export async function send(jobs: EmailJob[]) {
  const recorder = recordingMailer();
  const result = await consumeEmails(jobs, { EMAIL: recorder.mailer });
  return { ...result, sent: recorder.sent };
}

/** One scheduled run at `nowMs` (a clock of the test's own), its emails going to a recording queue: what it enqueued. */
export async function scheduledRun(nowMs: number): Promise<EmailJob[]> {
  const recorded = recordingQueue();
  await runScheduledJobs({ ...env, EMAIL_QUEUE: recorded.queue } as never, nowMs);
  return recorded.jobs;
}

export interface EmailRowView {
  id: string;
  to_address: string;
  template: string;
  subject: string;
  data: string;
  status: string;
  attempts: number;
  message_id: string | null;
  error: string | null;
  enqueued_at: string | null;
}

/** The outbox rows of an address (or of every address when omitted), oldest first. */
export async function emailsTo(address: string): Promise<EmailRowView[]> {
  const { results } = await env.DB.prepare('SELECT * FROM emails WHERE to_address = ? COLLATE NOCASE ORDER BY created_at, id').bind(address).all<EmailRowView>();
  return results;
}

/** The operator_alerts lines of a kind matching `like`, oldest first. */
export const alertLines = async (kind: string, like: string) =>
  (await env.DB.prepare('SELECT line FROM operator_alerts WHERE kind = ? AND line LIKE ? ORDER BY id').bind(kind, like).all<{ line: string }>()).results.map(
    (r) => r.line,
  );

/** The operator_alert rows of one kind an address got, oldest first. */
export const alertEmailsTo = async (address: string, kind: string) =>
  (await emailsTo(address)).filter((e) => e.template === 'operator_alert' && JSON.parse(e.data).kind === kind);

/** Every text value of every row of every table, to prove a secret was never stored. */
export async function everyStoredText(): Promise<string> {
  const { results: tables } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
  ).all<{ name: string }>();
  const parts: string[] = [];
  for (const { name } of tables) {
    const { results } = await env.DB.prepare(`SELECT * FROM "${name}"`).all();
    parts.push(JSON.stringify(results));
  }
  return parts.join('\n');
}
