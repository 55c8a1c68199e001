/**
 * Colour contrast as WCAG 2.2 defines it (pure functions):
 *
 * - relative luminance (WCAG 2.2, "Definitions: relative luminance",
 *   https://www.w3.org/TR/WCAG22/#dfn-relative-luminance): each sRGB channel c in 0–1 becomes
 *   c / 12.92 when c ≤ 0.04045, else ((c + 0.055) / 1.055) ^ 2.4; L = 0.2126 R + 0.7152 G + 0.0722 B;
 * - contrast ratio (https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio): (L1 + 0.05) / (L2 + 0.05),
 *   L1 the lighter, from 1 (same colour) to 21 (black on white);
 * - the minimums of success criterion 1.4.3 (Contrast, Minimum, level AA): 4.5:1 for text, 3:1 for
 *   large text (at least 18 pt, or 14 pt bold); and 1.4.11 (Non-text Contrast): 3:1 for the parts
 *   of interface components and graphics needed to perceive them.
 *
 * (The 0.04045 threshold is the sRGB standard's, IEC 61966-2-1; WCAG 2.2 notes that its older
 * 0.03928 gives the same result for 8-bit colours.)
 */

/** WCAG 2.2 AA minimum contrast ratios: text (1.4.3), large text (1.4.3) and non-text parts (1.4.11). */
export const AA_MINIMUM = { text: 4.5, large: 3, nonText: 3 } as const;

/** `#rgb` or `#rrggbb`, case-insensitive: the only colour syntax `parseHex` reads. */
export const HEX_COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

/** The 0–255 channels of a `#rgb` / `#rrggbb` colour; throws a TypeError for anything else. */
export function parseHex(colour: string): [number, number, number] {
  if (!HEX_COLOUR.test(colour)) throw new TypeError(`not a #rgb or #rrggbb colour: ${colour}`);
  const hex = colour.length === 4 ? [...colour.slice(1)].map((c) => c + c).join('') : colour.slice(1);
  return [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}

/** Relative luminance (0 black – 1 white) of a `#rgb` / `#rrggbb` colour, by the WCAG 2.2 definition. */
export function relativeLuminance(colour: string): number {
  const [r, g, b] = parseHex(colour).map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio (1–21) of two `#rgb` / `#rrggbb` colours, in either order, by the WCAG 2.2 definition. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}
