import { createApp } from './app';
import { resilient } from './db/d1';
import { readConfig, type Bindings, type DeliveryMessage } from './env';
import { presentEvent } from './routes/events/events';
import { runScheduledJobs } from './services/operator/jobs';
import { runSandboxScheduled, SANDBOX_CRON } from './services/sandbox/jobs';
import { deliverWebhooks } from './services/events/delivery';
import { deliverEmails } from './services/mail/delivery';
import type { EmailJob } from './services/mail/outbox';
import { readMailSettings } from './services/mail/settings';
import { isPreviewOn } from './services/mail/previews';

const app = createApp();
/** The queue of EMAIL_QUEUE (wrangler.toml); every other queue this worker consumes is the webhooks'. */
const EMAIL_QUEUE_NAME = 'stock-wallet-emails';

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    // Two crons (wrangler.toml), two invocations, each with its own query budget: test mode's never takes the live's.
    if (controller.cron === SANDBOX_CRON) {
      const report = await runSandboxScheduled(env, controller.scheduledTime);
      console.log(JSON.stringify({ level: 'info', msg: 'sandbox scheduled jobs', cron: controller.cron, ...report }));
      return;
    }
    const report = await runScheduledJobs(env, controller.scheduledTime);
    console.log(JSON.stringify({ level: 'info', msg: 'scheduled jobs', cron: controller.cron, ...report }));
  },
  /** Outgoing webhooks: one message per event and endpoint (src/services/events/delivery.ts); emails: one message each. */
  async queue(batch, env) {
    if (batch.queue === EMAIL_QUEUE_NAME) {
      const report = await deliverEmails(batch as MessageBatch<EmailJob>, {
        d1: resilient(env.DB),
        mailer: env.EMAIL ?? null,
        settings: readMailSettings(env),
        preview: isPreviewOn(env.EMAIL_PREVIEW),
      });
      if (env.LOG_REQUESTS !== 'false') console.log(JSON.stringify({ level: 'info', msg: 'emails', queue: batch.queue, ...report }));
      return;
    }
    // Test-mode events (their message says `sandbox`) are read, signed and recorded in the sandbox; it alerts no one.
    const [live, sandbox] = partition(batch as MessageBatch<DeliveryMessage>, (body) => body?.sandbox === true);
    const config = readConfig(env);
    const common = { config, deadLetters: env.WEBHOOK_DLQ };
    if (live.messages.length > 0) {
      const report = await deliverWebhooks(live, { ...common, d1: resilient(env.DB), render: (e) => presentEvent(e, true), alerts: readMailSettings(env) });
      if (env.LOG_REQUESTS !== 'false') console.log(JSON.stringify({ level: 'info', msg: 'webhook deliveries', queue: batch.queue, ...report }));
    }
    if (sandbox.messages.length > 0) {
      // Without the binding now, the messages cannot be delivered: acked by an empty database's answer (dropped).
      const report = env.SANDBOX_DB
        ? await deliverWebhooks(sandbox, { ...common, d1: resilient(env.SANDBOX_DB), render: (e) => presentEvent(e, false), alerts: null })
        : (sandbox.ackAll(), { dropped: sandbox.messages.length });
      if (env.LOG_REQUESTS !== 'false') console.log(JSON.stringify({ level: 'info', msg: 'webhook deliveries', queue: batch.queue, livemode: false, ...report }));
    }
  },
} satisfies ExportedHandler<Bindings>;

/** A batch's messages in two batches by their body, each acked or retried on its own. */
function partition<T>(batch: MessageBatch<T>, second: (body: T) => boolean): [MessageBatch<T>, MessageBatch<T>] {
  const part = (messages: readonly Message<T>[]): MessageBatch<T> => ({
    ...batch,
    queue: batch.queue,
    messages,
    ackAll: () => messages.forEach((m) => m.ack()),
    retryAll: (options) => messages.forEach((m) => m.retry(options)),
  });
  return [part(batch.messages.filter((m) => !second(m.body))), part(batch.messages.filter((m) => second(m.body)))];
}
