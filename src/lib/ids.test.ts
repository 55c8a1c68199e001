import { describe, expect, it } from 'vitest';
import { idGenerator, isId, newId } from './ids.ts';

const T = Date.UTC(2026, 10, 23, 6, 0, 0); // ms
const hex = (ms: number) => Math.floor(ms / 1000).toString(16).padStart(8, '0');

/** A generator whose random parts are the given 16-hex strings, in turn. */
function scripted(tails: string[]) {
  let i = 0;
  return idGenerator(() => Buffer.from(tails[i++]!, 'hex'));
}

describe('idGenerator (pure logic)', () => {
  it.each([
    ['one id: the second, then the random bytes', [[T, 'a1b2c3d4e5f60718']], [`${hex(T)}a1b2c3d4e5f60718`]],
    ['same second, larger random part: same prefix', [[T, '1000000000000000'], [T + 400, '2000000000000000']], [`${hex(T)}1000000000000000`, `${hex(T)}2000000000000000`]],
    ['same second, smaller random part: the prefix moves on', [[T, '2000000000000000'], [T + 400, '1000000000000000']], [`${hex(T)}2000000000000000`, `${hex(T + 1000)}1000000000000000`]],
    ['same second, equal random part: the prefix moves on', [[T, '2000000000000000'], [T, '2000000000000000']], [`${hex(T)}2000000000000000`, `${hex(T + 1000)}2000000000000000`]],
    ['the clock going back: the previous prefix holds', [[T + 5000, '0000000000000005'], [T, '0000000000000006']], [`${hex(T + 5000)}0000000000000005`, `${hex(T + 5000)}0000000000000006`]],
    ['a later second: its prefix, whatever the random part', [[T, 'ffffffffffffffff'], [T + 1000, '0000000000000000']], [`${hex(T)}ffffffffffffffff`, `${hex(T + 1000)}0000000000000000`]],
  ] as const)('%s', (_name, calls, expected) => {
    const next = scripted(calls.map(([, tail]) => tail));
    const ids = calls.map(([now]) => next(now));
    expect(ids).toEqual(expected);
    expect([...ids].sort()).toEqual(ids);
  });

  it('refuses a prefix beyond 32 bits of seconds', () => {
    expect(() => scripted(['0000000000000001'])(2 ** 32 * 1000)).toThrow(RangeError);
  });
});

describe('ids', () => {
  it('are 24 lower-case hex characters, the creation second first', () => {
    const id = idGenerator()(T);
    expect(isId(id)).toBe(true);
    expect(id.slice(0, 8)).toBe(hex(T));
  });

  it('carry 64 random bits each: no counter or per-process part (every bit varies)', () => {
    const next = idGenerator();
    const tails = Array.from({ length: 1000 }, () => BigInt(`0x${next(T).slice(8)}`));
    expect(new Set(tails).size).toBe(1000);
    for (let bit = 0n; bit < 64n; bit++) {
      const ones = tails.filter((t) => (t >> bit) & 1n).length;
      // Random bits: each is 1 in about half of the ids (a counter's high bits or a per-process part would be constant).
      expect(ones, `bit ${bit}`).toBeGreaterThan(350);
      expect(ones, `bit ${bit}`).toBeLessThan(650);
    }
  });

  it('sort in creation order when made in one second, and the prefix comes back to the clock', () => {
    const next = idGenerator();
    const ids = Array.from({ length: 1000 }, () => next(T));
    expect([...ids].sort()).toEqual(ids);
    const lead = Number.parseInt(ids.at(-1)!.slice(0, 8), 16) - Math.floor(T / 1000);
    // About one second per two ids (a descent of the random parts); far below one per id.
    expect(lead).toBeGreaterThan(300);
    expect(lead).toBeLessThan(700);
    expect(next(T + 3_600_000).slice(0, 8)).toBe(hex(T + 3_600_000));
  });

  it('from the shared generator are distinct and ordered', () => {
    const ids = Array.from({ length: 50 }, () => newId());
    expect(new Set(ids).size).toBe(50);
    expect([...ids].sort()).toEqual(ids);
  });
});
