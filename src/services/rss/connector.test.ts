import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SourceError, type SourceFetch, type SourceInput, type SourceResponse } from '../connector.ts';
import type { ContentItem, Media } from '../../item.ts';
import { parseDate, parseFeed } from '../kit/feed.ts';
import { rss } from './connector.ts';
import { loadConfig } from '../../config.ts';
import { SERVICES } from '../table.ts';

const FIXTURES = new URL('../../../test/fixtures/rss/', import.meta.url);
const FEED_URL = 'https://example.org/feed.xml';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const fixture = (file: string) => readFileSync(new URL(file, FIXTURES));
const bytes = (text: string) => new TextEncoder().encode(text);
const parse = (file: string) => parseFeed(fixture(file), undefined, FEED_URL, NOW).items;

interface FixtureCase {
  file: string;
  /** `<item>` / `<entry>` elements in the file. */
  count: number;
  /** The entry checked by hand below. */
  index: number;
  fields: Partial<ContentItem>;
  author?: string | null;
  tag?: string;
  media?: Media;
  language: string | undefined;
}

// Every value below was read off the fixture file by hand.
const cases: FixtureCase[] = [
  { file: 'androidauthority-leading-blank-lines.rss', count: 1, index: 0, language: 'en',
    fields: { type: 'link', title: 'Japan’s plans for 5G include 10 billion 14-digit phone numbers',
      url: 'https://www.androidauthority.com/japan-phone-numbers-14-digits-5g-986823/', date: '2019-05-15T20:48:02.000Z' },
    author: 'Williams Pelegrin', tag: '5G',
    media: { type: 'image', url: 'https://cdn57.androidauthority.net/wp-content/uploads/2019/02/Whats-next-with-5g--500x260.jpg' } },
  { file: 'blogger-feedburner-atom.atom', count: 25, index: 16, language: undefined,
    fields: { title: 'New release schedule for AdWords API', date: '2016-01-12T10:56:00.000Z',
      url: 'http://feedproxy.google.com/~r/blogspot/lQlzL/~3/2o8ZNtoKrZc/new-release-schedule-for-adwords-api.html',
      location: { latitude: 37.3860517, longitude: -122.0838511, name: 'Mountain View, CA, USA' } },
    author: 'Google Ads Developer Advisor', tag: 'new_features' },
  // The channel's itunes:author is not copied onto the items, which name no author (RSS 2.0 spec).
  { file: 'cbn-podcast-bogus-encoding-decl.xml', count: 5, index: 0, language: 'pt',
    fields: { title: 'Arnaldo Jabor - O Comentário de Arnaldo Jabor - 29/10/2015 08h', date: '2015-10-29T11:17:52.000Z',
      url: 'http://cbn.globoradio.globo.com//comentaristas/arnaldo-jabor/2015/10/29/PECO-CIANURETO-OU-TACA-DE-CHAMPANHE.htm',
      text: 'Peço cianureto ou taça de champanhe?' },
    author: null,
    media: { type: 'embed', duration: 170.232,
      url: 'http://cbn.globoradio.globo.com/global/podcast.mp3?audio=2015/colunas/jabor_151029.mp3&materiaId=1229087&categoriaId=160',
      embed: '<audio controls src="http://cbn.globoradio.globo.com/global/podcast.mp3?audio=2015/colunas/jabor_151029.mp3&amp;materiaId=1229087&amp;categoriaId=160"></audio>' } },
  { file: 'fda-pubdate-wrapped-in-html-time.rss', count: 1, index: 0, language: 'en', author: 'FDA',
    fields: { date: '2019-05-03T19:21:28.000Z',
      title: 'Vivimed Life Sciences Pvt Ltd Issues Voluntary Nationwide Recall of Losartan Potassium 25 mg, 50 mg and 100 mg Tablets, USP Due to the Detection of Trace Amounts of N-Nitroso-N-methyl-4-aminobutyric acid (NMBA) Impurity',
      url: 'http://www.fda.gov/safety/recalls-market-withdrawals-safety-alerts/vivimed-life-sciences-pvt-ltd-issues-voluntary-nationwide-recall-losartan-potassium-25-mg-50-mg-and' } },
  { file: 'github-commits-atom.atom', count: 20, index: 0, language: 'en', author: 'cantino',
    fields: { title: 'Merge pull request #402 from albertsun/safer-liquid-migration', date: '2014-07-17T05:26:22.000Z',
      url: 'https://github.com/cantino/huginn/commit/d0a844662846cf3c83b94c637c1803f03db5a5b0' },
    media: { type: 'image', url: 'https://avatars3.githubusercontent.com/u/83835?s=30', width: 30, height: 30 } },
  { file: 'guardian-rss2-media-content.rss', count: 55, index: 0, language: 'en',
    fields: { title: 'Trump State of the Union address promised unity but emphasized discord', date: '2018-01-31T07:26:05.000Z',
      url: 'https://www.theguardian.com/us-news/2018/jan/31/donald-trump-state-of-the-union-address-unity-discord' },
    author: 'David Smith in Washington', tag: 'US politics',
    media: { type: 'image', width: 460,
      url: 'https://i.guim.co.uk/img/media/b73c8752cd4667c923dff7f1542f1fb20089e421/0_108_3000_1799/master/3000.jpg?w=460&q=55&auto=format&usm=12&fit=max&s=a606a273a90104e57b1e09bc4c0a1e11' } },
  { file: 'heise-atom.atom', count: 15, index: 0, language: undefined, author: 'heise online',
    fields: { title: 'Java-Anwendungsserver: Red Hat gibt WildFly 10 frei', date: '2016-02-01T16:22:00.000Z',
      url: 'http://www.heise.de/developer/meldung/Java-Anwendungsserver-Red-Hat-gibt-WildFly-10-frei-3088438.html?wt_mc=rss.developer.beitrag.atom' } },
  { file: 'jn-iso-8859-1-odd-dates.rss', count: 40, index: 0, language: 'pt', author: null, tag: 'Nacional',
    fields: { title: 'Mãe de utente é a nova presidente da Raríssimas', date: '2018-01-03T13:47:00.000Z',
      url: 'http://feeds.jn.pt/~r/JN-ULTIMAS/~3/UBnb8Ra3Q1U/sonia-laig-e-a-nova-presidente-da-rarissimas-9021600.html' } },
  { file: 'medium-content-encoded.rss', count: 7, index: 0, language: undefined, author: 'Jeremy Puma', tag: 'foraging',
    fields: { title: 'THE CREATIVE FORAGER', date: '2018-04-09T18:55:38.000Z',
      url: 'https://medium.com/invironment/the-creative-forager-125af37d838f?source=rss----d12c403d4976--food' } },
  { file: 'megaphone-podcast-itunes.rss', count: 1, index: 0, language: 'en', author: 'iHeartRadio',
    // No link: the item's url is its enclosure's.
    fields: { type: 'status', title: 'SYSK Selects: How Gold Works', date: '2020-03-07T10:00:00.000Z',
      url: 'https://www.podtrac.com/pts/redirect.mp3/chtbl.com/track/5899E/traffic.megaphone.fm/HSW3157672398.mp3' },
    media: { type: 'embed', duration: 3122,
      url: 'https://www.podtrac.com/pts/redirect.mp3/chtbl.com/track/5899E/traffic.megaphone.fm/HSW3157672398.mp3',
      embed: '<audio controls src="https://www.podtrac.com/pts/redirect.mp3/chtbl.com/track/5899E/traffic.megaphone.fm/HSW3157672398.mp3"></audio>' } },
  { file: 'motor-ru-media-image-video.rss', count: 1, index: 0, language: undefined, author: 'Александр Пономарев', tag: 'Новости',
    fields: { type: 'video', title: 'Kia сомневается в перспективах Stinger второго поколения', date: '2020-04-25T07:00:00.000Z',
      url: 'https://motor.ru/news/kia-stinger-future-25-04-2020.htm' },
    media: { type: 'embed', url: 'https://motor.media.eagleplatform.com/index/player?record_id=1410861',
      embed: '<video controls src="https://motor.media.eagleplatform.com/index/player?record_id=1410861"></video>' } },
  // `<author>foobar@gmail.com</author>`: an author given only as an e-mail address (RSS 2.0 spec).
  { file: 'narro-podcast-enclosure.rss', count: 1, index: 0, language: 'en', author: 'foobar@gmail.com',
    fields: { type: 'link', title: 'FAQ for Narro', date: '2015-02-20T09:51:15.000Z',
      url: 'https://www.narro.co/article/54e703933058540300000069' },
    media: { type: 'embed', duration: 74,
      url: 'https://s3.amazonaws.com/nareta-articles/audio/54d046c293f79c0300000003/7e2d2b00-a945-441a-f49b-063786a319a4.mp3',
      embed: '<audio controls src="https://s3.amazonaws.com/nareta-articles/audio/54d046c293f79c0300000003/7e2d2b00-a945-441a-f49b-063786a319a4.mp3"></audio>' } },
  // The items have no date: the feed's `03 Apr 02 1500 GMT` is used. The channel's managingEditor
  // is not the items' author.
  { file: 'oreilly-rss092-odd-date.rss', count: 2, index: 1, language: 'en', author: null,
    tag: 'Business/Industries/Publishing/Publishers/Nonfiction/',
    fields: { title: 'The Second Item', url: 'http://www.oreilly.com/example/002.html', date: '2002-04-03T15:00:00.000Z' },
    media: { type: 'embed', url: 'http://www.oreilly.com/002.mp3', embed: '<audio controls src="http://www.oreilly.com/002.mp3"></audio>' } },
  { file: 'sciencemag-rss1-rdf.rdf', count: 69, index: 0, language: undefined, author: 'Hines, P. J.', tag: 'Botany, Microbiology',
    fields: { title: 'Food for fungi', date: '2017-06-15T17:29:47.000Z',
      url: 'http://science.sciencemag.org/cgi/content/short/356/6343/1134-a?rss=1' } },
  // `Seg, 24 Set 2018 19:42:40 -0300`: Portuguese day and month names.
  { file: 'uol-no-xml-decl-latin1.rss', count: 15, index: 0, language: undefined, author: null,
    fields: { title: 'Ibope: Bolsonaro perde de Haddad, Ciro e Alckmin em simulações de 2º turno', date: '2018-09-24T22:42:40.000Z',
      url: 'https://noticias.uol.com.br/politica/eleicoes/2018/noticias/2018/09/24/ibope-bolsonaro-perde-de-haddad-ciro-e-alckmin-em-simulacoes-de-2-turno.htm',
      tags: [] } },
  // A standalone Atom Entry Document (RFC 4287 §4.1.2), read as a feed of one entry.
  { file: 'gdata-atom-entry-document.atom', count: 1, index: 0, language: undefined, author: 'Provider Host',
    fields: { type: 'link', title: 'Testing 2000 series laptop', text: 'A Testing Laptop', url: 'http://www.provider-host.com/123456789',
      date: '2006-11-14T18:30:02.000Z' }, tag: 'products' },
  // `08/02/2013 12:00:00`: no zone, read as UTC (month first, as Date.parse reads it).
  { file: 'norfolk-schools-zoneless-dates.rss', count: 5, index: 0, language: 'en', author: null, tag: 'news',
    fields: { title: 'Inspection of Private Fostering Service', date: '2013-08-02T12:00:00.000Z',
      url: 'https://csapps.norfolk.gov.uk/csshared/ecourier2/misheet.asp?misheetid=19176' } },
  // Relative URLs in the entry's HTML resolve against the feed's xml:base (XML Base).
  { file: 'tpm-style-relative-html.atom', count: 2, index: 0, language: 'en', author: 'Cameron Joseph',
    fields: { title: 'Hannity Announces Fox Has Hired Sebastian Gorka As NatSec Strategist', date: '2017-11-08T23:15:58.000Z',
      url: 'https://talkingpointsmemo.com/livewire/hannity-announces-fox-hired-sebastian-gorka-national-security-strategist' } },
  // Items with a description only (RSS 0.92: every item element is optional).
  { file: 'userland-rss092-description-only.rss', count: 4, index: 1, language: undefined, author: null,
    // No link, enclosure or guid: the item's url is the page of the feed (the channel's link).
    fields: { type: 'status', url: 'http://www.scripting.com/blog/categories/gratefulDead.html', date: '2001-04-13T19:23:02.000Z',
      text: 'Kevin Drennan started a <a href="http://deadend.editthispage.com/">Grateful Dead Weblog</a>. Hey it\'s cool, he even has a <a href="http://deadend.editthispage.com/directory/61">directory</a>. <i>A Frontier 7 feature.</i>' } },
  // media:thumbnail inside media:content (Media RSS spec 2.0 §5.7 allows it there).
  { file: 'wally-cms-media-content-thumbnail.rss', count: 1, index: 0, language: 'fr', author: 'Rédaction',
    fields: { type: 'video', title: 'Les images de la manifestation nationale à Bruxelles', date: '2011-11-09T13:32:00.000Z',
      url: 'http://www.example.be/videos/2011-11-09/les-images-de-la-manifestation-nationale' },
    media: { type: 'image', width: 480, height: 360, url: 'http://www.example.be/sites/default/files/imagecache/480x360/videos/manif-20111109.jpg' } },
  // The entity and media cases of issue 34 (more in kit/feed-html.test.ts).
  { file: 'issue34-entities-media.rss', count: 5, index: 2, language: undefined, author: null,
    fields: { type: 'video', title: 'A Vimeo film', date: '2025-06-12T08:00:00.000Z', url: 'https://vimeo.com/76979871' } },
  { file: 'issue34-xhtml-base.atom', count: 3, index: 0, language: undefined, author: null,
    fields: { type: 'link', title: 'A <b> tag as text', date: '2025-06-12T07:00:00.000Z', url: 'https://example.net/news/2025/prefixed.html' } },
  // RFC 6721 tombstones (more in kit/feed-tombstones.test.ts): three entries, one left out as deleted beside its tombstone.
  { file: 'rfc6721-tombstones.atom', count: 2, index: 0, language: undefined, author: 'John Doe',
    fields: { type: 'link', title: 'Atom-Powered Robots Run Amok', text: 'Some text.', date: '2003-12-13T18:30:02.000Z', url: 'http://example.org/2003/12/13/atom03' } },
];

