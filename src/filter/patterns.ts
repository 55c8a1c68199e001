/**
 * Filter patterns (decisions §6): written `/body/flags`, flags from `i` (case-insensitive), `m`
 * (multi-line `^`/`$`), `s` (`.` matches newlines) and `u` (Unicode; always on in RE2, accepted
 * for familiarity). They compile on re2js, a linear-time engine with RE2 semantics, so no
 * user-supplied pattern can hang the service; constructs RE2 lacks (back-references,
 * look-around) are refused when the pattern is saved. Pure: used by the management validator
 * and by the filter engine.
 */
import { RE2JS } from 're2js';

/** Longest pattern entry accepted, slashes and flags included (decisions §10). */
export const MAX_PATTERN_LENGTH = 1000;

const FLAG_BITS: Record<string, number> = { i: RE2JS.CASE_INSENSITIVE, m: RE2JS.MULTILINE, s: RE2JS.DOTALL, u: 0 };

/** Why a pattern entry was refused: a message and the 0-based character position in the entry. */
export interface PatternProblem {
  message: string;
  position: number;
}

/** The compiled pattern, or the problem with its position. */
export type Compiled = { ok: true; regex: RE2JS } | { ok: false; problem: PatternProblem };

/** Compiles one `/body/flags` entry on re2js. */
export function compilePattern(entry: string): Compiled {
  const fail = (message: string, position: number): Compiled => ({ ok: false, problem: { message, position } });
  if (entry.length > MAX_PATTERN_LENGTH) return fail(`a pattern has at most ${MAX_PATTERN_LENGTH} characters`, MAX_PATTERN_LENGTH);
  if (!entry.startsWith('/')) return fail('a pattern is written /body/flags and must start with /', 0);
  const close = entry.lastIndexOf('/');
  if (close === 0) return fail('a pattern is written /body/flags and needs a closing /', entry.length);
  const body = entry.slice(1, close);
  if (!body) return fail('the pattern body is empty', 1);
  let bits = 0;
  const seen = new Set<string>();
  for (let i = close + 1; i < entry.length; i++) {
    const flag = entry[i]!;
    if (!(flag in FLAG_BITS)) return fail(`unknown flag ${flag}; flags are i, m, s, u`, i);
    if (seen.has(flag)) return fail(`flag ${flag} is repeated`, i);
    seen.add(flag);
    bits |= FLAG_BITS[flag]!;
  }
  try {
    return { ok: true, regex: RE2JS.compile(body, bits) };
  } catch (error) {
    const { message, input } = error as { message?: string; input?: unknown };
    const at = typeof input === 'string' && input ? body.indexOf(input) : -1;
    return fail(String(message ?? 'invalid pattern').replace(/^error parsing regexp: /, ''), 1 + Math.max(at, 0));
  }
}
