/**
 * Slugs (docs/api.md#collections): lower-case ASCII words joined by `-` ("World News" →
 * `world-news`). Accents are folded to their base letter (ß → ss, æ → ae …); a name with no ASCII
 * letters or digits slugs to `item`.
 */
const LETTERS: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i' };

/** The slug of `name` by the module's rules. */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[ßæœøđðłþı]/g, (letter) => LETTERS[letter] ?? letter)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
  return slug || 'item';
}

/** The first of `base`, `base-2`, `base-3`… that `taken` does not hold. */
export function uniqueSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
