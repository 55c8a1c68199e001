/**
 * The SimHash fingerprints and band rows of `src/lib/simhash.ts` exactly as they were when
 * 2026-11-30-print-spaces was written (commit 5aa1e3d), frozen for that migration: it recomputes
 * existing items' prints to find their rows, so a later change to the library must not change
 * which rows it moves. Pure, never throws. The rule and its sources (Charikar 2002; Manku, Jain,
 * Das Sarma 2007) are described in src/lib/simhash.ts and docs/api.md#duplicates.
 */

/** Texts of fewer words have no fingerprint: too short to tell a duplicate from a coincidence. */
const MIN_WORDS = 5;

export interface SimHash {
  hi: number;
  lo: number;
}

/** The words of `text` as compared: without markup, links, mentions and hashtags; normalized. */
function words(text: string): string[] {
  const plain = text
    // An anchor whose label is a mention, a hashtag or an address goes whole (Mastodon splits them into spans).
    .replace(/<a\b[^>]*>([\s\S]*?)<\/a>/gi, (_, label: string) => {
      const shown = label.replace(/<[^>]*>/g, '').trim();
      return /^[@#]/.test(shown) || /^\S+\.\S+$/.test(shown) ? ' ' : ` ${shown} `;
    })
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(?:amp|lt|gt|quot|#39|apos|nbsp);/g, ' ')
    .replace(/\bhttps?:\/\/\S+/gi, ' ')
    .replace(/\bwww\.\S+/gi, ' ')
    .replace(/(^|\s)[@#][\p{L}\p{N}_.@-]+/gu, ' ')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  return plain.match(/[\p{L}\p{N}]+/gu) ?? [];
}

const FNV_PRIME = 0x01000193;
const BASIS_HI = 0x811c9dc5;
const BASIS_LO = 0x050c5d1f;

/** The FNV-1a 32-bit state after `s`, continuing from state `h` (without the final mix). */
function fnvStep(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h;
}

/** The final avalanche (murmur3 fmix32) of an FNV-1a state: FNV's low bits alone mix poorly for short strings. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

interface WordState {
  /** FNV-1a states of the word from the two offset bases, before the final mix. */
  hi: number;
  lo: number;
  /** The word's own shingle hashes (the states mixed). */
  mixedHi: number;
  mixedLo: number;
}

/**
 * Word states shared by every fingerprint (texts repeat words): a pair's hash continues its first
 * word's state with a space and the second word, so no word is hashed twice. Bounded: cleared
 * when it holds `WORD_CACHE` words.
 */
const wordStates = new Map<string, WordState>();
const WORD_CACHE = 20_000;

function wordState(word: string): WordState {
  let state = wordStates.get(word);
  if (!state) {
    if (wordStates.size >= WORD_CACHE) wordStates.clear();
    const hi = fnvStep(word, BASIS_HI);
    const lo = fnvStep(word, BASIS_LO);
    state = { hi, lo, mixedHi: fmix(hi), mixedLo: fmix(lo) };
    wordStates.set(word, state);
  }
  return state;
}

/**
 * Counts of set bits per position over many 32-bit values, eight positions at a time (SWAR): lane
 * `j` adds `(value >>> j) & 0x01010101`, one byte each for positions `j`, `j + 8`, `j + 16` and
 * `j + 24`; the lanes are flushed into `ones` before a byte can overflow (255 values).
 */
class BitCounter {
  readonly ones = new Int32Array(32);
  readonly #lanes = new Int32Array(8);
  #pending = 0;
  add(value: number): void {
    const lanes = this.#lanes;
    for (let j = 0; j < 8; j++) lanes[j]! += (value >>> j) & 0x01010101;
    if (++this.#pending === 255) this.flush();
  }
  flush(): void {
    const lanes = this.#lanes;
    for (let j = 0; j < 8; j++) {
      const lane = lanes[j]!;
      for (let byte = 0; byte < 4; byte++) this.ones[8 * byte + j]! += (lane >>> (8 * byte)) & 0xff;
      lanes[j] = 0;
    }
    this.#pending = 0;
  }
}

/**
 * The SimHash of `text`, or undefined when it has fewer than `MIN_WORDS` words. Shingles are the
 * words and the pairs `"<word> <next>"`; each shingle's two 32-bit halves are FNV-1a from offset
 * bases 0x811c9dc5 and 0x050c5d1f with a murmur3 fmix32 avalanche. A bit is set when more than
 * half of the shingles set it (Charikar's sum of ±1 weights is positive).
 */
export function simhash(text: string): SimHash | undefined {
  const w = words(text);
  if (w.length < MIN_WORDS) return undefined;
  const hiBits = new BitCounter();
  const loBits = new BitCounter();
  let previous: WordState | undefined;
  for (const word of w) {
    const state = wordState(word);
    hiBits.add(state.mixedHi);
    loBits.add(state.mixedLo);
    if (previous) {
      // The pair: the previous word's state continued with a space (0x20), then this word.
      hiBits.add(fmix(fnvStep(word, Math.imul(previous.hi ^ 0x20, FNV_PRIME))));
      loBits.add(fmix(fnvStep(word, Math.imul(previous.lo ^ 0x20, FNV_PRIME))));
    }
    previous = state;
  }
  hiBits.flush();
  loBits.flush();
  const shingles = 2 * w.length - 1;
  let hi = 0;
  let lo = 0;
  for (let b = 0; b < 32; b++) {
    if (2 * hiBits.ones[b]! > shingles) hi |= 1 << b;
    if (2 * loBits.ones[b]! > shingles) lo |= 1 << b;
  }
  return { hi: hi >>> 0, lo: lo >>> 0 };
}

/** The four 16-bit bands of a fingerprint, highest first (each 0–65 535). */
function bands(h: SimHash): [number, number, number, number] {
  return [h.hi >>> 16, h.hi & 0xffff, h.lo >>> 16, h.lo & 0xffff];
}

/** Band keys in one space of `bandRows` (4 bands of 16 bits). */
export const SPACE_KEYS = 4 * 65_536;

/**
 * The rows a fingerprint is indexed by, one per band: `key` the space × 262 144 + the band number ×
 * 65 536 + the band's value (a space is a range of 262 144 keys: fingerprints of different kinds
 * kept apart, e.g. titles and whole texts, src/lib/item-keys.ts), `rest` the other three bands
 * read as one 48-bit number, highest first. Two fingerprints with the same key differ exactly where
 * their rests differ.
 */
export function bandRows(h: SimHash, space = 0): { key: number; rest: number }[] {
  const all = bands(h);
  return all.map((value, band) => ({ key: space * SPACE_KEYS + band * 65_536 + value, rest: all.filter((_, other) => other !== band).reduce((sum, part) => sum * 65_536 + part, 0) }));
}

