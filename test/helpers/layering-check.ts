// The layering rules of the workspace, checked over source text (no compiler): which package may import
// which, what each package must declare, no value-import cycle between the files of one package, and the
// ports rule inside packages/jetstream. `checkLayering` takes an in-memory file set so the test can plant
// violations; `readWorkspace` reads the real one.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';

/** Which packages each package may import (the layers, bottom first). Nothing imports server. */
export const ALLOWED_PACKAGE_EDGES: Readonly<Record<string, readonly string[]>> = {
  raft: [],
  protocol: [],
  store: ['raft'],
  cluster: ['raft', 'protocol'],
  jetstream: ['protocol', 'store', 'raft'],
  server: ['protocol', 'raft', 'store', 'cluster', 'jetstream'],
};

/** Inside packages/jetstream: logic folders that depend on ports, and the implementations they must not import. */
export const PORT_USERS = ['src/stream/', 'src/consumer/', 'src/api/'] as const;
export const PORT_IMPLEMENTATIONS = ['src/cluster/', 'src/local/'] as const;

/** Packages that may read process.env: the top, which turns it into options for the libraries. */
export const ENV_READERS: readonly string[] = ['server'];

export interface ImportRef {
  readonly specifier: string;
  /** `import type …`, `export type …`, or braces whose every name is `type X`: erased at compile time. */
  readonly typeOnly: boolean;
  /** `import('…')`: loaded when called, so it takes no part in a load-time cycle. */
  readonly dynamic: boolean;
}

