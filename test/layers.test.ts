/**
 * The layer order of docs/architecture.md, checked over every module in src/: an import points to
 * the module's own folder or down the layers, never up, and no area imports another area. A
 * service's folder (services/<name>/) is imported only by itself and the lists of services
 * (services/index.ts, services/table.ts): everything else dispatches through them. No chain of imports leads from a module back to
 * itself. Migrations import only their own folder, `kysely` and Node's built-ins (they are frozen
 * history). Imports are read from the source text: static `import`/`export … from` (type-only ones
 * too, since they couple the modules as much) and dynamic `import('…')`. Imports of packages and
 * of files outside src/ are not layered.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/** Top-level modules that put the process together: they may import any layer. */
const COMPOSITION = new Set(['app.ts', 'server.ts', 'bootstrap.ts', 'cli.ts', 'main.ts']);
/** The areas: each serves one job, and none imports another. */
const AREAS = new Set(['auth', 'management', 'queue', 'publication', 'collect', 'console']);
/** Lower folders, lowest first; top-level modules other than COMPOSITION rank with `lib`. */
const LOWER = ['lib', 'filter', 'store', 'http'];
const AREA_RANK = LOWER.length;
const COMPOSITION_RANK = AREA_RANK + 1;

interface Unit {
  name: string;
  rank: number;
}

/** The layer unit of a module path below src/ (`store/inputs.ts`), or undefined for an unplaced folder. */
function unitOf(path: string): Unit | undefined {
  const [top, ...rest] = path.split('/');
  if (!rest.length) return { name: top!, rank: COMPOSITION.has(top!) ? COMPOSITION_RANK : 0 };
  // The services (one folder each, docs/architecture.md#services) sit on the shared layer: pure
  // modules every layer may dispatch through, importing only `lib/` and the shared modules. A
  // service's stream listener (`services/<name>/stream/`) and their list (`services/streams.ts`)
  // are the collector's: they rank, and may import, as collect/ does.
  if (top === 'services') return isStreamListener(path) ? { name: 'collect', rank: AREA_RANK } : { name: top, rank: 0 };
  if (AREAS.has(top!)) return { name: top!, rank: AREA_RANK };
  const rank = LOWER.indexOf(top!);
  return rank < 0 ? undefined : { name: top!, rank };
}

/**
 * The service whose folder holds module `path` (`services/mastodon/connect.ts` → `mastodon`), or
 * undefined for a module outside the service folders (the registry, the table, `services/kit/`).
 */
function serviceFolderOf(path: string): string | undefined {
  const [top, folder, ...rest] = path.split('/');
  return top === 'services' && rest.length > 0 && folder !== 'kit' ? folder : undefined;
}

/** Modules of services/ that list every service (or every listener), so may import every service's folder. */
const SERVICE_LISTS = new Set(['services/index.ts', 'services/table.ts', 'services/streams.ts']);

/** Whether module `path` is a service's stream listener or their list (the collector's layer). */
function isStreamListener(path: string): boolean {
  const parts = path.split('/');
  return path === 'services/streams.ts' || (parts[0] === 'services' && parts[2] === 'stream' && parts.length > 3);
}

/** Why an import from module `from` to module `to` (paths below src/) breaks the layers, or undefined. */
function violation(from: string, to: string): string | undefined {
  const a = unitOf(from);
  const b = unitOf(to);
  if (!a) return `${from} is in a folder with no layer: add it to docs/architecture.md and this test`;
  if (!b) return `${to} is in a folder with no layer: add it to docs/architecture.md and this test`;
  if (b.rank > a.rank) return `${a.name} (a lower layer) imports ${b.name} (a higher one)`;
  if (a.rank === AREA_RANK && a.name !== b.name && b.rank === AREA_RANK) return `area ${a.name} imports area ${b.name}`;
  const target = serviceFolderOf(to);
  if (target !== undefined && !SERVICE_LISTS.has(from) && serviceFolderOf(from) !== target) {
    return from.startsWith('services/') && serviceFolderOf(from) === undefined
      ? `a shared module of services/ imports the folder of ${target}`
      : serviceFolderOf(from) === undefined
        ? `${from} imports the folder of ${target}: dispatch through services/index.ts`
        : `service ${serviceFolderOf(from)} imports the folder of ${target}`;
  }
  return undefined;
}