describe('parseFeed: fixtures', () => {
  it('has a case for every fixture file', () => {
    expect(cases.map((c) => c.file).sort()).toEqual(readdirSync(FIXTURES).sort());
  });

  it.each(cases)('$file yields $count entries', ({ file, count, index, fields, author, tag, media, language }) => {
    const items = parse(file);
    expect(items).toHaveLength(count);
    const item = items[index]!;
    expect(item).toMatchObject({ service: 'rss', kudos: { score: 0, rss_score: 0 }, ...fields });
    if (author !== undefined) expect(item.author).toMatchObject({ name: author, username: null, userid: null });
    if (tag) expect(item.tags).toContain(tag);
    if (media) expect(item.media).toContainEqual(media);
    expect(item.language).toBe(language);
    expect(item).not.toHaveProperty('state');
  });

  it.each(cases)('$file: stable, unique ids; real dates', ({ file }) => {
    const items = parse(file);
    expect(parse(file).map((i) => i.id)).toEqual(items.map((i) => i.id));
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    for (const item of items) {
      expect(item.id).toMatch(/^rss_[0-9a-f]{32}$/);
      expect(item.date).not.toBe(NOW.toISOString());
      expect(new Date(item.date).toISOString()).toBe(item.date);
    }
  });

  it('reads dates without a zone as UTC whatever the host time zone', () => {
    const tz = process.env.TZ;
    try {
      for (const zone of ['America/New_York', 'Asia/Kolkata', 'UTC']) {
        process.env.TZ = zone;
        expect(parse('norfolk-schools-zoneless-dates.rss').map((i) => i.date)).toEqual(Array(5).fill('2013-08-02T12:00:00.000Z'));
        expect(parseDate('2019-05-15 20:48:02')?.toISOString()).toBe('2019-05-15T20:48:02.000Z');
        expect(parseDate('May 15, 2019 8:48 PM')?.toISOString()).toBe('2019-05-15T20:48:00.000Z');
        expect(parseDate('2019-05-15T20:48')?.toISOString()).toBe('2019-05-15T20:48:00.000Z');
        // A zone, when given, is kept.
        expect(parseDate('2019-05-15 20:48:02 +0200')?.toISOString()).toBe('2019-05-15T18:48:02.000Z');
        expect(parseDate('May 15, 2019 20:48 EST')?.toISOString()).toBe('2019-05-16T01:48:00.000Z');
        expect(parseDate('Wed May 15 2019 20:48:02 GMT+0200 (CEST)')?.toISOString()).toBe('2019-05-15T18:48:02.000Z');
      }
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it('resolves relative URLs in item HTML against xml:base, then the feed URL', () => {
    const [first, second] = parse('tpm-style-relative-html.atom');
    expect(first!.text).toContain('<a href="https://talkingpointsmemo.com/news/gorka-leaves-white-house">formerly deputy assistant</a>');
    expect(first!.text).toContain('<img src="https://talkingpointsmemo.com/images/gorka.jpg" alt="Gorka" />');
    expect(first!.text).toContain('<a href="https://www.mediamatters.org/video/2017/11/08/');
    // The content's own xml:base="/edblog/" applies inside it; other schemes are left alone.
    expect(second!.text).toContain('<a href="https://talkingpointsmemo.com/edblog/jobs">See the listing</a>');
    expect(second!.text).toContain('<a href="mailto:jobs@talkingpointsmemo.com">');
    // Without xml:base, the feed's own URL is the base.
    const [item] = parseFeed(bytes('<rss version="2.0"><channel><title>T</title><item><title>A</title><description>&lt;p&gt;&lt;a href="../b"&gt;b&lt;/a&gt; &lt;img src="//cdn.example.org/c.png" srcset="d.png 2x"&gt;&lt;/p&gt;</description></item></channel></rss>'),
      undefined, 'https://example.org/blog/feed.xml', NOW).items;
    expect(item!.text).toBe('<p><a href="https://example.org/b">b</a> <img src="https://cdn.example.org/c.png" srcset="https://example.org/blog/d.png 2x" /></p>');
    // HTML without relative URLs is returned as it came.
    expect(parse('medium-content-encoded.rss')[0]!.text).toMatch(/^<h4>Using Wild Ingredients in the\u00A0Kitchen<\/h4><figure>/);
  });

  it('reads media:description from a media:group when the entry has no content (YouTube)', () => {
    const { items } = parseFeed(readFileSync(new URL('../youtube/channel-videos-feed-atom.xml', FIXTURES)), 'application/atom+xml', FEED_URL, NOW);
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(item.text).not.toBe('');
    expect(items[0]!.media).toContainEqual(expect.objectContaining({ type: 'image', url: expect.stringMatching(/^https:\/\/i\d\.ytimg\.com\//) }));
  });

  it('reports dropped entries and entries dated by the feed or the poll', () => {
    expect(parseFeed(fixture('userland-rss092-description-only.rss'), undefined, FEED_URL, NOW).warnings).toEqual([
      { code: 'dropped', count: 1, message: '1 entry dropped: no guid, link, title, description or media to identify it' },
      { code: 'undated', count: 4, message: "4 entries have no readable date: dated with the feed's date" },
    ]);
    expect(parseFeed(fixture('heise-atom.atom'), undefined, FEED_URL, NOW).warnings).toEqual([]);
    const { items, warnings } = parseFeed(bytes('<rss version="2.0"><channel><title>T</title><item><guid>g</guid><title>A</title></item><item><guid>g</guid><title>B</title></item></channel></rss>'),
      undefined, FEED_URL, NOW);
    expect(items.map((i) => [i.title, i.date])).toEqual([['A', NOW.toISOString()]]);
    expect(warnings).toEqual([
      { code: 'dropped', count: 1, message: '1 entry dropped: the same guid or id as an earlier entry of the feed' },
      { code: 'undated', count: 1, message: '1 entry has no readable date: dated at the time of the poll' },
    ]);
  });

  it('refuses a truncated document rather than reading part of it', () => {
    const full = fixture('heise-atom.atom').toString('utf8');
    for (const cut of [0.25, 0.5, 0.9, 0.999]) {
      const body = bytes(full.slice(0, Math.floor(full.length * cut)));
      expect(() => parseFeed(body, undefined, FEED_URL, NOW), String(cut)).toThrow(/^not a feed: /);
    }
    const rss = fixture('guardian-rss2-media-content.rss').toString('utf8');
    expect(() => parseFeed(bytes(rss.slice(0, rss.lastIndexOf('</item>') + 7)), undefined, FEED_URL, NOW))
      .toThrow('not a feed: the document ends before its root element is closed (truncated?)');
  });

  it('takes the author url and the entry-level tags only', () => {
    expect(parse('github-commits-atom.atom')[0]!.author.url).toBe('https://github.com/cantino');
    // The channel's <category>Notícias</category> is not an entry tag.
    expect(parse('uol-no-xml-decl-latin1.rss').every((i) => i.tags.length === 0)).toBe(true);
  });

  it('prefers content:encoded to the description', () => {
    // The fixture has a no-break space before "Kitchen".
    expect(parse('medium-content-encoded.rss')[0]!.text).toMatch(/^<h4>Using Wild Ingredients in the\u00A0Kitchen<\/h4><figure>/);
  });

  it('falls back to windows-1252 when the declared charset does not fit the bytes', () => {
    const items = parseFeed(fixture('jn-iso-8859-1-odd-dates.rss'), 'application/rss+xml; charset=utf-8', FEED_URL, NOW).items;
    expect(items[0]!.title).toBe('Mãe de utente é a nova presidente da Raríssimas');
  });
});

describe('parseFeed: inline documents', () => {
  const rss2 = (items: string) =>
    bytes(`\uFEFF  <?xml version="1.0"?><rss version="2.0" xmlns:geo="http://www.w3.org/2003/01/geo/wgs84_pos#"><channel><title>T</title>${items}</channel></rss>`);

  it('resolves links against the feed URL, refuses other schemes, uses `now` without dates, keys description-only entries', () => {
    const items = parseFeed(rss2(`
      <item><title>Relative &amp; &lt;b&gt;bold&lt;/b&gt;</title><link>/a/1</link><geo:lat>52.5</geo:lat><geo:long>13.4</geo:long></item>
      <item><title>Script</title><link>javascript:alert(1)</link></item>
      <item><description>nothing to identify it</description></item>`), 'text/xml', FEED_URL, NOW).items;
    expect(items).toHaveLength(3);
    // No link of its own, and the channel names no page: the item's url is the feed's.
    expect(items[2]).toMatchObject({ type: 'status', url: FEED_URL, text: 'nothing to identify it' });
    // The title is text: its escaped `<b>` is text too (was 'Relative & bold': the entities decoded twice, issue 34).
    expect(items[0]).toMatchObject({ title: 'Relative & <b>bold</b>', url: 'https://example.org/a/1', type: 'link',
      date: NOW.toISOString(), location: { latitude: 52.5, longitude: 13.4 }, media: null, tags: [], text: '' });
    expect(items[1]).toMatchObject({ title: 'Script', url: FEED_URL, type: 'status' });
  });

  it('gives an entry without a link the URL of its enclosure, else its guid URL, else the page of the feed, else the feed', () => {
    const channel = (link: string, items: string) =>
      bytes(`<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>${link}${items}</channel></rss>`);
    const entries = `
      <item><title>Enclosure</title><enclosure url="/audio/1.mp3" type="audio/mpeg" length="1"/></item>
      <item><title>Guid</title><guid isPermaLink="false">https://example.org/posts/7</guid></item>
      <item><title>Tag guid</title><guid isPermaLink="false">tag:example.org,2024:8</guid></item>`;
    const withPage = parseFeed(channel('<link>https://example.org/blog/</link>', entries), 'text/xml', FEED_URL, NOW).items;
    expect(withPage.map((item) => item.url)).toEqual(['https://example.org/audio/1.mp3', 'https://example.org/posts/7', 'https://example.org/blog/']);
    expect(withPage.map((item) => item.type)).toEqual(['status', 'status', 'status']);
    const noPage = parseFeed(channel('', entries), 'text/xml', FEED_URL, NOW).items;
    expect(noPage[2]!.url).toBe(FEED_URL);
    const json = { version: 'https://jsonfeed.org/version/1.1', title: 'J', home_page_url: 'https://example.org/home', items: [{ id: 'x', content_text: 'hi' }] };
    expect(parseFeed(bytes(JSON.stringify(json)), 'application/feed+json', FEED_URL, NOW).items[0]!.url).toBe('https://example.org/home');
  });

  it('maps a JSON Feed 1.1 document', () => {
    const doc = {
      version: 'https://jsonfeed.org/version/1.1',
      title: 'J',
      language: 'de-DE',
      authors: [{ name: 'Feed Author', url: 'https://example.org/about' }],
      items: [
        { id: '1', url: 'https://example.org/1', title: 'One', content_html: '<p>Hi</p>', tags: ['a', 'b', 'a'],
          date_published: '2024-02-03T04:05:06+01:00', image: 'https://example.org/1.png',
          attachments: [{ url: 'https://example.org/1.mp3', mime_type: 'audio/mpeg', duration_in_seconds: 61 }] },
        { id: 2, content_text: 'a < b', date_modified: '2024-02-04T00:00:00Z', authors: [{ name: 'Item Author' }] },
      ],
    };
    const items = parseFeed(bytes(JSON.stringify(doc)), 'application/feed+json', FEED_URL, NOW).items;
    expect(items).toHaveLength(2);
    expect(items[0]).toMatchObject({
      type: 'link', title: 'One', text: '<p>Hi</p>', tags: ['a', 'b'], url: 'https://example.org/1', language: 'de',
      date: '2024-02-03T03:05:06.000Z', author: { name: 'Feed Author', username: null, userid: null, url: 'https://example.org/about' },
      media: [
        { type: 'image', url: 'https://example.org/1.png' },
        { type: 'embed', url: 'https://example.org/1.mp3', embed: '<audio controls src="https://example.org/1.mp3"></audio>', duration: 61 },
      ],
    });
    expect(items[1]).toMatchObject({ type: 'status', text: 'a &lt; b', url: FEED_URL, date: '2024-02-04T00:00:00.000Z',
      author: { name: 'Item Author' } });
    expect(items[1]!.id).not.toBe(items[0]!.id);
  });

  it.each([
    ['an HTML page', bytes('<!DOCTYPE html><html><head><title>Home</title></head><body><p>Hello</p></body></html>')],
    ['garbage bytes', new Uint8Array([0, 159, 146, 150, 255, 254, 1, 2, 60, 33])],
    ['an empty body', new Uint8Array()],
    ['JSON that is not a JSON Feed', bytes('{"hello": "world"}')],
    ['broken JSON', bytes('{"version": ')],
    ['an entry element outside the Atom namespace', bytes('<?xml version="1.0"?><entry><title>Not Atom</title><id>1</id></entry>')],
  ])('throws SourceError for %s', (_, body) => {
    expect(() => parseFeed(body, undefined, FEED_URL, NOW)).toThrow(SourceError);
    expect(() => parseFeed(body, undefined, FEED_URL, NOW)).toThrow(/^not a feed: /);
  });
});

describe('rss connector', () => {
  const input: SourceInput = { id: 'in_1', service: 'rss', type: 'feed', input: 'https://example.org/feed.xml' };
  const body = bytes('<rss version="2.0"><channel><title>T</title><item><guid>g1</guid><title>One</title><link>https://example.org/1</link></item></channel></rss>');

  /** A fake network edge answering every request with `res`, recording the requests. */
  function fakeFetch(res: Partial<SourceResponse>) {
    const calls: Array<{ url: string; headers: Record<string, string> | undefined }> = [];
    const fetch: SourceFetch = async (url, headers) => {
      calls.push({ url, headers });
      return { status: 200, headers: {}, body: new Uint8Array(), url, ...res };
    };
    return { ctx: { fetch, services: loadConfig({}).services, now: Date.now() }, calls };
  }

  it('is the rss/feed connector', () => {
    expect(rss.service).toBe('rss');
    expect(SERVICES[rss.service].types).toEqual(['feed']);
  });

  it('sends the validators from state; 304 returns no items and the old state', async () => {
    const { ctx, calls } = fakeFetch({ status: 304 });
    const state = { etag: '"v1"', lastModified: 'Wed, 21 Oct 2015 07:28:00 GMT' };
    await expect(rss.collect(input, state, ctx)).resolves.toEqual({ items: [], state });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe(input.input);
    expect(calls[0]!.headers).toMatchObject({ 'If-None-Match': '"v1"', 'If-Modified-Since': 'Wed, 21 Oct 2015 07:28:00 GMT' });
  });

  it('sends no validators without state', async () => {
    const { ctx, calls } = fakeFetch({ status: 200, body });
    await rss.collect(input, {}, ctx);
    expect(Object.keys(calls[0]!.headers ?? {})).not.toContain('If-None-Match');
    expect(Object.keys(calls[0]!.headers ?? {})).not.toContain('If-Modified-Since');
  });

  it('keeps the WebSub hub and topic a Link header names (docs/services.md#websub); none without a hub', async () => {
    const { ctx } = fakeFetch({ status: 200, body, headers: { link: '<https://hub.example/>; rel="hub", <https://example.org/topic>; rel="self"' } });
    expect((await rss.collect(input, {}, ctx)).state).toEqual({ websub: { hub: 'https://hub.example/', topic: 'https://example.org/topic' } });
    const plain = fakeFetch({ status: 200, body });
    expect((await rss.collect(input, {}, plain.ctx)).state).toEqual({});
  });

  it('200 returns the items and the new validators', async () => {
    const { ctx } = fakeFetch({
      status: 200, body, headers: { 'content-type': 'application/rss+xml', etag: '"v2"', 'last-modified': 'Thu, 22 Oct 2015 00:00:00 GMT' },
    });
    const result = await rss.collect(input, { etag: '"v1"' }, ctx);
    expect(result.state).toEqual({ etag: '"v2"', lastModified: 'Thu, 22 Oct 2015 00:00:00 GMT' });
    expect(result.items).toHaveLength(1);
    expect(result.items[0]).toMatchObject({ service: 'rss', title: 'One', url: 'https://example.org/1' });
  });

  it('404 throws SourceError', async () => {
    const { ctx } = fakeFetch({ status: 404 });
    const error = await rss.collect(input, {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ message: 'HTTP 404', retryAfterMs: undefined });
  });

  it.each([429, 503])('%i throws SourceError with retryAfterMs from Retry-After', async (status) => {
    const { ctx } = fakeFetch({ status, headers: { 'retry-after': '120' } });
    const error = await rss.collect(input, {}, ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SourceError);
    expect(error).toMatchObject({ message: `HTTP ${status}`, retryAfterMs: 120_000 });
  });

  it('a 200 that is not a feed throws SourceError', async () => {
    const { ctx } = fakeFetch({ status: 200, body: bytes('<html><body>Moved</body></html>') });
    await expect(rss.collect(input, {}, ctx)).rejects.toThrow(SourceError);
  });
});

describe("parseFeed: the feed's own title (docs/api.md#inputs, title)", () => {
  const cases: Array<[string, string, string | null]> = [
    ['RSS channel title', '<rss version="2.0"><channel><title>Election &amp; Night</title><item><title>A</title><link>https://e.org/a</link></item></channel></rss>', 'Election & Night'],
    ['Atom feed title with markup and spaces', '<feed xmlns="http://www.w3.org/2005/Atom"><title type="html">  &lt;b&gt;Live&lt;/b&gt;\n  desk </title><entry><id>a</id><title>A</title></entry></feed>', 'Live desk'],
    ['JSON Feed title', JSON.stringify({ version: 'https://jsonfeed.org/version/1.1', title: 'Wire', items: [{ id: 'a', content_text: 'x' }] }), 'Wire'],
    ['no title', '<rss version="2.0"><channel><item><title>A</title><link>https://e.org/a</link></item></channel></rss>', null],
    ['a title longer than 200 characters is cut', `<rss version="2.0"><channel><title>${'x'.repeat(500)}</title></channel></rss>`, 'x'.repeat(200)],
  ];
  it.each(cases)('%s', (_name, doc, title) => {
    expect(parseFeed(new TextEncoder().encode(doc), undefined, FEED_URL, NOW).title).toBe(title);
  });
});
