/**
 * Key terms of an article and the match of an item to them (docs/api.md#related-content), pure
 * functions: TF-IDF (Spärck Jones 1972; Manning, Raghavan & Schütze, "Introduction to Information
 * Retrieval" §6.2) with the article as the document and the contract's published items as the
 * collection the document frequencies come from.
 *
 * - Words are runs of letters and digits, folded as the search index folds them
 *   (search-query.ts `foldDiacritics`), reduced by `stem` (plural endings), stop words and words
 *   under 3 characters or of digits only left out.
 * - Term frequency is weighted: a word of the title counts `TITLE_WEIGHT` times, a name (a
 *   capitalised word not opening a sentence) `NAME_WEIGHT` times, a hashtag `HASHTAG_WEIGHT`
 *   times; the weighted frequency is damped as 1 + ln(tf).
 * - idf = ln(1 + N / df), N the contract's published items and df those containing the term; a
 *   term no item contains cannot match and is dropped.
 * - An item's match is the sum of the weights of the key terms it contains (its title's count
 *   `ITEM_TITLE_BONUS` times), multiplied by its recency `1 / (1 + age / RECENCY_DAYS)`.
 */
import { foldDiacritics } from './search-query.ts';

export const TITLE_WEIGHT = 1.5;
export const NAME_WEIGHT = 3;
export const HASHTAG_WEIGHT = 3;
export const ITEM_TITLE_BONUS = 1.5;
/** Days after which an item's recency factor is one half. */
export const RECENCY_DAYS = 60;
/** Most candidate words read from an article (the most frequent, weighted), before document frequencies. */
export const MAX_CANDIDATES = 24;
/** Most key terms kept. */
export const MAX_KEY_TERMS = 12;

/** English stop words (and a few of the page furniture every article has), folded. */
const STOP = new Set(
  (
    'a about above after again against all also although am among an and any are around as at be because been before being below between both but by can cannot could did do does doing down during each either else even ever every few for from further get gets got had has have having he her here hers herself him himself his how however i if in into is it its itself just least less like made make many may me might more most much must my myself near neither never new no nor not now of off often on once one only or other our ours ourselves out over own per perhaps put rather said same say says see seen several she should since so some still such than that the their theirs them themselves then there these they this those though through thus to too under until up upon us use used very via was way we well were what when where whether which while who whom whose why will with within without would yet you your yours yourself ' +
    'year years day days time times week weeks month months today yesterday tomorrow people thing things first last next two three four five told according ' +
    'share click read more subscribe cookie cookies newsletter advertisement comments comment sign login menu home page copyright rights reserved'
  ).split(/\s+/),
);

const TOKEN = /#?[\p{L}\p{N}\p{M}]+/gu;
const HAS_LETTER = /\p{L}/u;

/** A folded word reduced to its singular (English plural endings: -ies → -y, -ches/-shes/-xes/-sses → stem, -s), as matching compares words. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The matchable terms of `text` (folded, stemmed, stop words left out), in order, repeats kept. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const word = foldDiacritics(match[0].replace(/^#/, ''));
    if (word.length < 3 || !HAS_LETTER.test(word) || STOP.has(word)) continue;
    const term = stem(word);
    if (!STOP.has(term)) out.push(term);
  }
  return out;
}

/**
 * The candidate terms of an article: its words weighted (title, names, hashtags: see the module),
 * the `max` heaviest, heaviest first; each with its damped weighted frequency `tf`.
 */
export function candidateTerms(article: { title: string; text: string }, max = MAX_CANDIDATES): { term: string; tf: number }[] {
  const counts = new Map<string, number>();
  const add = (term: string, weight: number) => counts.set(term, (counts.get(term) ?? 0) + weight);
  for (const term of termsOf(article.title)) add(term, TITLE_WEIGHT);
  // Sentences: a capital after an opening (start, . ! ? or a line break) is no sign of a name.
  let opening = true;
  for (const match of article.text.matchAll(/#?[\p{L}\p{N}\p{M}]+|[.!?\n]/gu)) {
    const token = match[0];
    if (/^[.!?\n]$/.test(token)) {
      opening = true;
      continue;
    }
    const hashtag = token.startsWith('#');
    const name = !opening && /^\p{Lu}/u.test(token);
    opening = false;
    const [term] = termsOf(token);
    if (term) add(term, hashtag ? HASHTAG_WEIGHT : name ? NAME_WEIGHT : 1);
  }
  return [...counts]
    .map(([term, tf]) => ({ term, tf: 1 + Math.log(tf) }))
    .sort((a, b) => b.tf - a.tf || a.term.localeCompare(b.term))
    .slice(0, max);
}

/** A key term and its TF-IDF weight. */
export interface KeyTerm {
  term: string;
  weight: number;
}

/**
 * The key terms: each candidate weighted tf × ln(1 + total / df) with `df(term)` the items
 * containing it among `total`; those no item contains dropped; the `max` heaviest, heaviest first.
 */
export function keyTerms(candidates: { term: string; tf: number }[], df: Map<string, number>, total: number, max = MAX_KEY_TERMS): KeyTerm[] {
  return candidates
    .filter((c) => (df.get(c.term) ?? 0) > 0)
    .map((c) => ({ term: c.term, weight: c.tf * Math.log(1 + total / df.get(c.term)!) }))
    .sort((a, b) => b.weight - a.weight || a.term.localeCompare(b.term))
    .slice(0, max);
}

/**
 * How well an item matches the key terms (0: not at all): the weights of the terms its title or
 * text contains, a title's `ITEM_TITLE_BONUS` times, times its recency at `nowMs` (its `dateMs`).
 */
export function matchScore(terms: KeyTerm[], item: { title: string; text: string; dateMs: number }, nowMs: number): number {
  const title = new Set(termsOf(item.title));
  const text = new Set(termsOf(item.text));
  let score = 0;
  for (const { term, weight } of terms) {
    if (title.has(term)) score += weight * ITEM_TITLE_BONUS;
    else if (text.has(term)) score += weight;
  }
  const ageDays = Math.max(0, nowMs - item.dateMs) / 86_400_000;
  return score / (1 + ageDays / RECENCY_DAYS);
}
