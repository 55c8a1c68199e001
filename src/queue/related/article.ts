/**
 * Reading an article for related content (docs/api.md#related-content): its robots.txt, then the
 * page, through the guarded fetch the process is given (collect/fetch.ts `createFetcher`: no
 * private addresses unless ALLOW_PRIVATE_FETCH, every redirect hop checked, time and size
 * limits), then its main text with Mozilla's Readability (the extraction of Firefox's Reader View)
 * on a linkedom document.
 *
 * Outcomes as the interface's error object, naming `q`:
 * - robots.txt disallows the path for `sluice` (RFC 9309, lib/robots.ts) → 422 saying so; a
 *   robots.txt answering 4xx allows everything, 5xx or unreachable disallows everything (RFC 9309 §2.3.1.3, §2.3.1.4);
 * - the page answers 404 or 410 → 404; another error status, a timeout, a network failure or too
 *   many redirects → 502;
 * - an address (or redirect) to a non-public address, a body over the size limit, a page that is
 *   not HTML (Content-Type), or one with no readable text → 422.
 */
import { parseHTML } from 'linkedom';
import { Readability } from '@mozilla/readability';
import { LRUCache } from 'lru-cache';
import { notFoundError, unprocessableError, upstreamError, type ApiError } from '../../errors.ts';
import { robotsAllows } from '../../lib/robots.ts';

/** The guarded fetch (collect/fetch.ts `createFetcher`'s function, given by app.ts): GET `url` → status, lower-case headers, body, final URL; throws its FetchError (`kind`). */
export type ArticleFetch = (url: string, headers?: Record<string, string>) => Promise<{ status: number; headers: Record<string, string>; body: Uint8Array; url: string }>;

/** An article's title and main text (plain text, whitespace collapsed). */
export interface Article {
  title: string;
  text: string;
}

/** Fewest characters of main text an article must have. */
export const MIN_TEXT_CHARS = 80;
/** robots.txt answers kept per origin (ms). */
const ROBOTS_TTL_MS = 10 * 60_000;

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;

/** The ApiError of a failed fetch (a FetchError of collect/fetch.ts, read by its `kind`). */
function fetchFailure(error: unknown, what: string): ApiError {
  const kind = (error as { kind?: string }).kind;
  if (kind === 'blocked') return unprocessableError(`${what} leads to a non-public address, which Sluice does not fetch.`, 'q');
  if (kind === 'too_large') return unprocessableError(`${what} is larger than Sluice reads.`, 'q');
  if (kind === 'timeout') return upstreamError(`${what} did not answer in time.`, 'q');
  return upstreamError(`${what} could not be fetched (${kind ?? 'network'}).`, 'q');
}

/** A reader of articles through `fetch`, keeping robots.txt answers per origin for 10 minutes. */
export function createArticleReader(fetch: ArticleFetch): { read(url: URL): Promise<Article> } {
  const robots = new LRUCache<string, { allowAll: boolean; disallowAll: boolean; text: string }>({ max: 1000, ttl: ROBOTS_TTL_MS });

  async function robotsOf(url: URL) {
    const cached = robots.get(url.origin);
    if (cached) return cached;
    let entry: { allowAll: boolean; disallowAll: boolean; text: string };
    try {
      const response = await fetch(`${url.origin}/robots.txt`, { accept: 'text/plain' });
      if (response.status >= 200 && response.status < 300) entry = { allowAll: false, disallowAll: false, text: Buffer.from(response.body).toString('utf8') };
      else if (response.status >= 400 && response.status < 500) entry = { allowAll: true, disallowAll: false, text: '' };
      else entry = { allowAll: false, disallowAll: true, text: '' };
    } catch (error) {
      if ((error as { kind?: string }).kind === 'blocked') throw fetchFailure(error, 'The article address');
      entry = { allowAll: false, disallowAll: true, text: '' };
    }
    robots.set(url.origin, entry);
    return entry;
  }

  return {
    async read(url) {
      const rules = await robotsOf(url);
      if (rules.disallowAll) throw unprocessableError(`The robots.txt of ${url.host} could not be read, which RFC 9309 reads as disallowing every page; Sluice did not read the article.`, 'q');
      if (!rules.allowAll && !robotsAllows(rules.text, `${url.pathname}${url.search}`)) {
        throw unprocessableError(`The robots.txt of ${url.host} disallows Sluice from reading this article.`, 'q');
      }
      let response: Awaited<ReturnType<ArticleFetch>>;
      try {
        response = await fetch(url.href, { accept: 'text/html,application/xhtml+xml' });
      } catch (error) {
        throw fetchFailure(error, 'The article');
      }
      if (response.status === 404 || response.status === 410) throw notFoundError(`The article does not exist: ${url.host} answered ${response.status}.`, 'q');
      if (response.status < 200 || response.status >= 300) throw upstreamError(`The article could not be read: ${url.host} answered ${response.status}.`, 'q');
      const type = response.headers['content-type'] ?? '';
      if (!HTML_TYPES.test(type)) throw unprocessableError(`The article is not an HTML page (Content-Type ${type.split(';')[0] || 'none'}).`, 'q');
      const html = Buffer.from(response.body).toString('utf8');
      const { document } = parseHTML(html);
      const parsed = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
      const text = (parsed?.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (text.length < MIN_TEXT_CHARS) throw unprocessableError('The article has no readable text.', 'q');
      const title = (parsed?.title ?? document.title ?? '').replace(/\s+/g, ' ').trim();
      return { title, text };
    },
  };
}
