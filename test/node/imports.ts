// A small reader of the imports of src/: every relative specifier of `import … from`, `export … from`, a bare
// `import '…'` and `import('…')`, resolved to the file it names (as the bundler resolves it: the exact path, then
// .ts/.tsx/.mts/.mjs, then an index file). Package imports are not followed.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const EXTENSIONS = ['', '.ts', '.tsx', '.mts', '.mjs', '.d.mts', '/index.ts', '/index.tsx'];
// Comments are removed first (a commented-out import is no import), then every specifier form is matched.
const COMMENTS = /\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/[^\n]*/g;
const SPECIFIERS = [/\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g];

/** Every source file under `dir` (relative to the repository, with forward slashes). */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      const path = join(abs, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (SOURCE.test(name)) out.push(relative(ROOT, path).split(sep).join('/'));
    }
  };
  walk(join(ROOT, dir));
  return out.sort();
}

/** The relative specifiers a source text imports. */
export function specifiers(text: string): string[] {
  const code = text.replace(COMMENTS, '$1');
  const found = new Set<string>();
  for (const pattern of SPECIFIERS) for (const m of code.matchAll(pattern)) if (m[1].startsWith('.')) found.add(m[1]);
  return [...found];
}

/** The file a relative specifier of `from` names (repository-relative), or null when none exists. */
export function resolveSpecifier(from: string, specifier: string): string | null {
  const base = resolve(ROOT, dirname(from), specifier.replace(/\?.*$/, ''));
  for (const ext of EXTENSIONS) {
    const candidate = base + ext;
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(ROOT, candidate).split(sep).join('/');
  }
  return null;
}

/** Each source file under `dir` with the repository files it imports (unresolved specifiers listed apart). */
export function importGraph(dir: string): { edges: Map<string, string[]>; unresolved: string[] } {
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of sourceFiles(dir)) {
    const targets: string[] = [];
    for (const spec of specifiers(readFileSync(join(ROOT, file), 'utf8'))) {
      const target = resolveSpecifier(file, spec);
      if (target) targets.push(target);
      else unresolved.push(`${file} → ${spec}`);
    }
    edges.set(file, targets);
  }
  return { edges, unresolved };
}

/** The group of a file of src/services/: its domain folder, or the file itself at the top level. */
export function serviceGroup(file: string): string {
  const rest = file.slice('src/services/'.length);
  const slash = rest.indexOf('/');
  return slash === -1 ? rest : `${rest.slice(0, slash)}/`;
}

/** Cycles between groups (each once, as a path a → b → … → a), from edges between files. */
export function groupCycles(edges: Map<string, string[]>, groupOf: (file: string) => string | null): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const [from, targets] of edges) {
    const a = groupOf(from);
    if (a === null) continue;
    for (const to of targets) {
      const b = groupOf(to);
      if (b === null || b === a) continue;
      if (!graph.has(a)) graph.set(a, new Set());
      graph.get(a)!.add(b);
    }
  }
  // Tarjan's strongly connected components: a component of more than one group is a cycle between them.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) visit(v);
  return cycles;
}
