// Layers import only downward, read from the source itself (this suite runs in Node, where the repository is):
// routes, dashboard and middleware above services, services above db, lib at the bottom; and the domain folders of
// src/services/ never import each other in a circle (a file at the top level of src/services/ is a group of its own).
import { describe, expect, it } from 'vitest';
import { groupCycles, importGraph, resolveSpecifier, serviceGroup, specifiers } from './imports';

const { edges, unresolved } = importGraph('src');
const layer = (file: string) => /^src\/([^/]+)\//.exec(file)?.[1] ?? null;

/** `from → to` for every import of a file in layer `from` that names a file of one of the layers `forbidden`. */
function importsOf(from: string, allowed: (target: string) => boolean): string[] {
  const found: string[] = [];
  for (const [file, targets] of edges) {
    if (layer(file) !== from) continue;
    for (const target of targets) if (!allowed(target)) found.push(`${file} → ${target}`);
  }
  return found;
}

describe('the import reader', () => {
  it('finds every form of relative import and nothing in comments', () => {
    const text = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      "export { c } from './c';",
      "export * from './d';",
      "import './e';",
      "const f = await import('./f');",
      "import css from '../g.css?raw';",
      "import {\n  h,\n  i,\n} from './hi';",
      "// import { x } from './commented';",
      "/* import { y } from './block'; */",
      "import { z } from 'zod';",
    ].join('\n');
    expect(specifiers(text).sort()).toEqual(['../b', '../g.css?raw', './a', './c', './d', './e', './f', './hi']);
  });

  it('resolves specifiers as the bundler does and reads the whole of src/', () => {
    expect(resolveSpecifier('src/app.ts', './lib/errors')).toBe('src/lib/errors.ts');
    expect(resolveSpecifier('src/app.ts', './lib/nothing-here')).toBeNull();
    expect(unresolved).toEqual([]);
    // Not vacuous: the services import each other and the database layer.
    const fromServices = [...edges].filter(([file]) => layer(file) === 'services').flatMap(([, targets]) => targets);
    expect(fromServices.some((t) => layer(t) === 'db')).toBe(true);
    expect(fromServices.some((t) => layer(t) === 'services')).toBe(true);
  });

  it('groups services by domain folder, a top-level file by itself', () => {
    expect(serviceGroup('src/services/orders/purchase.ts')).toBe('orders/');
    expect(serviceGroup('src/services/payments/gateways/stripe.ts')).toBe('payments/');
    expect(serviceGroup('src/services/ledger.ts')).toBe('ledger.ts');
    const cyclic = new Map([
      ['src/services/a/x.ts', ['src/services/b/y.ts']],
      ['src/services/b/y.ts', ['src/services/c.ts']],
      ['src/services/c.ts', ['src/services/a/z.ts']],
      ['src/services/a/z.ts', []],
    ]);
    expect(groupCycles(cyclic, serviceGroup)).toEqual([['a/', 'b/', 'c.ts']]);
    cyclic.set('src/services/c.ts', []);
    expect(groupCycles(cyclic, serviceGroup)).toEqual([]);
  });
});

describe('layers', () => {
  it('services import no routes, dashboard or middleware', () => {
    expect(importsOf('services', (t) => !['routes', 'dashboard', 'middleware'].includes(layer(t) ?? ''))).toEqual([]);
  });

  it('lib imports nothing but lib', () => {
    expect(importsOf('lib', (t) => layer(t) === 'lib')).toEqual([]);
  });

  it('db imports no services, routes, dashboard or middleware', () => {
    expect(importsOf('db', (t) => !['services', 'routes', 'dashboard', 'middleware'].includes(layer(t) ?? ''))).toEqual([]);
  });

  it('no two groups of src/services/ import each other in a circle', () => {
    const services = new Map([...edges].filter(([file]) => layer(file) === 'services'));
    expect(groupCycles(services, (f) => (layer(f) === 'services' ? serviceGroup(f) : null))).toEqual([]);
  });
});
