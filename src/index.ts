import { createApp } from './app';
import type { Bindings } from './env';

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Bindings>;

export type AppType = typeof app;
