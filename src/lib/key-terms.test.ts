/** Key terms of an article and an item's match (lib/key-terms.ts): table-driven. */
import { describe, expect, it } from 'vitest';
import { candidateTerms, keyTerms, matchScore, stem, termsOf } from './key-terms.ts';

describe('stem and termsOf', () => {
  it.each([
    ['panels', 'panel'],
    ['batteries', 'battery'],
    ['churches', 'church'],
    ['glass', 'glass'],
    ['virus', 'virus'],
    ['analysis', 'analysis'],
    ['bus', 'bus'],
  ])('%s → %s', (word, stemmed) => expect(stem(word)).toBe(stemmed));

  it('folds diacritics, drops stop words, short words and numbers, keeps hashtags as words', () => {
    expect(termsOf('The Café and 2026 #SolarPower of an ox')).toEqual(['cafe', 'solarpower']);
  });
});

describe('candidateTerms', () => {
  it('weighs title words, names and hashtags above plain words', () => {
    const terms = candidateTerms({ title: 'Harbour', text: 'The harbour crane broke. Engineers met Marta near the crane. #cranes crane crane.' });
    const tf = new Map(terms.map((t) => [t.term, t.tf]));
    // harbour: title 1.5 + text 1 (no capital) = 2.5; crane: 1+1+3(#cranes)+1+1 = 7; marta: a name, 3.
    expect(tf.get('crane')).toBeCloseTo(1 + Math.log(7));
    expect(tf.get('harbour')).toBeCloseTo(1 + Math.log(2.5));
    expect(tf.get('marta')).toBeCloseTo(1 + Math.log(3));
    expect(tf.get('engineer')).toBeCloseTo(1);
    expect(terms[0]!.term).toBe('crane');
  });
});

describe('keyTerms and matchScore', () => {
  const candidates = [{ term: 'solar', tf: 2 }, { term: 'the', tf: 5 }, { term: 'unknown', tf: 3 }, { term: 'village', tf: 1 }];
  const df = new Map([['solar', 10], ['the', 1000], ['village', 500]]);
  it('weighs by idf and drops the terms no item contains', () => {
    const terms = keyTerms(candidates, df, 1000);
    expect(terms.map((t) => t.term)).toEqual(['solar', 'the', 'village']);
    expect(terms[0]!.weight).toBeCloseTo(2 * Math.log(1 + 100));
  });
  it('scores title matches above text matches, and newer items above older ones', () => {
    const terms = [{ term: 'solar', weight: 2 }, { term: 'village', weight: 1 }];
    const now = Date.UTC(2026, 11, 20);
    const inTitle = matchScore(terms, { title: 'Solar village', text: '', dateMs: now }, now);
    const inText = matchScore(terms, { title: '', text: 'solar village', dateMs: now }, now);
    const old = matchScore(terms, { title: 'Solar village', text: '', dateMs: now - 60 * 86_400_000 }, now);
    expect(inTitle).toBeCloseTo(4.5);
    expect(inText).toBeCloseTo(3);
    expect(old).toBeCloseTo(2.25);
    expect(matchScore(terms, { title: 'Football', text: 'cup', dateMs: now }, now)).toBe(0);
  });
});
