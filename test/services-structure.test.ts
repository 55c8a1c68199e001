/**
 * One folder per service (docs/architecture.md#services): outside `src/services/`, no module names
 * a service (no `=== 'mastodon'`, `case 'rss':`, `['facebook', 'instagram']`, `'=', 'youtube'`):
 * everything dispatches through the registry (`src/services/index.ts`). And the registry is
 * complete: every service of the table has a module with the parts the rest of Sluice calls, and
 * every folder of `src/services/` (but `kit/`) is a service of the registry.
 *
 * Names are found as string literals in the source text with its comments left out; test files
 * are not read (tests name services on purpose). The console's browser code is a client of the
 * public API and cannot import the registry: what it still names is the allowance below, which
 * may only shrink.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OAUTH, SERVICE_NAMES, SERVICES } from '../src/services/table.ts';
import { SERVICE_MODULES, serviceModule } from '../src/services/index.ts';

const SRC = join(import.meta.dirname, '..', 'src');

/** Files outside src/services/ allowed to name services, with how many names each may hold: only ever lower these. */
const ALLOWANCE: Record<string, number> = {
  // The console (a client of the API, src/console/app/): the connect form's instance field, the feed hint, OPML import.
  'console/app/screens/connections-model.ts': 7,
  'console/app/screens/connections.ts': 2,
  'console/app/screens/sources.ts': 2,
};
/** Generated from the OpenAPI document (the enum of services), not written by hand. */
const GENERATED = new Set(['console/app/api.gen.ts']);

/** `source` without its comments (block comments, and line comments that follow nothing or a blank: `https://` in a string stays). */
export function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}

/** The service names `source` holds as string literals, each with its line. */
export function namedServices(source: string, names: readonly string[]): { name: string; line: string }[] {
  const pattern = new RegExp(`(['"\`])(${names.join('|')})\\1`, 'g');
  return withoutComments(source)
    .split('\n')
    .flatMap((line) => [...line.matchAll(pattern)].map((match) => ({ name: match[2]!, line: line.trim() })));
}

describe('finding service names', () => {
  it.each([
    ["if (input.service === 'instagram') {", ['instagram']],
    ["    case 'rss':", ['rss']],
    ["const EXPIRING = new Set(['facebook', 'instagram']);", ['facebook', 'instagram']],
    ["eb('inputs.service', '=', \"youtube\")", ['youtube']],
    ['activeInputsOf(db, `bluesky`)', ['bluesky']],
    ["// the 'mastodon' streams\n/* 'vk' */ const a = 1; // not 'twitter'", []],
    ["const url = 'https://x.com/twitter'; const b = 'rssfeed';", []],
  ])('%j', (source, expected) => {
    expect(namedServices(source, SERVICE_NAMES).map(({ name }) => name)).toEqual(expected);
  });
});

describe('no per-service checks outside src/services/', () => {
  const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((file) => !file.startsWith('services/') && !GENERATED.has(file))
    .sort();

  it('reads the modules of src/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('collect/websub/routes.ts');
  });

  it.each(files)('%s names no service beyond its allowance', (file) => {
    const found = namedServices(readFileSync(join(SRC, file), 'utf8'), SERVICE_NAMES);
    expect(found.length <= (ALLOWANCE[file] ?? 0) ? [] : found.map(({ line }) => line)).toEqual([]);
  });

  it('keeps no allowance for a file that no longer needs it', () => {
    for (const [file, allowed] of Object.entries(ALLOWANCE)) {
      expect({ file, found: namedServices(readFileSync(join(SRC, file), 'utf8'), SERVICE_NAMES).length }).toEqual({ file, found: allowed });
    }
  });
});

describe('the registry of services', () => {
  it('has one module per service of the table, in its order, and one folder per module', () => {
    expect(SERVICE_MODULES.map((module) => module.name)).toEqual(SERVICE_NAMES);
    const folders = readdirSync(join(SRC, 'services'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'kit')
      .map((entry) => entry.name)
      .sort();
    expect(folders).toEqual([...SERVICE_NAMES].sort());
    for (const name of ['', 'myspace', 'constructor', '__proto__', 'toString']) expect(serviceModule(name)).toBeUndefined();
  });

  it.each(SERVICE_NAMES)('%s: its module has its row, its connector and whole optional parts', (name) => {
    const module = serviceModule(name)!;
    expect(module.name).toBe(name);
    expect(module.row).toBe(SERVICES[name]);
    expect(module.row.types.length).toBeGreaterThan(0);
    expect(module.connector.service).toBe(name);
    expect(typeof module.connector.collect).toBe('function');
    const { quota, push, connect } = module;
    if (quota?.kind === 'units') {
      for (const part of ['limit', 'period', 'take', 'cost', 'needs'] as const) expect(typeof quota[part]).toBe('function');
      expect(quota.name).toMatch(/^[a-z]+-[a-z]+$/);
    }
    if (quota?.kind === 'hashtags') {
      for (const part of ['hasInstallationCredential', 'hashtagOf', 'pollHashtag'] as const) expect(typeof quota[part]).toBe('function');
      expect(quota.name).toMatch(/^[a-z]+-[a-z]+$/);
    }
    if (push) for (const part of ['enabled', 'targetOf', 'itemsOf'] as const) expect(typeof push[part]).toBe('function');
    if (connect?.server === 'instance') {
      expect(typeof connect.register).toBe('function');
      expect(connect.scopes?.length).toBeGreaterThan(0);
    }
    // A connect flow through an operator's app needs the app's row in OAUTH.
    if (connect?.server === 'app') expect(Object.keys(OAUTH)).toContain(name);
  });

  it('gives the parts the services have today', () => {
    const having = (part: 'quota' | 'push' | 'connect') => SERVICE_MODULES.filter((module) => module[part]).map((module) => module.name);
    expect(having('quota')).toEqual(['twitter', 'instagram', 'youtube', 'threads']);
    expect(having('push')).toEqual(['youtube', 'rss']);
    expect(having('connect')).toEqual(['facebook', 'instagram', 'mastodon', 'threads']);
  });
});
