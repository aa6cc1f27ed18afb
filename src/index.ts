import { createApp } from './app';
import { resilient } from './db/d1';
import { readConfig, type Bindings } from './env';
import { presentEvent } from './routes/events';
import { runScheduledJobs } from './services/jobs';
import { deliverWebhooks } from './services/webhook-delivery';

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const report = await runScheduledJobs(env, controller.scheduledTime);
    console.log(JSON.stringify({ level: 'info', msg: 'scheduled jobs', cron: controller.cron, ...report }));
  },
  /** Outgoing webhooks: one message per event and endpoint (src/services/webhook-delivery.ts). */
  async queue(batch, env) {
    const context = { d1: resilient(env.DB), config: readConfig(env), deadLetters: env.WEBHOOK_DLQ, render: presentEvent };
    const report = await deliverWebhooks(batch, context);
    if (env.LOG_REQUESTS !== 'false') console.log(JSON.stringify({ level: 'info', msg: 'webhook deliveries', queue: batch.queue, ...report }));
  },
} satisfies ExportedHandler<Bindings>;
