/**
 * The project's reference stays followable from a clone (issue 13): no comment in src/, test/ or
 * bench/ cites the outside specification documents by section (they are not in the repository;
 * comments point at docs/ or at an RFC or vendor document instead), and every link to a section
 * of docs/ — `docs/<page>.md#<anchor>` in code, README.md and docs/, and the relative
 * `<page>.md#<anchor>` / `#<anchor>` links inside docs/ and README.md — names a page that exists
 * and a heading it has; so does a section named by its title, `README "CLI"` or
 * `docs/api.md "Item ids"`. Anchors are GitHub's: the heading's text, lower-cased, punctuation other
 * than `-` and `_` dropped, spaces turned into `-`, and `-1`, `-2`, … after repeated headings.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/**
 * A citation of the documents outside the repository (the specification and the research notes)
 * by section or by name; written with `\u00a7` and split names so this file does not match itself.
 */
const OUTSIDE_CITATION = new RegExp(`\\b(?:decisions|interface|connectors\\.md|stack\\.md)\\s+\u00a7|\\bresearch/(?:${['connectors', 'stack', 'peers', 'aesthetics'].join('|')})`, 'i');

/** The anchor GitHub gives a heading's text (github-slugger), before de-duplication. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Every anchor of a Markdown document: its headings outside fenced code, de-duplicated as GitHub
 * does, and the explicit `<a id="…">` (or `name`) anchors.
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      continue;
    }
    if (fence) continue;
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count ? `${base}-${count}` : base);
  }
  return anchors;
}

function filesUnder(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .filter((path) => !path.split('/').includes('node_modules') && keep(path))
    .sort();
}

const SOURCE = /\.(?:ts|js|mjs|css|html|eta|md|json)$/;
/** Code and its notes; recorded payloads (test/fixtures/) are data, not ours to edit. */
const code = ['src', 'test', 'bench'].flatMap((dir) => filesUnder(dir, (path) => SOURCE.test(path) && !path.startsWith('test/fixtures/')));
const pages = ['README.md', ...filesUnder('docs', (path) => path.endsWith('.md'))];
const text = new Map([...code, ...pages].map((path) => [path, readFileSync(join(ROOT, path), 'utf8')]));

interface Link {
  from: string;
  line: number;
  /** The page linked to, from the root (`docs/api.md`). */
  page: string;
  anchor: string;
}

/** The links to Markdown sections in `source` (a file at `from`, a path from the root). */
function linksIn(from: string, source: string): Link[] {
  const links: Link[] = [];
  const markdown = from.endsWith('.md');
  source.split('\n').forEach((content, index) => {
    const line = index + 1;
    for (const match of content.matchAll(/(?<![\w./-])(docs\/[\w.-]+\.md)#([\w-]+)/g)) {
      links.push({ from, line, page: match[1]!, anchor: match[2]! });
    }
    for (const match of content.matchAll(/(?<![\w./-])(docs\/[\w.-]+\.md|README\.md|README) "([^"]+)"/g)) {
      links.push({ from, line, page: match[1] === 'README' ? 'README.md' : match[1]!, anchor: slug(match[2]!) });
    }
    if (!markdown) return;
    for (const match of content.matchAll(/\]\(((?:[\w.-]+\/)*[\w.-]*\.md)?#([\w-]+)\)/g)) {
      const target = match[1] ?? posix.basename(from);
      const page = posix.normalize(posix.join(posix.dirname(from), target));
      if (target.startsWith('docs/') && from.startsWith('docs/')) continue;
      if (match[1]?.startsWith('docs/') && from === 'README.md') continue; // counted by the first pattern
      links.push({ from, line, page, anchor: match[2]! });
    }
  });
  return links;
}

const anchors = new Map<string, Set<string> | undefined>();
function anchorsOfPage(page: string): Set<string> | undefined {
  if (!anchors.has(page)) {
    const path = join(ROOT, page);
    anchors.set(page, existsSync(path) ? anchorsOf(readFileSync(path, 'utf8')) : undefined);
  }
  return anchors.get(page);
}

describe('slug', () => {
  it.each([
    ['Error codes', 'error-codes'],
    ['`sluice config`', 'sluice-config'],
    ['Queue and content API', 'queue-and-content-api'],
    ['GET /v1/oauth/token/info', 'get-v1oauthtokeninfo'],
    ['Tokens and caching', 'tokens-and-caching'],
    ['First start (demo, admin)', 'first-start-demo-admin'],
    ['rss', 'rss'],
    ['[Linked](x.md) heading', 'linked-heading'],
    ['PATCH /collection/contracts/{id}', 'patch-collectioncontractsid'],
  ])('%s → %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers repeated headings, skips fenced code, reads explicit anchors', () => {
    const markdown = ['# Top', '## Same', '```sh', '# not a heading', '```', '## Same', '### Same', '<a id="own"></a>**Own.** text'].join('\n');
    expect([...anchorsOf(markdown)]).toEqual(['top', 'same', 'same-1', 'same-2', 'own']);
  });

  it('finds links in code and in pages', () => {
    expect(linksIn('src/x.ts', ' * kudos (docs/api.md#kudos); not mydocs/a.md#b')).toEqual([{ from: 'src/x.ts', line: 1, page: 'docs/api.md', anchor: 'kudos' }]);
    expect(linksIn('src/x.ts', '// (README "Five minutes with Sluice", docs/api.md "Item ids")')).toEqual([
      { from: 'src/x.ts', line: 1, page: 'README.md', anchor: 'five-minutes-with-sluice' },
      { from: 'src/x.ts', line: 1, page: 'docs/api.md', anchor: 'item-ids' },
    ]);
    expect(linksIn('docs/services.md', 'see [kudos](api.md#kudos) and [here](#rss)\n[r](../README.md#layout)')).toEqual([
      { from: 'docs/services.md', line: 1, page: 'docs/api.md', anchor: 'kudos' },
      { from: 'docs/services.md', line: 1, page: 'docs/services.md', anchor: 'rss' },
      { from: 'docs/services.md', line: 2, page: 'README.md', anchor: 'layout' },
    ]);
  });
});

describe('citations', () => {
  it('no file in src/, test/ or bench/ cites the outside documents by section', () => {
    const citing = code.flatMap((path) =>
      text
        .get(path)!
        .split('\n')
        .flatMap((content, index) => (OUTSIDE_CITATION.test(content) ? [`${path}:${index + 1}: ${content.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it('every link to a section of docs/ or README.md names a heading that exists', () => {
    const links = [...code, ...pages].flatMap((path) => linksIn(path, text.get(path)!));
    expect(links.length).toBeGreaterThan(100);
    const broken = links
      .filter((link) => !anchorsOfPage(link.page)?.has(link.anchor))
      .map((link) => `${link.from}:${link.line}: ${link.page}#${link.anchor}${anchorsOfPage(link.page) ? '' : ' (no such page)'}`);
    expect(broken).toEqual([]);
  });
});