const STATIC = /^(?:import|export)\s+(?:type\s+)?[\w*{}\s,$]+?\s+from\s*['"]([^'"]+)['"]/gm;
const BARE = /^import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every module specifier `source` imports: packages, built-ins and relative paths. */
function specifiersOf(source: string): string[] {
  return [STATIC, BARE, DYNAMIC].flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]!));
}

/** The relative module specifiers `source` imports. */
function importsOf(source: string): string[] {
  return specifiersOf(source).filter((spec) => spec.startsWith('.'));
}

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

const files = modules(SRC);
const sources = new Map(files.map((file) => [file, readFileSync(join(SRC, file), 'utf8')]));

/** The imports of `file` inside src/, as paths below src/. */
function targets(file: string): string[] {
  return importsOf(sources.get(file)!)
    .map((spec) => posix.normalize(posix.join(posix.dirname(file), spec)))
    .filter((target) => !target.startsWith('../'));
}

describe('the layer rule', () => {
  it.each([
    ['store/items.ts', 'collect/item.ts', 'store (a lower layer) imports collect (a higher one)'],
    ['http/authenticate.ts', 'auth/tokens.ts', 'http (a lower layer) imports auth (a higher one)'],
    ['filter/rules.ts', 'store/db.ts', 'filter (a lower layer) imports store (a higher one)'],
    ['errors.ts', 'http/errors.ts', 'errors.ts (a lower layer) imports http (a higher one)'],
    ['lib/time.ts', 'app.ts', 'lib (a lower layer) imports app.ts (a higher one)'],
    ['publication/routes.ts', 'management/schemas.ts', 'area publication imports area management'],
    ['auth/schema.ts', 'queue/schema.ts', 'area auth imports area queue'],
    ['worker/x.ts', 'store/db.ts', 'worker/x.ts is in a folder with no layer: add it to docs/architecture.md and this test'],
    ['http/authenticate.ts', 'store/tokens.ts', undefined],
    ['store/filter-sources.ts', 'filter/engine.ts', undefined],
    ['filter/rules.ts', 'errors.ts', undefined],
    ['management/resource.ts', 'management/schemas.ts', undefined],
    ['collect/refresh.ts', 'lib/language.ts', undefined],
    ['app.ts', 'queue/routes.ts', undefined],
    ['cli.ts', 'server.ts', undefined],
  ])('%s -> %s: %s', (from, to, expected) => {
    expect(violation(from, to)).toBe(expected);
  });

  it.each([
    ['services/flickr/connector.ts', 'services/rss/connector.ts', 'service flickr imports the folder of rss'],
    ['services/kit/websub-hub.ts', 'services/youtube/connector.ts', 'a shared module of services/ imports the folder of youtube'],
    ['collect/websub/routes.ts', 'services/youtube/connector.ts', 'collect/websub/routes.ts imports the folder of youtube: dispatch through services/index.ts'],
    ['services/flickr/connector.ts', 'services/kit/http.ts', undefined],
    ['services/flickr/index.ts', 'services/flickr/connector.ts', undefined],
    ['services/index.ts', 'services/flickr/index.ts', undefined],
    ['collect/websub/routes.ts', 'services/index.ts', undefined],
    ['services/kit/feed.ts', 'collect/fetch.ts', 'services (a lower layer) imports collect (a higher one)'],
    ['services/mastodon/stream/streaming.ts', 'collect/ingest.ts', undefined],
    ['services/mastodon/stream/streaming.ts', 'services/mastodon/connector.ts', undefined],
    ['services/mastodon/stream/streaming.ts', 'services/bluesky/connector.ts', 'service mastodon imports the folder of bluesky'],
    ['services/mastodon/index.ts', 'services/mastodon/stream/streaming.ts', 'services (a lower layer) imports collect (a higher one)'],
    ['server.ts', 'services/streams.ts', undefined],
    ['collect/scheduler.ts', 'services/mastodon/stream/streaming.ts', 'collect/scheduler.ts imports the folder of mastodon: dispatch through services/index.ts'],
  ])('services: %s -> %s: %s', (from, to, expected) => {
    expect(violation(from, to)).toBe(expected);
  });

  it.each([
    ["import { a, type B } from '../store/db.ts';\n", ['../store/db.ts']],
    ["import type {\n  C,\n  D,\n} from './x.ts';\n", ['./x.ts']],
    ["export * from './y.ts';\nexport { z } from \"./z.ts\";\n", ['./y.ts', './z.ts']],
    ["import './side.ts';\nconst m = await import('./lazy.ts');\n", ['./side.ts', './lazy.ts']],
    ["import { Type } from 'typebox';\n * import x from './doc.ts'\nconst s = 'from \\'./no.ts\\'';\n", []],
  ])('reads the imports of %j', (source, expected) => {
    expect(importsOf(source).sort()).toEqual([...expected].sort());
  });
});

