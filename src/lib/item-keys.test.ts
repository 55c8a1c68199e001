/** What de-duplication compares of an item (item-keys.ts): its target, its URLs and its fingerprints. */
import { describe, expect, it } from 'vitest';
import type { ContentItem } from '../item.ts';
import { itemKeys, itemTarget, type OwnsEntries, PRINT_SPACES, printRows, probeRows, textKeys, titlePrinted, urlHash } from './item-keys.ts';
import { fromBandRow, spaceOf } from './simhash.ts';

/** What services/table.ts `ownsEntries` answers (a pure test: only the feed service, rss, owns its entries). */
const ownsEntries: OwnsEntries = (service) => service === 'rss';

const item = (over: Partial<ContentItem>): ContentItem => ({
  id: 'rss_1',
  service: 'rss',
  type: 'link',
  title: 'Scientists find a new species of deep sea octopus',
  text: '<p>Filmed at a depth of 4000 metres. See <a href="https://other.example.org/source">the paper</a></p>',
  tags: [],
  url: 'https://www.example.com/octopus?utm_source=rss',
  date: '2026-11-20T10:00:00.000Z',
  author: { name: 'A', username: 'a', userid: '1', url: 'https://example.com/authors/a' },
  media: null,
  kudos: { score: 0 },
  ...over,
});

