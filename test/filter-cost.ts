/**
 * Inputs of the costliest filter work the bounds allow (docs/filters.md#bounds), shared by the
 * tests that run it against other tenants' requests (e2e/filter-load, e2e/filter-fairness).
 */

/** A deterministic string of `length` a and b (no c: the patterns never match, every rule runs). */
export function ab(length: number, seed: number): string {
  let x = seed;
  let text = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    text += x & 0x10000 ? 'a' : 'b';
  }
  return text;
}
