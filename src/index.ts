import { createApp } from './app';
import type { Bindings } from './env';
import { runScheduledJobs } from './services/jobs';

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env) {
    const report = await runScheduledJobs(env, controller.scheduledTime);
    console.log(JSON.stringify({ level: 'info', msg: 'scheduled jobs', cron: controller.cron, ...report }));
  },
} satisfies ExportedHandler<Bindings>;
