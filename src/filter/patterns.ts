/**
 * Patterns of filter rules and `patterns` lists (docs/filters.md): written `/body/flags`, flags from
 * `i` (case-insensitive), `m` (`^`/`$` at line ends), `s` (`.` matches newline) and `u` (accepted
 * for familiarity; matching is always by Unicode code point). The body is RE2 syntax
 * (https://github.com/google/re2/wiki/Syntax): no backreferences, no lookaround, `\x{00e9}`
 * instead of `\u00e9`. Patterns run on re2js, a linear-time engine, so no pattern can hang the
 * service however it is written or whatever text it meets.
 */
import { RE2JS, RE2JSSyntaxException } from 're2js';

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** A pattern that cannot be used; `position` is the 0-based offset into the written `/body/flags` text. */
export class PatternError extends Error {
  readonly position: number;
  readonly reason: string;
  /** For an entry of a list: its index in the list's `entries`. */
  index: number | undefined;

  constructor(pattern: string, position: number, reason: string) {
    super(`invalid pattern ${pattern} at position ${position}: ${reason}`);
    this.name = 'PatternError';
    this.position = position;
    this.reason = reason;
    this.index = undefined;
  }
}

/** A checked pattern: its RE2 body, its flags (a subset of `imsu`), the compiled form and its size. */
export interface ParsedPattern {
  source: string;
  flags: string;
  regex: RE2JS;
  /** re2js `programSize()`: instructions of the compiled program, the measure of its cost per character scanned. */
  size: number;
}

/** Longest pattern accepted, slashes and flags included (docs/filters.md). */
export const MAX_PATTERN_LENGTH = 1000;

/**
 * Parses and compiles one `/body/flags` pattern. The last `/` ends the body, so a `/` inside it
 * needs no escape. Throws PatternError with the position of the fault (longer than
 * MAX_PATTERN_LENGTH, missing slashes, an empty body, an unknown or repeated flag, or whatever
 * RE2 cannot compile: for RE2 errors the position is where the offending fragment starts).
 */
export function parsePattern(text: string): ParsedPattern {
  if (text.length > MAX_PATTERN_LENGTH) throw new PatternError(text.slice(0, 20) + '...', MAX_PATTERN_LENGTH, `a pattern has at most ${MAX_PATTERN_LENGTH} characters`);
  if (!text.startsWith('/')) throw new PatternError(text, 0, 'a pattern is written /body/flags and must start with /');
  const end = text.lastIndexOf('/');
  if (end === 0) throw new PatternError(text, text.length, 'missing the closing / of /body/flags');
  if (end === 1) throw new PatternError(text, 1, 'empty pattern');
  const source = text.slice(1, end);
  const flags = text.slice(end + 1);
  let bits = 0;
  for (let at = 0; at < flags.length; at++) {
    const flag = flags[at]!;
    const position = end + 1 + at;
    if (!(flag in FLAG_BITS)) throw new PatternError(text, position, `unknown flag "${flag}" (use i, m, s or u)`);
    if (flags.indexOf(flag) !== at) throw new PatternError(text, position, `flag "${flag}" given twice`);
    bits |= FLAG_BITS[flag]!;
  }
  try {
    const regex = RE2JS.compile(source, bits);
    return { source, flags, regex, size: regex.programSize() };
  } catch (error) {
    if (!(error instanceof RE2JSSyntaxException)) throw error;
    const fragment = error.getPattern();
    const at = fragment ? source.indexOf(fragment) : -1;
    const where = fragment ? `${error.getDescription()}: ${fragment}` : error.getDescription();
    throw new PatternError(text, 1 + Math.max(at, 0), where);
  }
}

/** Any of several patterns, tested in one scan; `first` names the entry that matched. */
export interface PatternSet {
  /** The sum of the entries' compiled sizes (ParsedPattern.size). */
  size: number;
  /** True when any pattern matches somewhere in `text`. */
  test(text: string): boolean;
  /** The first entry (as written) that matches `text`, or undefined. */
  first(text: string): string | undefined;
}

/**
 * Combines patterns into one alternation `(?i:a)|(?s:b)|…` (RE2 scopes inline flags to the
 * group), so testing a text against thousands of patterns costs about one scan of it. Naming the
 * matching pattern (only needed for a rejection's reason) tests groups of √n patterns, combined
 * lazily, then the single patterns of the group that matched: about 2·√n scans.
 * Throws PatternError for the first bad entry, with `index` set to its position in `entries`.
 */
export function patternSet(entries: readonly string[]): PatternSet {
  const parsed = entries.map((entry, index) => {
    try {
      return parsePattern(entry);
    } catch (error) {
      if (error instanceof PatternError) error.index = index;
      throw error;
    }
  });
  const size = parsed.reduce((sum, pattern) => sum + pattern.size, 0);
  if (parsed.length === 0) return { size, test: () => false, first: () => undefined };
  if (parsed.length === 1) {
    const only = parsed[0]!.regex;
    return { size, test: (text) => only.test(text), first: (text) => (only.test(text) ? entries[0] : undefined) };
  }
  const all = combine(parsed);
  const width = Math.ceil(Math.sqrt(parsed.length));
  const groups: (RE2JS | undefined)[] = [];
  return {
    size,
    test: (text) => all.test(text),
    first(text) {
      for (let start = 0, group = 0; start < parsed.length; start += width, group++) {
        const part = parsed.slice(start, start + width);
        const regex = (groups[group] ??= combine(part));
        if (!regex.test(text)) continue;
        const hit = part.findIndex((pattern) => pattern.regex.test(text));
        if (hit >= 0) return entries[start + hit];
      }
      return undefined;
    },
  };
}

function combine(parsed: readonly ParsedPattern[]): RE2JS {
  return RE2JS.compile(parsed.map(({ source, flags }) => `(?${flags.replace('u', '')}:${source})`).join('|'));
}
