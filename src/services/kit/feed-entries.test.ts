import { describe, expect, it } from 'vitest';
import { SourceError } from '../connector.ts';
import { parseDate, parseFeed } from './feed.ts';
import { cutXmlEntries, MAX_FEED_ENTRIES, newestEntries } from './feed-entries.ts';
import { readFeed } from './feed-pool.ts';

const FEED_URL = 'https://example.org/feed';
const NOW = new Date('2026-11-23T12:00:00Z');
const bytes = (s: string) => new TextEncoder().encode(s);
const day = (d: number) => `Mon, ${String(d).padStart(2, '0')} Nov 2026 06:00:00 GMT`;
/** An RSS 2.0 document of `items` (each guid `g<n>`, dated day n of November 2026 unless n is null). */
const rss = (days: (number | null)[], extra = '') =>
  `<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>${extra}${days.map((d, i) => `<item><guid>g${i}</guid>${d === null ? '' : `<pubDate>${day(d)}</pubDate>`}</item>`).join('')}</channel></rss>`;
const guids = (items: { url: string }[]) => items.map((item) => item.url.replace(/^.*\//, ''));

describe('newestEntries', () => {
  it.each([
    { dates: [1, 2, 3], max: 5, keep: [0, 1, 2] },
    { dates: [1, 3, 2, 5, 4], max: 2, keep: [3, 4] },
    { dates: [null, 1, null, 2], max: 3, keep: [0, 1, 3] },
    { dates: [null, null, null], max: 2, keep: [0, 1] },
    { dates: [7, 7, 7, 7], max: 2, keep: [0, 1] },
    { dates: [1, 2], max: 0, keep: [] },
  ])('$dates, at most $max → $keep', ({ dates, max, keep }) => {
    expect(newestEntries(dates, max)).toEqual(keep);
  });
});

describe('cutXmlEntries', () => {
  it.each([
    { name: 'RSS 2.0, channel > item', doc: rss([1, 5, 3, 4]), total: 4, kept: ['g1', 'g3'] },
    { name: 'RSS 1.0, rdf:RDF > item', doc: `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title></channel>${[3, 1, 2].map((d, i) => `<item rdf:about="https://e.org/${i}"><title>t${i}</title><link>https://e.org/g${i}</link><dc:date>2026-11-0${d}T00:00:00Z</dc:date></item>`).join('')}</rdf:RDF>`, total: 3, kept: ['g0', 'g2'] },
    { name: 'Atom, feed > entry, published before updated', doc: `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>${[[1, 9], [3, 3], [2, 2]].map(([p, u], i) => `<entry><id>g${i}</id><updated>2026-11-0${u}T00:00:00Z</updated><published>2026-11-0${p}T00:00:00Z</published></entry>`).join('')}</feed>`, total: 3, kept: ['g1', 'g2'] },
    { name: 'entries in comments and CDATA are text', doc: rss([1, 2, 3], '<!-- <item><guid>x</guid></item> --><description><![CDATA[<item><guid>y</guid></item>]]></description>'), total: 3, kept: ['g1', 'g2'] },
    { name: 'an item inside an entry is not one', doc: rss([1, 2, 3]).replace('<guid>g0</guid>', '<guid>g0</guid><item><guid>z</guid></item>'), total: 3, kept: ['g1', 'g2'] },
  ])('$name', ({ doc, total, kept }) => {
    const cut = cutXmlEntries(doc, 2, parseDate);
    expect(cut).toMatchObject({ total, kept: 2 });
    expect([...cut.text.matchAll(/(?:<guid>|<id>|\/)(g\d+)</g)].map((m) => m[1])).toEqual(kept);
  });

  it('leaves a document with at most `max` entries as it is', () => {
    const doc = rss([1, 2]);
    expect(cutXmlEntries(doc, 2, parseDate)).toEqual({ text: doc, total: 2, kept: 2 });
  });

  it('keeps the unclosed tail of a truncated document, which still fails as truncated', () => {
    const doc = rss([1, 2, 3, 4]);
    const truncated = doc.slice(0, doc.lastIndexOf('</pubDate>'));
    const cut = cutXmlEntries(truncated, 2, parseDate);
    expect(cut.total).toBe(3);
    expect(cut.text.endsWith(truncated.slice(truncated.lastIndexOf('<item>')))).toBe(true);
    expect(() => parseFeed(bytes(truncated), undefined, FEED_URL, NOW, 2)).toThrow(/^not a feed: the document ends before its root element is closed/);
  });
});

describe('parseFeed: at most maxEntries entries, the newest', () => {
  it('keeps the newest in document order and says how many were dropped', () => {
    const { items, warnings } = parseFeed(bytes(rss([1, 5, null, 3, 4])), undefined, FEED_URL, NOW, 3);
    expect(items.map((item) => item.id)).toEqual(parseFeed(bytes(rss([1, 5, null, 3, 4])), undefined, FEED_URL, NOW).items.filter((_, i) => [1, 3, 4].includes(i)).map((item) => item.id));
    expect(items.map((item) => item.date)).toEqual(['2026-11-05T06:00:00.000Z', '2026-11-03T06:00:00.000Z', '2026-11-04T06:00:00.000Z']);
    expect(warnings).toEqual([{ code: 'dropped', count: 2, message: '2 entries dropped: the feed holds 5 entries and at most 3 are read per poll (the newest)' }]);
  });

  it('bounds JSON Feed the same way', () => {
    const doc = { version: 'https://jsonfeed.org/version/1.1', title: 'T', items: [1, 4, 2, 3].map((d, i) => ({ id: `g${i}`, url: `https://e.org/g${i}`, date_published: `2026-11-0${d}T00:00:00Z` })) };
    const { items, warnings } = parseFeed(bytes(JSON.stringify(doc)), 'application/feed+json', FEED_URL, NOW, 2);
    expect(guids(items)).toEqual(['g1', 'g3']);
    expect(warnings).toEqual([{ code: 'dropped', count: 2, message: '2 entries dropped: the feed holds 4 entries and at most 2 are read per poll (the newest)' }]);
  });

  it(`reads ${MAX_FEED_ENTRIES} entries by default; no warning at the bound`, () => {
    expect(parseFeed(bytes(rss(Array.from({ length: MAX_FEED_ENTRIES }, () => 1))), undefined, FEED_URL, NOW).warnings).toEqual([]);
    const over = parseFeed(bytes(rss(Array.from({ length: MAX_FEED_ENTRIES + 1 }, () => 1))), undefined, FEED_URL, NOW);
    expect(over.items).toHaveLength(MAX_FEED_ENTRIES);
    expect(over.warnings).toEqual([{ code: 'dropped', count: 1, message: `1 entry dropped: the feed holds ${MAX_FEED_ENTRIES + 1} entries and at most ${MAX_FEED_ENTRIES} are read per poll (the newest)` }]);
  });
});

describe('readFeed: in a worker thread, bounded', () => {
  it('answers as parseFeed does', async () => {
    const doc = bytes(rss([1, 5, 3, 4]));
    expect(await readFeed(doc, undefined, FEED_URL, NOW, { maxEntries: 2 })).toEqual(parseFeed(doc, undefined, FEED_URL, NOW, 2));
  });

  it('refuses what is not a feed with the SourceError parseFeed gives', async () => {
    await expect(readFeed(bytes('<html><body>no</body></html>'), 'text/html', FEED_URL, NOW)).rejects.toThrow(SourceError);
    await expect(readFeed(bytes('<html><body>no</body></html>'), 'text/html', FEED_URL, NOW)).rejects.toThrow(/^not a feed: /);
  });

  it('cuts off a read past its time limit, and reads the next document', async () => {
    const big = bytes(rss(Array.from({ length: 200_000 }, (_, i) => 1 + (i % 28))));
    await expect(readFeed(big, undefined, FEED_URL, NOW, { limitMs: 20 })).rejects.toThrow(new SourceError('not read: the feed took longer than 20 ms to read'));
    expect((await readFeed(bytes(rss([1, 2])), undefined, FEED_URL, NOW)).items).toHaveLength(2);
  });
});
