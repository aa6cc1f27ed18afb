import type { TestProject } from 'vitest/node';
import { startDevServer, type DevServer } from './dev-server';

declare module 'vitest' {
  export interface ProvidedContext {
    devServer: { origin: string; api: string; adminToken: string; logFile: string };
  }
}

// One `npm run dev` for all browser and document tests.
let server: DevServer | undefined;

export async function setup(project: TestProject) {
  server = await startDevServer(Number(process.env.E2E_PORT ?? 8797));
  project.provide('devServer', { origin: server.origin, api: server.api, adminToken: server.adminToken, logFile: server.logFile });
}

export async function teardown() {
  await server?.stop();
}
