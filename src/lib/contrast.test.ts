/**
 * WCAG 2.2 relative luminance and contrast ratio (https://www.w3.org/TR/WCAG22/#dfn-relative-luminance,
 * https://www.w3.org/TR/WCAG22/#dfn-contrast-ratio), table-driven: black on white is 21:1 by the
 * definition, #767676 the lightest grey passing 4.5:1 on white (the WCAG understanding document
 * of 1.4.3), the rest computed by hand from the definition.
 */
import { describe, expect, it } from 'vitest';
import { contrastRatio, parseHex, relativeLuminance } from './contrast.ts';

describe('relativeLuminance', () => {
  it.each([
    ['#000000', 0],
    ['#ffffff', 1],
    ['#FFF', 1],
    ['#ff0000', 0.2126],
    ['#00ff00', 0.7152],
    ['#0000ff', 0.0722],
    ['#808080', 0.2159], // (128/255 + .055)/1.055)^2.4
    ['#0a0a0a', 0.003035], // below the 0.04045 knee: 10/255/12.92
  ])('%s → %f', (colour, luminance) => {
    expect(relativeLuminance(colour)).toBeCloseTo(luminance, 4);
  });
});

describe('contrastRatio', () => {
  it.each([
    ['#000000', '#ffffff', 21],
    ['#ffffff', '#000000', 21], // order does not matter
    ['#777777', '#ffffff', 4.48], // the classic near miss of 4.5:1
    ['#767676', '#ffffff', 4.54], // the lightest grey that passes on white
    ['#65676b', '#f4f5f7', 5.19], // the wall's default muted text on its default background
    ['#4f46e5', '#ffffff', 6.29], // the default accent on white cards
    ['#949494', '#ffffff', 3.03], // passes only as large text
    ['#123456', '#123456', 1],
  ])('%s on %s → %f', (a, b, ratio) => {
    expect(contrastRatio(a, b)).toBeCloseTo(ratio, 2);
  });

  it('refuses what is not a hex colour', () => {
    for (const bad of ['red', '#12345', '#ggg', 'rgb(0,0,0)', '#1234567', '']) expect(() => parseHex(bad)).toThrow(TypeError);
  });
});
