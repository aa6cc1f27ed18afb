import { createApp } from './app';
import { resilient } from './db/d1';
import { readConfig, type Bindings } from './env';
import { presentEvent } from './routes/events';
import { runScheduledJobs } from './services/jobs';
import { deliverWebhooks } from './services/webhook-delivery';
import { deliverEmails } from './services/email-delivery';
import type { EmailJob } from './services/email-outbox';
import { readMailSettings } from './services/mail';
import { isPreviewOn } from './services/mail/previews';

const app = createApp();
/** The queue of EMAIL_QUEUE (wrangler.toml); every other queue this worker consumes is the webhooks'. */
const EMAIL_QUEUE_NAME = 'stock-wallet-emails';

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const report = await runScheduledJobs(env, controller.scheduledTime);
    console.log(JSON.stringify({ level: 'info', msg: 'scheduled jobs', cron: controller.cron, ...report }));
  },
  /** Outgoing webhooks: one message per event and endpoint (src/services/webhook-delivery.ts); emails: one message each. */
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
    const context = { d1: resilient(env.DB), config: readConfig(env), deadLetters: env.WEBHOOK_DLQ, render: presentEvent, alerts: readMailSettings(env) };
    const report = await deliverWebhooks(batch, context);
    if (env.LOG_REQUESTS !== 'false') console.log(JSON.stringify({ level: 'info', msg: 'webhook deliveries', queue: batch.queue, ...report }));
  },
} satisfies ExportedHandler<Bindings>;
