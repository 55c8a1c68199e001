/**
 * Atom tombstones (RFC 6721 §3, `at:deleted-entry`; docs/services.md#rss, "Deletions"): which
 * entries a feed document says were deleted, as the item ids its entries have or had
 * (`feedItemId` of the guid / Atom id, else the link). Pure: `parseFeed` over bytes, as tables.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { feedItemId, parseFeed, TOMBSTONES_NS } from './feed.ts';

const FIXTURES = new URL('../../../test/fixtures/rss/', import.meta.url);
const FEED_URL = 'https://example.org/feed.xml';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const bytes = (text: string) => new TextEncoder().encode(text);
const read = (text: string, maxEntries?: number) => parseFeed(bytes(text), undefined, FEED_URL, NOW, maxEntries);

const atom = (body: string) => `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:at="${TOMBSTONES_NS}"><title>F</title><id>urn:f</id>${body}</feed>`;
const rss = (body: string) => `<?xml version="1.0"?><rss version="2.0" xmlns:at="${TOMBSTONES_NS}"><channel><title>F</title><link>https://example.org/</link>${body}</channel></rss>`;
const entry = (id: string, updated = '2020-01-01T00:00:00Z') => `<entry><id>${id}</id><title>${id}</title><updated>${updated}</updated><link href="https://example.org/${encodeURIComponent(id)}"/></entry>`;

describe('the RFC 6721 example feed (hand-written after its §3 example)', () => {
  const feed = parseFeed(readFileSync(new URL('rfc6721-tombstones.atom', FIXTURES)), undefined, FEED_URL, NOW);

  it('names the deleted entries by the item ids they were stored under; entries deleted after their update are left out', () => {
    expect(feed.deleted).toEqual([feedItemId('urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a'), feedItemId('urn:uuid:adf3c5b2-2e14-4bb4-9b1c-4e4bdb1c2a10')]);
    // The entry listed beside its own tombstone (updated before `when`) is not an item; the one
    // updated after the deletion (published again) is, and is not deleted.
    expect(feed.items.map((i) => i.title)).toEqual(['Atom-Powered Robots Run Amok', 'Published again']);
    expect(feed.items[0]!.id).toBe(feedItemId('urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6b'));
  });
});

describe('deleted: the ids a later poll or push removes', () => {
  it.each([
    ['an Atom tombstone: the id its entry had', atom(`<at:deleted-entry ref="tag:example.org,2026:1" when="2026-01-01T00:00:00Z"/>`), [feedItemId('tag:example.org,2026:1')]],
    ['an RSS channel tombstone: the guid its item had', rss(`<at:deleted-entry ref="post-17" when="2026-01-01T00:00:00Z"/>`), [feedItemId('post-17')]],
    ['the ref is trimmed, as the id is', atom(`<at:deleted-entry ref="  urn:x  " when="2026-01-01T00:00:00Z"/>`), [feedItemId('urn:x')]],
    ['the namespace as default namespace', atom(`<deleted-entry xmlns="${TOMBSTONES_NS}" ref="urn:d" when="2026-01-01T00:00:00Z"/>`), [feedItemId('urn:d')]],
    ['the same ref twice: once', atom(`<at:deleted-entry ref="urn:a" when="2026-01-01T00:00:00Z"/><at:deleted-entry ref="urn:a" when="2026-01-02T00:00:00Z"/>`), [feedItemId('urn:a')]],
    ['no ref: nothing', atom(`<at:deleted-entry when="2026-01-01T00:00:00Z"/><at:deleted-entry ref="  "/>`), []],
    ['another namespace: nothing', atom(`<x:deleted-entry xmlns:x="http://example.org/x" ref="urn:a"/>`), []],
    ['no namespace: nothing', atom(`<deleted-entry xmlns="" ref="urn:a"/>`), []],
    ['inside an entry, not the feed: nothing', atom(`<entry><id>urn:e</id><title>e</title><at:deleted-entry ref="urn:a"/></entry>`), []],
    ['an entry that left the feed is not a deletion', atom(entry('urn:kept')), []],
    ['JSON Feed has none', JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'F', items: [{ id: 'urn:a', content_text: 'x' }] }), []],
  ])('%s', (_name, text, deleted) => expect(read(text).deleted).toEqual(deleted));

  it('an RSS item without guid is named by its link: a tombstone of that link is its id', () => {
    const feed = read(rss(`<item><title>t</title><link>https://example.org/p/1</link></item>`));
    expect(read(rss(`<at:deleted-entry ref="https://example.org/p/1" when="2026-01-01T00:00:00Z"/>`)).deleted).toEqual([feed.items[0]!.id]);
  });

  it.each([
    ['updated before the deletion: deleted', '2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', false],
    ['updated at the deletion: deleted', '2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z', false],
    ['updated after the deletion: published again', '2026-03-01T00:00:00Z', '2026-02-01T00:00:00Z', true],
    ['a tombstone without a readable when: deleted', '2026-03-01T00:00:00Z', 'yesterday-ish', false],
  ])('an entry beside its own tombstone, %s', (_name, updated, when, stands) => {
    const feed = read(atom(`${entry('urn:e', updated)}<at:deleted-entry ref="urn:e" when="${when}"/>`));
    expect(feed.items.map((i) => i.id)).toEqual(stands ? [feedItemId('urn:e')] : []);
    expect(feed.deleted).toEqual(stands ? [] : [feedItemId('urn:e')]);
  });

  it('is bounded: at most maxEntries tombstones a document, the first ones', () => {
    const many = Array.from({ length: 5 }, (_, i) => `<at:deleted-entry ref="urn:${i}" when="2026-01-01T00:00:00Z"/>`).join('');
    expect(read(atom(many), 2).deleted).toEqual([feedItemId('urn:0'), feedItemId('urn:1')]);
  });
});
