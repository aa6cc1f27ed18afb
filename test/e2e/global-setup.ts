import type { TestProject } from 'vitest/node';
import { startDevServer, suitePort, type DevServer } from './dev-server';

declare module 'vitest' {
  export interface ProvidedContext {
    devServer: { origin: string; api: string; adminToken: string; logFile: string };
    /** What `npm run dev` printed up to its banner, and its DEV_STATE_DIR (its local database). */
    devScript: { startup: string; stateDir: string };
  }
}

// One `npm run dev` for all browser and document tests.
let server: DevServer | undefined;

export async function setup(project: TestProject) {
  server = await startDevServer(await suitePort());
  project.provide('devServer', { origin: server.origin, api: server.api, adminToken: server.adminToken, logFile: server.logFile });
  project.provide('devScript', { startup: server.output(), stateDir: server.stateDir });
}

export async function teardown() {
  await server?.stop();
}