export interface Workspace {
  /** Path relative to the workspace root (`packages/<pkg>/src/…ts`) → source text. */
  readonly files: ReadonlyMap<string, string>;
  /** Package folder name → the names its package.json declares (dependencies, peer, optional). */
  readonly declared: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface LayeringReport {
  /** (a) an import of a package that the importer's package.json does not declare. */
  readonly undeclared: string[];
  /** (b) an import of a package that is not below the importer in the layers, or a relative one out of src/. */
  readonly backImports: string[];
  /** (c) value-import cycles between files of one package, each as `a → b → a`. */
  readonly cycles: string[];
  /** (d) files under stream/, consumer/, api/ of jetstream importing cluster/ or local/: importer → imported. */
  readonly portViolations: ReadonlyMap<string, string[]>;
  /** (e) library files reading the process environment (only server, the top, may: it passes options down). */
  readonly envReads: string[];
}

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

const STATIC_IMPORT = /^[ \t]*(import|export)\s+([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function isTypeOnlyClause(clause: string): boolean {
  if (/^type\s/.test(clause)) return true;
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (braces === null) return false;
  const names = braces[1]!.split(',').map((n) => n.trim()).filter((n) => n !== '');
  return names.length > 0 && names.every((n) => /^type\s/.test(n));
}

/** Every import and re-export of one file's source. */
export function parseImports(source: string): ImportRef[] {
  const text = stripComments(source);
  const refs: ImportRef[] = [];
  for (const m of text.matchAll(STATIC_IMPORT)) {
    refs.push({ specifier: m[3]!, typeOnly: isTypeOnlyClause(m[2]!), dynamic: false });
  }
  for (const m of text.matchAll(SIDE_EFFECT_IMPORT)) refs.push({ specifier: m[1]!, typeOnly: false, dynamic: false });
  for (const m of text.matchAll(DYNAMIC_IMPORT)) refs.push({ specifier: m[1]!, typeOnly: false, dynamic: true });
  return refs;
}

const NODE_BUILTINS = new Set(builtinModules);

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** `./x.js` seen from `packages/p/src/a/b.ts` → `packages/p/src/a/x.ts` (or `…/x/index.ts`). */
function resolveRelative(files: ReadonlyMap<string, string>, importer: string, specifier: string): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(importer), specifier));
  const stem = base.replace(/\.(js|ts|mjs)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}/index.ts`, base]) if (files.has(candidate)) return candidate;
  return undefined;
}

function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components; a component of two or more files (or a file importing itself) is a cycle.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(component.reverse());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) visit(v);
  return cycles;
}

/** One path round a strongly connected component, for a readable message. */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, component: readonly string[]): string {
  const inside = new Set(component);
  const start = component[0]!;
  const path = [start];
  const seen = new Set([start]);
  let at = start;
  for (;;) {
    const next = (graph.get(at) ?? []).filter((w) => inside.has(w));
    const back = next.find((w) => w === start);
    if (back !== undefined && path.length > 1) break;
    const fresh = next.find((w) => !seen.has(w));
    if (fresh === undefined) break;
    path.push(fresh);
    seen.add(fresh);
    at = fresh;
  }
  return [...path, start].join(' → ');
}

export function checkLayering(ws: Workspace): LayeringReport {
  const undeclared: string[] = [];
  const backImports: string[] = [];
  const portViolations = new Map<string, string[]>();
  const valueGraph = new Map<string, string[]>();
  const envReads: string[] = [];

  for (const [file, source] of [...ws.files].sort(([a], [b]) => a.localeCompare(b))) {
    const m = /^packages\/([^/]+)\/(.*)$/.exec(file);
    if (m === null) continue;
    const [, pkg, inPackage] = m as unknown as [string, string, string];
    const edges: string[] = [];
    valueGraph.set(file, edges);
    if (!ENV_READERS.includes(pkg) && /\bprocess\.env\b/.test(stripComments(source))) {
      envReads.push(`${file} reads process.env: take the value as an option from the server instead`);
    }
    for (const ref of parseImports(source)) {
      const where = `${file} imports '${ref.specifier}'`;
      if (ref.specifier.startsWith('.')) {
        const path = posix.normalize(posix.join(posix.dirname(file), ref.specifier));
        if (!path.startsWith(`packages/${pkg}/src/`)) {
          backImports.push(`${where}: a relative import out of packages/${pkg}/src (test fixtures live in test/)`);
          continue;
        }
        const target = resolveRelative(ws.files, file, ref.specifier);
        if (target === undefined) continue; // tsc reports a missing file; this checks shape only
        if (!ref.typeOnly && !ref.dynamic) edges.push(target);
        const targetInPackage = target.slice(`packages/${pkg}/`.length);
        if (
          pkg === 'jetstream' &&
          PORT_USERS.some((d) => inPackage.startsWith(d)) &&
          PORT_IMPLEMENTATIONS.some((d) => targetInPackage.startsWith(d))
        ) {
          const list = portViolations.get(file) ?? [];
          list.push(target);
          portViolations.set(file, list);
        }
        continue;
      }
      if (ref.specifier.startsWith('node:') || NODE_BUILTINS.has(packageOf(ref.specifier))) continue;
      const dependency = packageOf(ref.specifier);
      if (!(ws.declared.get(pkg)?.has(dependency) ?? false)) {
        undeclared.push(`${where}: ${dependency} is not in packages/${pkg}/package.json dependencies`);
      }
      if (dependency.startsWith('@flotilla/')) {
        const target = dependency.slice('@flotilla/'.length);
        const allowed = ALLOWED_PACKAGE_EDGES[pkg] ?? [];
        if (!allowed.includes(target)) {
          backImports.push(`${where}: ${pkg} may import only [${allowed.join(', ')}]`);
        }
      }
    }
  }
  const cycles = findCycles(valueGraph).map((c) => cyclePath(valueGraph, c));
  return { undeclared, backImports, cycles, portViolations, envReads };
}

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listTs(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Every .ts file under packages/<pkg>/src and every package's declared dependencies. */
export function readWorkspace(root: string): Workspace {
  const files = new Map<string, string>();
  const declared = new Map<string, Set<string>>();
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    declared.set(
      pkg,
      new Set([
        ...Object.keys(manifest['dependencies'] ?? {}),
        ...Object.keys(manifest['peerDependencies'] ?? {}),
        ...Object.keys(manifest['optionalDependencies'] ?? {}),
      ]),
    );
    const src = join(root, 'packages', pkg, 'src');
    for (const path of listTs(src)) {
      files.set(posix.join('packages', pkg, 'src', path.slice(src.length + 1).split('\\').join('/')), readFileSync(path, 'utf8'));
    }
  }
  return { files, declared };
}
