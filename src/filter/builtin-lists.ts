/**
 * Built-in filter lists (issue 37 point 3; docs/filters.md#built-in-lists): the offensive words of
 * every language the `naughty-words` package ships (the List-of-Dirty-Naughty-Obscene-and-
 * Otherwise-Bad-Words, CC BY 4.0), read-only, beside every contract's own lists.
 *
 * - One `patterns` list per language code of the package (27 in 1.2.0: `en`, `de`, `ja`, …), so a
 *   rule `patternin` with its `listId` finds a word anywhere in a text field. Each entry is the
 *   word or phrase as a literal (RE2 `\Q…\E`), case-insensitive; in languages written with spaces
 *   it must stand between non-letters (`\PL`) or at an end of the text, so `ass` does not match
 *   `class`; in those written without (ja, zh, th) it matches anywhere.
 * - Ids are stable and fit the API's ids (24 lower-case hex): the first 24 hex digits of
 *   SHA-256 of `naughty-words:<language>`.
 * - `version` is `naughty-words@<package version>`: the entries change only with the package.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { FilterList } from './rules.ts';

const require = createRequire(import.meta.url);
const WORDS = require('naughty-words') as Record<string, string[]>;
const PACKAGE_VERSION = (require('naughty-words/package.json') as { version: string }).version;

/** Languages written without spaces between words: their entries match anywhere. */
const UNSPACED = new Set(['ja', 'zh', 'th']);

/** A built-in list: a filter list with its language, name and the package version. */
export interface BuiltInList extends FilterList {
  name: string;
  language: string;
  version: string;
}

/** The id of the built-in list of `language` (see the module). */
export function builtInListId(language: string): string {
  return createHash('sha256').update(`naughty-words:${language}`).digest('hex').slice(0, 24);
}

/** A word or phrase as an RE2 pattern (see the module). */
function entryPattern(word: string, language: string): string {
  const literal = `\\Q${word.replaceAll('\\E', '\\E\\\\E\\Q')}\\E`;
  return UNSPACED.has(language) ? `/${literal}/i` : `/(?:^|\\PL)${literal}(?:\\PL|$)/i`;
}

/** Every built-in list, in language order. */
export const BUILT_IN_LISTS: readonly BuiltInList[] = Object.keys(WORDS)
  .sort()
  .map((language) => ({
    id: builtInListId(language),
    name: `Offensive words (${language})`,
    language,
    type: 'patterns' as const,
    entries: [...new Set(WORDS[language]!.map((word) => word.trim()).filter((word) => word.length > 0))].map((word) => entryPattern(word, language)),
    active: true,
    version: `naughty-words@${PACKAGE_VERSION}`,
  }));

const BY_ID = new Map(BUILT_IN_LISTS.map((list) => [list.id, list]));

/** The built-in list `id`, or undefined. */
export function builtInList(id: string): BuiltInList | undefined {
  return BY_ID.get(id);
}
