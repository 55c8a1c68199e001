/** `acceptedCoding` over Accept-Encoding values (RFC 9110 §12.5.3): a table of headers and what is chosen. */
import { describe, expect, it } from 'vitest';
import { acceptedCoding } from './encoding.ts';

describe('acceptedCoding', () => {
  const cases: [string | undefined, ('br' | 'gzip')[], 'br' | 'gzip' | null][] = [
    ['gzip, deflate, br', ['br', 'gzip'], 'br'],
    ['gzip, deflate, br', ['gzip'], 'gzip'],
    ['br;q=0.5, gzip', ['br', 'gzip'], 'gzip'],
    ['gzip;q=0', ['gzip'], null],
    ['gzip;q=0.0, br', ['br', 'gzip'], 'br'],
    ['GZip', ['gzip'], 'gzip'],
    ['*', ['br', 'gzip'], 'br'],
    ['*;q=0', ['gzip'], null],
    ['identity', ['gzip'], null],
    ['', ['gzip'], null],
    [undefined, ['gzip'], null],
    ['gzip;q=abc', ['gzip'], null],
    [',;='.repeat(4000), ['gzip'], null],
  ];
  it.each(cases)('%j offered %j → %j', (header, offered, chosen) => {
    expect(acceptedCoding(header, offered)).toBe(chosen);
  });
});
