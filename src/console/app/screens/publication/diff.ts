/**
 * Line diff of two versions of a customization, with jsdiff (`diff`, https://github.com/kpdecker/jsdiff):
 * `lineDiff(before, after)` → lines marked `added`, `removed` or unchanged, for the history.
 * Long unchanged stretches are shortened to `context` lines around each change.
 */
import { diffLines } from 'diff';

export interface DiffLine {
  kind: 'added' | 'removed' | 'same' | 'skipped';
  text: string;
}

/** The lines of `after` against `before`, unchanged stretches cut to `context` lines around each change (a `skipped` line says how many). */
export function lineDiff(before: string, after: string, context = 3): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const part of diffLines(before, after)) {
    const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    const texts = part.value.replace(/\n$/, '').split('\n');
    for (const text of texts) lines.push({ kind, text });
  }
  const near = (i: number) => lines.slice(Math.max(0, i - context), i + context + 1).some((line) => line.kind !== 'same');
  const out: DiffLine[] = [];
  let skipped = 0;
  lines.forEach((line, i) => {
    if (line.kind !== 'same' || near(i)) {
      if (skipped) out.push({ kind: 'skipped', text: `${skipped} unchanged line${skipped === 1 ? '' : 's'}` });
      skipped = 0;
      out.push(line);
    } else skipped++;
  });
  if (skipped) out.push({ kind: 'skipped', text: `${skipped} unchanged line${skipped === 1 ? '' : 's'}` });
  return out;
}
