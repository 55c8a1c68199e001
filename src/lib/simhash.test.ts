/** SimHash (simhash.ts): near and far pairs with their measured Hamming distances; near is ≤ NEAR_BITS. */
import { describe, expect, it } from 'vitest';
import { bandRows, bands, fromBandRow, fromHex, hamming, MIN_WORDS, NEAR_BITS, nearRests, SPACE_KEYS, simhash, spaceOf, toHex, words } from './simhash.ts';

const T = 'Scientists find a new species of deep sea octopus off the coast of Chile';
const LONG = `${T}. The animal was filmed at a depth of 4000 metres by a remotely operated vehicle during an expedition that mapped seamounts, collected samples of corals and sponges, and counted more than one hundred species that may be new to science, researchers from the institute said on Tuesday.`;

/** [a, b, measured distance]: the table that sets NEAR_BITS. */
const PAIRS: [string, string, number][] = [
  [T, T, 0],
  [T, 'Scientists find a new species of deep-sea octopus off the coast of Chile!', 0],
  [T, 'SCIENTISTS FIND A NEW SPECIES OF DEEP SEA OCTOPUS OFF THE COAST OF CHILE', 0],
  [T, '<p>Scientists find a new species of deep sea octopus off the coast of Chile <a href="https://x.com/a">https://x.com/a</a> #science @bob</p>', 0],
  [T, '<p><span class="h-card"><a href="https://mastodon.social/@bob" class="u-url mention">@<span>bob</span></a></span> Scientists find a new species of deep sea octopus off the coast of Chile</p>', 0],
  ['Café in Zürich reopens after renovation works finish early', 'Cafe in Zurich reopens after renovation works finish early', 0],
  [LONG, LONG.replace('on Tuesday', 'on Wednesday'), 1],
  // Far: a word added or changed in a short headline is another text.
  [T, 'BREAKING: Scientists find a new species of deep sea octopus off the coast of Chile', 5],
  [T, 'Scientists found a new species of deep sea octopus off the coast of Chile', 10],
  [T, 'Scientists find new species of deep sea octopus off coast of Chile', 10],
  [T, 'Scientists find a new species of deep sea squid off the coast of Peru', 16],
  ['Apple announces the new iPhone with a faster chip and better camera', 'Apple announces the new iPad with a faster chip and better screen', 13],
  [T, 'Local council approves the new budget for road repairs next year', 30],
  // Far: boilerplate titles of different entries in the recorded fixtures (feeds cbn-podcast, blogger-feedburner, youtube playlistItems).
  ['Arnaldo Jabor - O Comentário de Arnaldo Jabor - 29/10/2015 08h', 'Arnaldo Jabor - O Comentário de Arnaldo Jabor - 23/10/2015 08h', 6],
  ['Announcing v201605 of the AdWords API', 'Announcing v201601 of the AdWords API', 6],
  ['Art + AI - Pittsburgh ML Summit ‘19', 'Inclusive AI - Pittsburgh ML Summit ‘19', 5],
  ['Wild Flavors All Year Round', 'Wild Flavors All Year Round: Dry Infusions', 8],
];

describe('simhash', () => {
  it.each(PAIRS)('%s | %s → %i bits', (a, b, distance) => {
    const d = hamming(simhash(a)!, simhash(b)!);
    expect(d).toBe(distance);
    expect(d <= NEAR_BITS).toBe(distance <= NEAR_BITS);
  });

  it('near fingerprints share a band (pigeonhole: ≤ 3 differing bits leave one of four bands equal)', () => {
    for (const [a, b, distance] of PAIRS.filter(([, , d]) => d <= NEAR_BITS)) {
      const [x, y] = [bands(simhash(a)!), bands(simhash(b)!)];
      expect(x.some((band, i) => band === y[i]), `${a} / ${distance}`).toBe(true);
    }
  });

  it(`gives no fingerprint below ${MIN_WORDS} words`, () => {
    expect(simhash('Breaking news today')).toBeUndefined();
    expect(simhash('<a href="https://example.com/a">https://example.com/a</a> @bob #news')).toBeUndefined();
    expect(simhash('')).toBeUndefined();
  });

  it('reduces text to words without markup, links, mentions and hashtags', () => {
    expect(words('<b>Ça</b> va? https://t.co/x @alice #tag www.example.com Done&amp;dusted')).toEqual(['ca', 'va', 'done', 'dusted']);
  });

  it('writes a fingerprint as 16 hex digits and reads it back', () => {
    const h = simhash(T)!;
    expect(toHex(h)).toMatch(/^[0-9a-f]{16}$/);
    expect(fromHex(toHex(h))).toEqual(h);
    expect(hamming({ hi: 0xffffffff, lo: 0 }, { hi: 0, lo: 0xffffffff })).toBe(64);
  });

  it('indexes a fingerprint by four band rows that give it back, and near ones differ only in their rests', () => {
    for (const [a, b, distance] of PAIRS) {
      const [x, y] = [simhash(a)!, simhash(b)!];
      const rows = bandRows(x);
      expect(rows.map((row) => Math.floor(row.key / 65_536))).toEqual([0, 1, 2, 3]);
      for (const row of rows) {
        expect(fromBandRow(row.key, row.rest)).toEqual(x);
        expect(row.rest).toBeLessThan(2 ** 48);
      }
      const shared = bandRows(y).filter((row, band) => row.key === rows[band]!.key);
      if (distance <= NEAR_BITS) expect(shared.length).toBeGreaterThan(0);
      for (const row of shared) expect(hamming(fromBandRow(row.key, row.rest), x)).toBe(distance);
      // The database's near check of rows that share a band (SQLite's near_rests) agrees with the distance.
      for (const row of shared) expect(nearRests(row.rest, rows[Math.floor(row.key / 65_536)]!.rest)).toBe(distance <= NEAR_BITS);
    }
    // Rests are 48-bit: bits above 32 count as much as the low ones.
    expect([nearRests(2 ** 48 - 1, 2 ** 48 - 1 - 2 ** 47 - 2 ** 40 - 1), nearRests(2 ** 48 - 1, 2 ** 32 - 1), nearRests(0, 2 ** 47 + 2 ** 33 + 2 ** 31 + 1)]).toEqual([true, false, false]);
    const extreme = { hi: 0xffffffff, lo: 0x0000ffff };
    expect(bandRows(extreme).map((row) => fromBandRow(row.key, row.rest))).toEqual([extreme, extreme, extreme, extreme]);
    // A space is a range of SPACE_KEYS keys: the same rests, keys shifted, read back alike.
    const spaced = bandRows(extreme, 1);
    expect(spaced.map((row) => row.key - SPACE_KEYS)).toEqual(bandRows(extreme).map((row) => row.key));
    expect(spaced.map((row) => [spaceOf(row.key), fromBandRow(row.key, row.rest)])).toEqual(Array(4).fill([1, extreme]));
    expect(bandRows(extreme).map((row) => spaceOf(row.key))).toEqual([0, 0, 0, 0]);
  });
});
