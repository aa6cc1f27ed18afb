import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import devVarsExample from '../.dev.vars.example?raw';
import envSource from '../src/env.ts?raw';
import vitestConfig from '../vitest.config.ts?raw';
import wranglerToml from '../wrangler.toml?raw';

// The vitest integration reads the developer's .dev.vars (it prints "Using secrets defined in .dev.vars"), so a var
// the worker reads that vitest.config.ts does not pin takes whatever that file says: uncommenting the Stripe block of
// .dev.vars.example, as it invites, used to put Stripe on gateway_three for the whole suite. Every var must be pinned.

/** Keys of the bindings object in vitest.config.ts (`NAME: value`, one per line). */
const pinned = new Set([...vitestConfig.matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]));

/** The string vars of `Bindings` in src/env.ts (`NAME?: string;`). */
const envVars = () => [...envSource.matchAll(/^\s+([A-Z][A-Z0-9_]*)\??: string;/gm)].map((m) => m[1]);

/** The names of wrangler.toml's [vars] table. */
function wranglerVars(): string[] {
  const section = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(wranglerToml)?.[1] ?? '';
  return [...section.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)].map((m) => m[1]);
}

/** Every name .dev.vars.example sets or shows commented out (`NAME=...`, `# NAME=...`). */
const exampleVars = () => [...devVarsExample.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);

describe('vitest.config.ts pins every var the worker reads', () => {
  it('finds the vars it checks (the parsing itself works)', () => {
    expect(envVars()).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'GATEWAY_THREE_PROVIDER', 'LOW_STOCK_THRESHOLD']));
    expect(wranglerVars()).toEqual(expect.arrayContaining(['PAYMENT_BASE_URL', 'GATEWAY_ONE_PROVIDER']));
    expect(exampleVars()).toEqual(expect.arrayContaining(['ADMIN_TOKEN', 'GATEWAY_THREE_API_KEY', 'GATEWAY_TWO_ACCOUNT', 'GATEWAY_POLL_LIMIT']));
  });

  for (const [where, names] of [
    ['src/env.ts', envVars],
    ['wrangler.toml [vars]', wranglerVars],
    ['.dev.vars.example (commented or not)', exampleVars],
  ] as const) {
    it(`each var of ${where}`, () => {
      expect(names().filter((name) => !pinned.has(name))).toEqual([]);
    });
  }

  it('the pinned values are what the worker gets (the generic adapter on every slot, none of a vendor\'s settings)', () => {
    const vars = env as unknown as Record<string, string>;
    for (const slot of ['ONE', 'TWO', 'THREE']) {
      expect(vars[`GATEWAY_${slot}_PROVIDER`]).toBe('generic');
      for (const setting of ['API_KEY', 'ACCOUNT', 'API_URL']) expect(vars[`GATEWAY_${slot}_${setting}`]).toBe('');
    }
    expect(vars.GATEWAY_THREE_WEBHOOK_SECRET).toBe('test-secret-three');
  });
});