/**
 * Why migration `file` (a path below src/store/migrations/) may not import `spec`, or undefined: a
 * migration is history, so it imports only its own folder (frozen copies, `support.ts`), `kysely`
 * and Node's built-ins, never application code that may change (docs/operations.md#migrations).
 */
function migrationImportViolation(file: string, spec: string): string | undefined {
  if (spec === 'kysely' || spec.startsWith('node:')) return undefined;
  if (!spec.startsWith('.')) return `${file} imports the package ${spec}: only kysely and node: built-ins`;
  const target = posix.normalize(posix.join(posix.dirname(file), spec));
  return posix.dirname(target) === 'store/migrations' ? undefined : `${file} imports ${target}: copy what it needs into store/migrations/support.ts`;
}

describe('migrations are frozen', () => {
  it.each([
    ['store/migrations/2026-11-27-dedupe.ts', '../db.ts', 'store/migrations/2026-11-27-dedupe.ts imports store/db.ts: copy what it needs into store/migrations/support.ts'],
    ['store/migrations/2026-11-24-console-client.ts', '../../lib/ids.ts', 'store/migrations/2026-11-24-console-client.ts imports lib/ids.ts: copy what it needs into store/migrations/support.ts'],
    ['store/migrations/2026-11-27-dedupe.ts', 'pg', 'store/migrations/2026-11-27-dedupe.ts imports the package pg: only kysely and node: built-ins'],
    ['store/migrations/2026-11-27-dedupe.ts', './support.ts', undefined],
    ['store/migrations/2026-12-01-read-seq.ts', './2026-11-29-trending.ts', undefined],
    ['store/migrations/support.ts', 'node:crypto', undefined],
    ['store/migrations/support.ts', 'kysely', undefined],
  ])('%s -> %s: %s', (file, spec, expected) => {
    expect(migrationImportViolation(file, spec)).toBe(expected);
  });

  it('no migration imports anything outside store/migrations/ but kysely and node: built-ins', () => {
    const broken = files
      .filter((file) => file.startsWith('store/migrations/'))
      .flatMap((file) => specifiersOf(sources.get(file)!).map((spec) => migrationImportViolation(file, spec)))
      .filter((why) => why !== undefined);
    expect(broken).toEqual([]);
  });
});

describe.each(files)('%s', (file) => {
  it('imports only its own folder, lower layers or shared modules', () => {
    const broken = targets(file)
      .map((target) => ({ target, why: violation(file, target) }))
      .filter(({ why }) => why !== undefined)
      .map(({ target, why }) => `${file} -> ${target}: ${why}`);
    expect(broken).toEqual([]);
  });
});

