/**
 * The labelled safe image set (test/fixtures/images/labelled/, issue 37 point 5) stays as its
 * README describes it: every file listed there and every listed file present, each under
 * `MAX_BYTES` (60 KB), and only the expected classes `drawing` and `neutral` as folders.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_BYTES } from './fixtures/images/labelled/make.ts';

const ROOT = join(import.meta.dirname, 'fixtures', 'images', 'labelled');
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const folders = readdirSync(ROOT, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
const files = folders.flatMap((folder) => readdirSync(join(ROOT, folder)).map((name) => `${folder}/${name}`));

/** The files the README's tables list: the first cell of each row, under its `## <folder>/` heading. */
function listed(): string[] {
  let folder = '';
  return readme.split('\n').flatMap((line) => {
    const heading = /^## (\w+)\/$/.exec(line);
    if (heading) folder = heading[1]!;
    const row = /^\| `([^`]+)` \|/.exec(line);
    return row && folder ? [`${folder}/${row[1]}`] : [];
  });
}

describe('the labelled image set', () => {
  it('has only the expected classes as folders', () => expect(folders.sort()).toEqual(['drawing', 'neutral']));

  it('README lists exactly the files there are', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(listed().sort()).toEqual(files.sort());
  });

  it.each(files)('%s is an image under 60 KB', (file) => {
    expect(statSync(join(ROOT, file)).size).toBeLessThanOrEqual(MAX_BYTES);
    expect(file).toMatch(/\.(png|jpg)$/);
  });
});
