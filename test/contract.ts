import { createExecutionContext, SELF as WORKER, waitOnExecutionContext } from 'cloudflare:test';
import { createApp } from '../src/app';
import type { Bindings } from '../src/env';
import { assertContract, checkedFetch, type Doc } from './contract-check';

// The worker tests' entry points, every response checked against the published contract (test/contract-check.ts).
// Tests import `SELF` and `createCheckedApp` from here instead of the raw ones.

let docPromise: Promise<Doc> | undefined;
const loadDoc = () => (docPromise ??= WORKER.fetch('http://localhost/api/v2/openapi.json').then((r) => r.json() as Promise<Doc>));

/** The worker under test, every response checked against the published contract. */
export const SELF = { fetch: checkedFetch((request) => WORKER.fetch(request), loadDoc) };

/** An in-test app (for env overrides), every response checked against the published contract. */
export function createCheckedApp() {
  const app = createApp();
  return {
    async request(path: string, init: RequestInit = {}, env: Partial<Bindings> | Record<string, unknown> = {}): Promise<Response> {
      const ctx = createExecutionContext();
      const response = await app.request(path, init, env, ctx);
      await waitOnExecutionContext(ctx);
      await assertContract(await loadDoc(), init.method ?? 'GET', new URL(path, 'http://localhost').href, response);
      return response;
    },
  };
}