/**
 * The import cycles of `graph` (module → the modules it imports), each as the list of its
 * modules: Tarjan's strongly connected components of more than one module, and a module that
 * imports itself. A cycle couples its modules into one, whatever their folders say, and leaves
 * which one evaluates first to chance.
 */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do component.push((member = stack.pop()!));
    while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('import cycles', () => {
  it.each([
    ['none', { a: ['b'], b: ['c'], c: [] }, []],
    ['two modules', { a: ['b'], b: ['a'] }, [['a', 'b']]],
    ['through a third', { a: ['b'], b: ['c'], c: ['a'], d: ['a'] }, [['a', 'b', 'c']]],
    ['two apart', { a: ['b'], b: ['a'], c: ['d'], d: ['c'] }, [['a', 'b'], ['c', 'd']]],
    ['a module importing itself', { a: ['a', 'b'], b: [] }, [['a']]],
  ])('finds %s', (_name, graph, expected) => {
    expect(cycles(new Map(Object.entries(graph))).sort()).toEqual(expected);
  });

  it('no module of src/ imports itself back, through any chain of imports', () => {
    expect(cycles(new Map(files.map((file) => [file, targets(file).filter((target) => sources.has(target))])))).toEqual([]);
  });

  it('no folder of src/ imports itself back, through any chain of its modules\' imports (no arrow of the import-structure picture runs back up)', () => {
    // Tests are no rooms of the picture: a connector's test may load the configuration.
    expect(folderCycles(files.filter((file) => !/\.test\.ts$/.test(file)), targets)).toEqual([]);
  });
});

/**
 * The loops among the folders of src/ (a top-level module counts as a folder of its own): folder
 * A imports B when one of its modules imports one of B's. Folders are the rooms of the picture
 * `farm-studio look` draws, so a loop there is an arrow that runs back up: a lower folder that
 * imports a higher one (the services' stream listeners importing collect/, the store importing
 * services/), whatever each module's own layer.
 */
function folderCycles(modules: readonly string[], importsOf: (file: string) => string[]): string[][] {
  const folderOf = (path: string) => path.split('/')[0]!;
  const graph = new Map<string, Set<string>>();
  for (const file of modules) {
    for (const target of importsOf(file)) {
      if (!modules.includes(target) || folderOf(file) === folderOf(target)) continue;
      graph.set(folderOf(file), (graph.get(folderOf(file)) ?? new Set()).add(folderOf(target)));
    }
  }
  return cycles(new Map([...graph].map(([folder, to]) => [folder, [...to]])));
}

describe('folder loops', () => {
  it.each([
    ['none', { 'collect/a.ts': ['services/b.ts'], 'services/b.ts': ['store/c.ts'], 'store/c.ts': [] }, []],
    ['a stream listener importing the collector', { 'collect/a.ts': ['services/x/stream/b.ts'], 'services/x/stream/b.ts': ['collect/c.ts'], 'collect/c.ts': [] }, [['collect', 'services']]],
    ['the store importing a service rule', { 'services/b.ts': ['store/c.ts'], 'store/c.ts': ['services/d.ts'], 'services/d.ts': [] }, [['services', 'store']]],
    // What lib/item-keys.ts did until the feeds' fact came from its callers (lib/item-keys.ts `OwnsEntries`).
    ['the lowest layer reading the service table', { 'lib/item-keys.ts': ['services/table.ts'], 'services/table.ts': ['lib/x.ts'], 'lib/x.ts': [] }, [['lib', 'services']]],
  ])('finds %s', (_name, graph, expected) => {
    const modules = Object.keys(graph);
    expect(folderCycles(modules, (file) => (graph as Record<string, string[]>)[file]!)).toEqual(expected);
  });
});