describe('itemKeys', () => {
  it.each([
    // A feed entry is its own link, whatever its text links to.
    [item({}), ['https://example.com/octopus']],
    // A status is the article it shares, then its own page.
    [
      item({ service: 'twitter', type: 'status', text: 'Look <a href="https://example.com/octopus/?fbclid=x">example.com/octopus</a>', url: 'https://x.com/a/status/5', author: { name: null, username: 'a', userid: null, url: 'https://x.com/a' } }),
      ['https://example.com/octopus', 'https://twitter.com/i/status/5'],
    ],
    // A status without a link to another site is only itself.
    [item({ service: 'mastodon', type: 'status', text: '<a href="https://mastodon.social/tags/x">#x</a> hello', url: 'https://mastodon.social/@a/9', author: { name: null, username: 'a', userid: null, url: 'https://mastodon.social/@a' } }), ['https://mastodon.social/@a/9']],
    // Fallback URLs (a site's root, the author's page) are not compared.
    [item({ url: 'https://www.example.com/' }), []],
    [item({ service: 'vk', url: 'https://example.com/authors/a', text: '' }), []],
    // A video is its own target: the channel's boilerplate link under every video of the recorded
    // YouTube playlist (playlistItems_list_p1.json) merged ten different talks into one card.
    [
      item({ service: 'youtube', type: 'video', title: 'Welcome from Google Developers - Pittsburgh ML Summit ‘19', text: 'Kyle Paul, Regional Lead of North America at Google, opens the ML ‘19 Summit in Pittsburgh.<br><br>Subscribe to the Google Developers channel: <a href="https://goo.gle/339pgbR">https://goo.gle/339pgbR</a>', url: 'https://www.youtube.com/watch?v=CvTApw9X8aA', author: { name: 'Google Developers', username: null, userid: 'UC_x5XG1OV2P6uZZ5FSM9Ttw', url: 'https://www.youtube.com/channel/UC_x5XG1OV2P6uZZ5FSM9Ttw' } }),
      ['https://youtube.com/watch?v=CvTApw9X8aA'],
    ],
    // A feed entry without a link of its own falls back to the channel's page (every entry of the
    // recorded userland-rss092-description-only.rss): not compared; an enclosure's URL is.
    [item({ type: 'status', title: undefined, text: 'Kevin Drennan started a Grateful Dead Weblog.', url: 'http://www.scripting.com/blog/categories/gratefulDead.html' }), []],
    [
      item({ type: 'status', title: undefined, url: 'http://www.scripting.com/mp3s/weatherReportDicksPicsVol7.mp3', media: [{ type: 'embed', url: 'http://www.scripting.com/mp3s/weatherReportDicksPicsVol7.mp3', embed: '<audio controls src="http://www.scripting.com/mp3s/weatherReportDicksPicsVol7.mp3"></audio>' }] }),
      ['https://scripting.com/mp3s/weatherReportDicksPicsVol7.mp3'],
    ],
  ] as [ContentItem, string[]][])('%#: %j', (it_, urls) => {
    const keys = itemKeys(it_, 'url', ownsEntries);
    expect(keys.urls).toEqual(urls);
    expect(keys.urlHashes).toEqual(urls.map(urlHash));
    expect(keys.signatures).toEqual([]);
  });

  it('looks for the text among cards indexed by text and the title among all, and is indexed by the title; nothing in mode off', () => {
    const { title, text } = PRINT_SPACES;
    const keys = itemKeys(item({}), 'url+text', ownsEntries);
    expect(keys.signatures.map((s) => s.spaces)).toEqual([[text], [title, text]]);
    expect(keys.indexed).toEqual({ simhash: keys.signatures[1]!.simhash, space: title });
    // Untitled (or a title too short for a fingerprint): its whole text, among all cards, and indexed by it.
    for (const untitled of [itemKeys(item({ title: undefined }), 'url+text', ownsEntries), itemKeys(item({ title: 'Octopus found' }), 'url+text', ownsEntries)]) {
      expect(untitled.signatures.map((s) => s.spaces)).toEqual([[title, text]]);
      expect(untitled.indexed).toEqual({ simhash: untitled.signatures[0]!.simhash, space: text });
    }
    // A title without more text is one fingerprint, looked for among all cards.
    const bare = itemKeys(item({ text: '' }), 'url+text', ownsEntries);
    expect(bare.signatures.map((s) => s.spaces)).toEqual([[title, text]]);
    expect(itemKeys(item({ title: undefined, text: 'Too short' }), 'url+text', ownsEntries)).toMatchObject({ signatures: [] });
    expect(itemKeys(item({}), 'off', ownsEntries)).toEqual({ urls: [], urlHashes: [], signatures: [] });
  });

  it('fingerprints a titled item\'s whole text only when cards are indexed by whole text', () => {
    const { title, text } = PRINT_SPACES;
    // [item, spaces holding cards, spaces of the signatures looked for, space indexed in]
    const table: [ContentItem, number[], number[][], number][] = [
      [item({}), [title, text], [[text], [title, text]], title],
      [item({}), [title], [[title, text]], title],
      [item({}), [], [[title, text]], title],
      [item({ title: undefined }), [title], [[title, text]], text],
      [item({ title: 'Octopus found' }), [], [[title, text]], text],
    ];
    for (const [it, spaces, looked, indexed] of table) {
      const keys = textKeys(it, new Set(spaces));
      expect(keys.signatures.map((s) => s.spaces), `${it.title} in ${spaces}`).toEqual(looked);
      expect(keys.indexed?.space, `${it.title} in ${spaces}`).toBe(indexed);
      // The card is indexed by the same fingerprint whatever the spaces.
      expect(keys.indexed).toEqual(textKeys(it).indexed);
    }
    expect([item({}), item({ title: undefined }), item({ title: 'Octopus found' })].map(titlePrinted)).toEqual([true, false, false]);
  });

  it('indexes a card by four rows in its space and probes four rows per space of each signature', () => {
    const keys = itemKeys(item({}), 'url+text', ownsEntries);
    const rows = printRows(keys);
    expect(rows.map((row) => spaceOf(row.key))).toEqual([0, 0, 0, 0]);
    expect(rows.map((row) => fromBandRow(row.key, row.rest))).toEqual(Array(4).fill(keys.indexed!.simhash));
    expect(probeRows(keys.signatures[0]!).map((row) => spaceOf(row.key))).toEqual([1, 1, 1, 1]);
    expect(probeRows(keys.signatures[1]!).map((row) => spaceOf(row.key))).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    // The title's rows in space 0 are what the same title's probe finds there.
    expect(probeRows(keys.signatures[1]!).slice(0, 4)).toEqual(rows);
    const untitled = itemKeys(item({ title: undefined }), 'url+text', ownsEntries);
    expect(printRows(untitled).map((row) => spaceOf(row.key))).toEqual([1, 1, 1, 1]);
    expect(printRows({})).toEqual([]);
  });

  it('hashes a URL to 22 base64url characters', () => {
    expect(urlHash('https://example.com/a')).toMatch(/^[\w-]{22}$/);
    expect(urlHash('https://example.com/a')).not.toBe(urlHash('https://example.com/b'));
    expect(itemTarget(item({ service: 'rss' }), ownsEntries)).toBe('https://www.example.com/octopus?utm_source=rss');
  });

  it.each([
    ['a feed entry (its service owns its entries) is its own link', ownsEntries, 'https://www.example.com/octopus?utm_source=rss'],
    ["the same item of a service that shares links is the link of its text", (() => false) as OwnsEntries, 'https://other.example.org/source'],
  ])('the caller tells which items are entries: %s', (_name, owns, target) => {
    expect(itemTarget(item({}), owns)).toBe(target);
  });
});
