/**
 * The one matcher of the Jetstream listener (docs/services.md#bluesky-jetstream): every active
 * bluesky input of the installation, compiled once, against which each streamed post is matched
 * in one pass. Pure: no I/O.
 *
 * Semantics, as the REST calls they stand in for (docs/services.md#bluesky):
 * - `keyword` (`app.bsky.feed.searchPosts`): the query's terms must all be in the post, in any
 *   order, case- and accent-width-insensitively (NFKC, lower case), as whole words: `sluice`
 *   matches "Sluice!" but not "sluices". A quoted `"two words"` or a term with inner punctuation
 *   (`node.js`) is a phrase: its words consecutive. `#tag` matches a post tagged so (the
 *   record's tags and tag facets), case-insensitively. Replies match.
 * - `user` (`app.bsky.feed.getAuthorFeed?filter=posts_no_replies`): posts of its DID, not replies.
 *
 * Compiled as hash indexes: each keyword input is filed under its first term (a word, or a tag),
 * so a post costs one lookup per distinct word and tag it has, plus a check of the other terms
 * of the few inputs found; the number of inputs barely counts (bench/freshness.ts measures it
 * against a re2js alternation of the same words).
 */
import { arr, obj, str, type Json } from '../../kit/normalize.ts';

/** An input as the matcher sees it: a keyword query, or a user's DID. */
export interface MatchInput {
  id: string;
  type: 'keyword' | 'user';
  /** The query (keyword) or the DID (user). */
  query: string;
}

/** What the matcher reads of a post. */
export interface MatchPost {
  did: string;
  text: string;
  /** The record's tags and tag-facet tags, as written. */
  tags: string[];
  /** A reply (`record.reply` set). */
  reply: boolean;
}

/** One term of a keyword query: consecutive words, or a tag. */
type Term = { words: string[] } | { tag: string };

interface Compiled {
  id: string;
  terms: Term[];
}

/** A compiled matcher: `match` answers the ids of the inputs a post matches, each once. */
export interface Matcher {
  match(post: MatchPost): string[];
  /** The ids of the inputs it serves (keyword inputs with at least one term, every user input). */
  readonly ids: ReadonlySet<string>;
}

const WORD = /[\p{L}\p{N}\p{M}_]+/gu;

/** The words of `text`, normalised (NFKC, lower case), in order. */
export function words(text: string): string[] {
  return text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
}

/** A tag, normalised: without its `#`, NFKC, lower case. */
function normalTag(tag: string): string {
  return tag.replace(/^#/, '').normalize('NFKC').toLowerCase();
}

/** The terms of a keyword query (see the module); empty when it has no word at all. */
export function parseQuery(query: string): Term[] {
  const terms: Term[] = [];
  for (const [, quoted, bare] of query.matchAll(/"([^"]*)"|(\S+)/g)) {
    if (bare?.startsWith('#') && bare.length > 1) {
      const tag = normalTag(bare);
      if (tag) terms.push({ tag });
      continue;
    }
    const w = words(quoted ?? bare ?? '');
    if (w.length) terms.push({ words: w });
  }
  return terms;
}

/** Whether `sequence` occurs in `tokens` as consecutive words. */
function hasPhrase(tokens: string[], sequence: string[]): boolean {
  outer: for (let i = 0; i + sequence.length <= tokens.length; i++) {
    for (let j = 0; j < sequence.length; j++) if (tokens[i + j] !== sequence[j]) continue outer;
    return true;
  }
  return false;
}

/** Compiles `inputs` into one matcher (see the module). */
export function compileMatcher(inputs: MatchInput[]): Matcher {
  const byWord = new Map<string, Compiled[]>();
  const byTag = new Map<string, Compiled[]>();
  const byDid = new Map<string, string[]>();
  const ids = new Set<string>();
  const file = <K>(map: Map<K, Compiled[]>, key: K, entry: Compiled) => {
    const list = map.get(key);
    if (list) list.push(entry);
    else map.set(key, [entry]);
  };
  for (const input of inputs) {
    if (input.type === 'user') {
      const list = byDid.get(input.query);
      if (list) list.push(input.id);
      else byDid.set(input.query, [input.id]);
      ids.add(input.id);
      continue;
    }
    const terms = parseQuery(input.query);
    const first = terms[0];
    if (!first) continue;
    const entry = { id: input.id, terms };
    if ('tag' in first) file(byTag, first.tag, entry);
    else file(byWord, first.words[0]!, entry);
    ids.add(input.id);
  }

  return {
    ids,
    match(post) {
      const found = new Set<string>();
      if (!post.reply) for (const id of byDid.get(post.did) ?? []) found.add(id);
      if (byWord.size === 0 && byTag.size === 0) return [...found];
      const tokens = words(post.text);
      const tokenSet = new Set(tokens);
      const tagSet = new Set(post.tags.map(normalTag));
      const has = (term: Term) => ('tag' in term ? tagSet.has(term.tag) : term.words.length === 1 ? tokenSet.has(term.words[0]!) : hasPhrase(tokens, term.words));
      const check = (candidates: Compiled[] | undefined) => {
        for (const candidate of candidates ?? []) if (!found.has(candidate.id) && candidate.terms.every(has)) found.add(candidate.id);
      };
      for (const token of tokenSet) check(byWord.get(token));
      for (const tag of tagSet) check(byTag.get(tag));
      return [...found];
    },
  };
}

/**
 * What the matcher reads of a Jetstream event (`{did, kind: 'commit', commit: {operation,
 * collection, record}}`): a post created or updated; null for anything else (other kinds,
 * collections, deletions).
 */
export function matchPostOf(event: Json): MatchPost | null {
  const commit = obj(event.commit);
  if (event.kind !== 'commit' || commit.collection !== 'app.bsky.feed.post' || (commit.operation !== 'create' && commit.operation !== 'update')) return null;
  const did = str(event.did);
  if (!did) return null;
  const record = obj(commit.record);
  const facetTags = arr(record.facets).flatMap((f) => arr(obj(f).features)).map(obj).filter((f) => f.$type === 'app.bsky.richtext.facet#tag').map((f) => str(f.tag));
  const tags = [...arr(record.tags).map(str), ...facetTags].filter((t) => t !== null);
  return { did, text: typeof record.text === 'string' ? record.text : '', tags, reply: record.reply !== undefined && record.reply !== null };
}
