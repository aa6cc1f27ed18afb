import { createExecutionContext, env, SELF as WORKER, waitOnExecutionContext } from 'cloudflare:test';
import { createApp } from '../src/app';
import type { Bindings } from '../src/env';
import worker from '../src/index';
import { assertContract, checkedFetch, type Doc } from './contract-check';
import { productionD1, productionSandboxD1, type InvocationOptions } from './production-d1';

// The worker tests' entry points, every response checked against the published contract (test/contract-check.ts),
// every invocation on a production-faithful D1 (test/production-d1.ts: D1's limits enforced, faults injectable,
// round trips recorded). Tests import `SELF` and `createCheckedApp` from here instead of the raw ones.

let docPromise: Promise<Doc> | undefined;
const loadDoc = () => (docPromise ??= WORKER.fetch('http://localhost/api/v2/openapi.json').then((r) => r.json() as Promise<Doc>));

let invocationOptions: () => InvocationOptions = () => ({});

/** What the next invocations' D1 does (faults, round-trip recording); returns a function that restores the default. */
export function useInvocationOptions(options: () => InvocationOptions): () => void {
  invocationOptions = options;
  return () => {
    invocationOptions = () => ({});
  };
}

/** One invocation of the worker's fetch handler, on its own production-faithful D1; work after the response awaited. */
async function invoke(request: Request, overrides: Partial<Bindings> | Record<string, unknown> = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const options = invocationOptions();
  const bindings = { ...env, ...overrides, DB: productionD1(env.DB, options), SANDBOX_DB: env.SANDBOX_DB && productionSandboxD1(env.SANDBOX_DB, options) } as Bindings;
  const response = await worker.fetch(request, bindings, ctx);
  options.responded?.();
  await waitOnExecutionContext(ctx);
  return response;
}

/** The worker under test, every response checked against the published contract. */
export const SELF = { fetch: checkedFetch((request) => invoke(request), loadDoc) };

/** An in-test app (for env overrides), every response checked against the published contract. */
export function createCheckedApp() {
  const app = createApp();
  return {
    async request(path: string, init: RequestInit = {}, overrides: Partial<Bindings> | Record<string, unknown> = {}): Promise<Response> {
      const ctx = createExecutionContext();
      const db = 'DB' in overrides ? (overrides as Partial<Bindings>).DB : env.DB;
      const options = invocationOptions();
      const sandbox = 'SANDBOX_DB' in overrides ? (overrides as Partial<Bindings>).SANDBOX_DB : env.SANDBOX_DB;
      const bindings = { ...env, ...overrides, DB: db && productionD1(db, options), SANDBOX_DB: sandbox && productionSandboxD1(sandbox, options) };
      const response = await app.request(path, init, bindings, ctx);
      options.responded?.();
      await waitOnExecutionContext(ctx);
      await assertContract(await loadDoc(), init.method ?? 'GET', new URL(path, 'http://localhost').href, response);
      return response;
    },
  };
}
