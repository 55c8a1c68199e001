/**
 * Feed documents as content items: RSS 0.9x / 1.0 (RDF) / 2.0, Atom (RFC 4287, feed and entry
 * documents) and JSON Feed 1.0/1.1 (https://www.jsonfeed.org/version/1.1/). XML is parsed by
 * @rowanmanning/feed-parser (over fast-xml-parser, whose validator tells a truncated document);
 * bytes are decoded here and JSON Feed is mapped here. The `rss` connector and Flickr's keyless
 * public feed read feeds through `parseFeed`, YouTube's keyless feed through `readXmlFeed`.
 * What is read, and what is reported in the input's status, is in docs/services.md#rss.
 */
import { hash } from 'node:crypto';
import { parseFeed as parseXml } from '@rowanmanning/feed-parser';
import { AtomFeed } from '@rowanmanning/feed-parser/lib/feed/atom.js';
import { Document } from '@rowanmanning/feed-parser/lib/xml/document.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { htmlText } from '../../lib/item-html.ts';
import sanitizeHtml from 'sanitize-html';
import type { ContentItem, Media } from '../../item.ts';
import { cleanHtml, EMBED_HOSTS } from '../../lib/sanitize.ts';
import { type PollWarning, SourceError } from '../connector.ts';
import { cutXmlEntries, MAX_FEED_ENTRIES, newestEntries } from './feed-entries.ts';
import { arr, embed, escapeHtml, httpUrl, itemUrl, type Json, language, linkify, num, obj, str } from './normalize.ts';

type XmlFeed = ReturnType<typeof parseXml>;
type XmlElement = XmlFeed['element'];
/** image, video, audio, or `player` (a Media RSS `media:player` page, kept only as an embed of a known player). */
type Kind = string | null;

/** What both paths (XML, JSON) take from one entry before it is normalized. */
interface Entry {
  key: string | null;
  title: string | null;
  /** HTML; relative URLs in it are resolved against `base` (then the feed URL) by `toItem`. */
  text: string;
  base: string | null;
  tags: string[];
  link: string | null;
  /** The page the feed belongs to (RSS channel `link`, Atom `link rel=alternate`, JSON Feed `home_page_url`). */
  page: string | null;
  date: Date | null;
  author: { name: string | null; url: string | null } | null;
  media: Array<{ url: string | null; kind: Kind; width?: number; height?: number; duration?: number }>;
  location?: ContentItem['location'];
  language: string | null;
  /** Atom `updated` (RFC 4287 §4.2.15), to weigh the entry against a tombstone of it in the same feed. */
  updated?: Date | null;
}

/** The namespace of Atom tombstones (RFC 6721 §3, `at:deleted-entry`). */
export const TOMBSTONES_NS = 'http://purl.org/atompub/tombstones/1.0';

/** An `at:deleted-entry` of a feed (RFC 6721 §3): the `atom:id` (or RSS guid) of the deleted entry, and when. */
export interface Tombstone {
  ref: string;
  when: Date | null;
}

/**
 * The item id of a feed entry whose identifying text is `key` (its guid or Atom id, else its link,
 * else …: `toItem`): `rss_` + the first 32 hex digits of SHA-256(key) (docs/api.md#item-ids).
 */
export function feedItemId(key: string): string {
  return `rss_${hash('sha256', key, 'hex').slice(0, 32)}`;
}

const MONTHS = ['jan ene gen', 'feb fev fév', 'mar mär mrz', 'apr abr avr', 'may mai mag', 'jun juin giu',
  'jul juil lug', 'aug ago aoû', 'sep set', 'oct out okt ott', 'nov', 'dec dez dic déc'];
const ZONES: Record<string, number> = { ut: 0, utc: 0, gmt: 0, z: 0, est: -5, edt: -4, cst: -6, cdt: -5,
  mst: -7, mdt: -6, pst: -8, pdt: -7, bst: 1, cet: 1, cest: 2 };
/** RFC 822/2822 and common variants: localized names, 2-digit years, `1500` times, no zone. */
const RFC822 =
  /^(?:[^\d\s,]+,?\s*)?(\d{1,2})\s+([^\d\s.,]+)\.?,?\s+(\d{2,4})(?:\s+(\d{1,2}):?(\d{2})(?::(\d{2}))?)?\s*([a-z]+|[+-]\d\d:?\d\d)?\s*$/i;

/** Plain text: tags removed, whitespace collapsed. */
const plain = (s: string | null) => s?.replace(/<\/?[a-z][^<>]*>/gi, '').replace(/\s+/g, ' ').trim() || null;


/**
 * A zone at the end of a date: `Z` or an offset after a time, or a zone name (`EST`, `GMT+0200
 * (CEST)`), but not `AM`/`PM`.
 */
const ZONED = /(?:\d[zZ]|:\d\d(?:\.\d+)?\s*[+-]\d\d(?::?\d\d)?|\s(?!(?:am|pm)\b)[a-z]{1,5}(?:[+-]\d\d:?\d\d)?(?:\s*\([^)]*\))?)\s*$/i;

/**
 * A date from RFC 822 text (variants too) or anything `Date.parse` reads; else null. A date
 * without a zone is read as UTC, never in the host's time zone (which `Date.parse` would use).
 */
export function parseDate(text: string | null | undefined): Date | null {
  // A zone offset cut to one minute digit (`+00:0`, seen in the wild) is read as its full form (`+00:00`).
  const s = text?.replace(/\s+/g, ' ').trim().replace(/([+-]\d\d):(\d)$/, (_, h: string, m: string) => `${h}:${m}0`);
  if (!s) return null;
  const m = RFC822.exec(s);
  const month = m ? MONTHS.findIndex((names) => names.split(' ').some((n) => m[2]!.toLowerCase().startsWith(n))) : -1;
  if (m && month >= 0) {
    let year = Number(m[3]);
    if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
    const zone = m[7] ?? 'gmt';
    const offset = /^[+-]/.test(zone)
      ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)))
      : (ZONES[zone.toLowerCase()] ?? 0) * 60;
    const t = Date.UTC(year, month, Number(m[1]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
    return new Date(t - offset * 60_000);
  }
  let t = Date.parse(s);
  if (Number.isNaN(t)) return null;
  if (!ZONED.test(s)) {
    // Read again with UTC named: `Z` after an ISO 8601 time, ` GMT` after any other form.
    const utc = Date.parse(/^\d{4}-\d\d-\d\dT[\d:.]+$/.test(s) ? `${s}Z` : `${s} GMT`);
    t = Number.isNaN(utc) ? t - new Date(t).getTimezoneOffset() * 60_000 : utc;
  }
  return new Date(t);
}

/**
 * `el`'s child elements named `name` (local name in lower case, as the parser's
 * `findElementsWithName` compares). The parser re-reads every child on each lookup, and an RSS
 * item is looked up here some twenty times: the children are grouped by name once per element,
 * kept while it lives. The array is shared: read it, never change it.
 */
function named(el: XmlElement, name: string): readonly XmlElement[] {
  let index = childIndex.get(el);
  if (!index) {
    index = new Map();
    for (const child of el.children) {
      if (typeof child === 'string') continue;
      const list = index.get(child.name);
      if (list) list.push(child);
      else index.set(child.name, [child]);
    }
    childIndex.set(el, index);
  }
  return index.get(name) ?? [];
}
const childIndex = new WeakMap<XmlElement, Map<string, XmlElement[]>>();

/** The first readable date among `el`'s children named `names` (an HTML `<time datetime>` wins). */
function firstDate(el: XmlElement, names: string[]): Date | null {
  for (const child of names.flatMap((n) => named(el, n))) {
    const date = parseDate(named(child, 'time')[0]?.getAttribute('datetime') ?? child.textContent);
    if (date) return date;
  }
  return null;
}

/** Seconds from `hh:mm:ss`, `mm:ss` or plain seconds (itunes:duration). */
const duration = (s: string | null | undefined) =>
  num(s?.trim() ? s.trim().split(':').reduce((acc, part) => acc * 60 + Number(part), 0) : undefined);

/** The media kind (image, video, audio) from a MIME type or Media RSS medium, else guessed from the URL. */
function kindOf(type: string | null, url: string | null): Kind {
  const kind = type?.toLowerCase().split('/')[0];
  if (kind === 'image' || kind === 'video' || kind === 'audio' || kind === 'player') return kind;
  if (/\.(jpe?g|png|gif|webp|avif)([?#]|$)/i.test(url ?? '')) return 'image';
  if (/\.(mp4|m4v|webm|mov)([?#]|$)/i.test(url ?? '')) return 'video';
  return /\.(mp3|m4a|aac|oga|ogg|opus|wav)([?#]|$)/i.test(url ?? '') ? 'audio' : null;
}

/**
 * Media RSS content (also in groups), enclosures (RSS, Atom), media:thumbnail (of the item, its
 * groups and its media:content, as the Media RSS spec allows), itunes:image, in that order.
 */
function xmlMedia(el: XmlElement): Entry['media'] {
  const ns = (e: XmlElement, prefix: string, uri: RegExp) => e.namespace === prefix || uri.test(e.namespaceUri ?? '');
  const mrss = (e: XmlElement) => ns(e, 'media', /search\.yahoo\.com\/mrss/);
  const scopes = [el, ...named(el, 'group').filter(mrss)];
  const contents = scopes.flatMap((s) => named(s, 'content').filter(mrss));
  const itunes = duration(named(el, 'duration').find((e) => ns(e, 'itunes', /itunes/))?.textContent);
  const sized = (e: XmlElement) => ({ width: num(e.getAttribute('width')), height: num(e.getAttribute('height')) });
  const found: Array<Omit<Entry['media'][number], 'kind'> & { type: string | null }> = [
    ...contents.map((e) => ({
      url: e.getAttributeAsUrl('url'), type: e.getAttribute('medium') ?? e.getAttribute('type'), ...sized(e),
      duration: num(e.getAttribute('duration')) })),
    ...named(el, 'enclosure')
      .map((e) => ({ url: e.getAttributeAsUrl('url'), type: e.getAttribute('type') })),
    ...named(el, 'link').filter((e) => e.getAttribute('rel') === 'enclosure')
      .map((e) => ({ url: e.getAttributeAsUrl('href'), type: e.getAttribute('type') })),
    ...[...scopes, ...contents].flatMap((s) => named(s, 'thumbnail').filter(mrss))
      .map((e) => ({ url: e.getAttributeAsUrl('url'), type: 'image', ...sized(e) })),
    ...named(el, 'image').filter((e) => ns(e, 'itunes', /itunes/))
      .map((e) => ({ url: e.getAttributeAsUrl('href'), type: 'image' })),
    ...[...scopes, ...contents].flatMap((s) => named(s, 'player').filter(mrss))
      .map((e) => ({ url: e.getAttributeAsUrl('url'), type: 'player', ...sized(e) })),
  ];
  return found.map(({ type, ...m }) => {
    const kind = kindOf(type, m.url);
    return { ...m, kind, duration: m.duration ?? (kind === 'video' || kind === 'audio' ? itunes : undefined) };
  });
}

/** GeoRSS Simple `georss:point` ("lat lon", with `georss:featurename`) or W3C `geo:lat`/`geo:long`. */
function xmlLocation(el: XmlElement): ContentItem['location'] {
  const geo = (name: string) => named(el, name)
    .find((e) => ['georss', 'geo'].includes(String(e.namespace)) || /georss|wgs84_pos/.test(e.namespaceUri ?? ''))
    ?.textContent.trim();
  const point = geo('point')?.split(/[\s,]+/);
  const [latitude, longitude] = (point ?? [geo('lat'), geo('long')]).map(num);
  if (latitude === undefined || longitude === undefined) return undefined;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return undefined;
  const name = plain(geo('featurename') ?? null);
  return name ? { latitude, longitude, name } : { latitude, longitude };
}

/** The options @rowanmanning/feed-parser 2.1.5 gives fast-xml-parser (`lib/xml/document.js`). */
const xmlParser = new XMLParser({
  attributeNamePrefix: '',
  ignoreAttributes: false,
  ignoreDeclaration: true,
  parseTagValue: false,
  preserveOrder: true,
  trimValues: false,
  processEntities: { maxTotalExpansions: Infinity },
});

const PREDEFINED: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

/**
 * `xml` with its numeric character references (`&#8217;`, `&#x2019;`) written as the characters
 * they stand for (XML 1.0 §4.1), outside CDATA sections and comments; a reference to `<`, `>`,
 * `&`, `"` or `'` becomes the predefined entity. fast-xml-parser, as @rowanmanning/feed-parser
 * configures it, decodes only the predefined entities: this makes its one decoding complete.
 */
export function decodeCharacterReferences(xml: string): string {
  if (!xml.includes('&#')) return xml;
  return xml.split(/(<!\[CDATA\[[\s\S]*?\]\]>|<!--[\s\S]*?-->)/).map((part, i) => (i % 2 ? part
    : part.replace(/&#(?:x([\da-f]{1,6})|(\d{1,7}));/gi, (ref, hex: string | undefined, dec: string | undefined) => {
      const code = hex ? parseInt(hex, 16) : Number(dec);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return ref;
      const ch = String.fromCodePoint(code);
      return PREDEFINED[ch] ?? ch;
    }))).join('');
}

/**
 * An RSS or Atom document read by @rowanmanning/feed-parser; a standalone Atom Entry Document
 * (RFC 4287 §4.1.2, root `entry`) is read as a feed of that one entry.
 *
 * @throws SourceError `not a feed: …` when the document ends before its root element is closed
 *   (a truncated download: fast-xml-parser's validator finds open elements at the end; other
 *   well-formedness faults are left to the tolerant parser), or when it is neither RSS nor Atom.
 */
export function readXmlFeed(xml: string): XmlFeed {
  const text = decodeCharacterReferences(xml);
  // The two errors fast-xml-parser 5.12.1's validator (src/validator.js) gives when elements are
  // still open at the end of the text: one (`Unclosed tag 'x'.`) or several (`Invalid '[…]' found.`).
  const check = XMLValidator.validate(text);
  if (check !== true && (/^Unclosed tag /.test(check.err.msg) || /^Invalid '\[.*\]' found\.$/s.test(check.err.msg))) {
    throw new SourceError('not a feed: the document ends before its root element is closed (truncated?)');
  }
  try {
    return parseXml(text);
  } catch (err) {
    const raw = xmlParser.parse(text) as Array<Record<string, unknown>>;
    const entry = new Document(raw).findElementWithName('entry');
    if (entry?.namespaceUri !== 'http://www.w3.org/2005/Atom') {
      throw new SourceError(`not a feed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    // The entry document's nodes become the children of a feed element without metadata.
    return new AtomFeed(new Document([{ feed: raw }]));
  }
}

/**
 * The entry's own authors (RSS `author`, `dc:creator`, `itunes:author`): an RSS channel's
 * `managingEditor` is not the author of its items (RSS 2.0 spec). In Atom an entry without
 * `author` takes its `source`'s, else the feed's (RFC 4287 §4.2.1). A name, else the e-mail
 * address, is the author's name.
 */
function entryAuthor(item: XmlFeed['items'][number], atom: boolean): Entry['author'] {
  const el = item.element;
  let authors = item.authors;
  if (!atom && !named(el, 'author').length && !named(el, 'creator').length) authors = [];
  if (atom && !named(el, 'author').length) {
    const source = el.findElementWithName('source')?.findElementsWithName('author') ?? [];
    const fromSource = source.map((a) => ({ name: a.findElementWithName('name')?.textContentNormalized || null,
      email: a.findElementWithName('email')?.textContentNormalized || null, url: a.findElementWithName('uri')?.textContentAsUrl || null }));
    if (fromSource.length) authors = fromSource;
  }
  const author = authors.find((a) => a.name) ?? authors.find((a) => a.email) ?? authors[0];
  return author && (author.name || author.email || author.url) ? { name: author.name ?? author.email, url: author.url } : null;
}

/**
 * An element's text with its entities decoded once, by the XML parser. @rowanmanning/feed-parser's
 * `textContentNormalized` and `innerHtml` decode entities a second time (html-entities over text
 * fast-xml-parser has already decoded), so `&amp;lt;canvas&amp;gt;` became a `<canvas>` tag: they are not
 * used for titles and text.
 */
const textOf = (e: XmlElement | null | undefined) => e?.textContent.trim() ?? '';

/** Elements HTML writes without an end tag. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

/**
 * XHTML (Atom `type="xhtml"`, RFC 4287 §4.1.3) as HTML: elements and attributes lose their
 * namespace prefixes (`<h:p>` → `<p>`), namespace declarations are dropped, text and attribute
 * values are escaped again (the XML parser decoded them once).
 */
function xhtmlToHtml(nodes: ReadonlyArray<XmlElement | string>): string {
  return nodes.map((node) => {
    if (typeof node === 'string') return escapeHtml(node);
    const attrs = Object.entries(node.attributes)
      .filter(([name]) => name !== 'xmlns' && !name.startsWith('xmlns:') && !name.startsWith('xml:'))
      .map(([name, value]) => ` ${name.slice(name.indexOf(':') + 1)}="${escapeHtml(value)}"`).join('');
    const name = node.name;
    return VOID.has(name) ? `<${name}${attrs}>` : `<${name}${attrs}>${xhtmlToHtml(node.children)}</${name}>`;
  }).join('');
}

/**
 * The HTML of an Atom text construct (RFC 4287 §3.1: `type` text, the default, html or xhtml):
 * text is escaped, html is the element's text (decoded once), xhtml is its `div`'s content.
 */
function atomHtml(e: XmlElement): string {
  const type = e.getAttribute('type')?.trim().toLowerCase() ?? 'text';
  if (type === 'xhtml') {
    const div = named(e, 'div')[0];
    return xhtmlToHtml(div ? div.children : e.children).trim();
  }
  return type === 'html' || type === 'text/html' ? textOf(e) : escapeHtml(textOf(e));
}

/**
 * A title as plain text, its entities decoded once: RSS titles are text (`The &lt;canvas&gt;
 * element` is the text `The <canvas> element`), so is an Atom title unless typed html or xhtml
 * (RFC 4287 §3.1), whose text is its HTML's text.
 */
function titleText(el: XmlElement, atom: boolean): string | null {
  const title = named(el, 'title')[0];
  if (!title) return null;
  const type = atom ? title.getAttribute('type')?.trim().toLowerCase() : undefined;
  const text = type === 'html' || type === 'xhtml' ? htmlText(atomHtml(title)) : textOf(title).replace(/\s+/g, ' ');
  return text || null;
}

/**
 * The entry's HTML and the element it came from (for its `xml:base`): content (content:encoded,
 * atom:content), else description/summary, else Media RSS `media:description` of the entry or its
 * `media:group` (plain text unless `type="html"`, Media RSS spec), as YouTube's feed has it.
 * RSS `description` and `content:encoded` are HTML; Atom content and summary are read by their
 * `type` (`atomHtml`). Entities are decoded once, by the XML parser (`textOf`).
 */
function entryText(item: XmlFeed['items'][number], atom: boolean): { text: string; from: XmlElement | null } {
  const el = item.element;
  const mrss = (e: XmlElement) => e.namespace === 'media' || /search\.yahoo\.com\/mrss/.test(e.namespaceUri ?? '');
  const own = (name: string) => named(el, name).filter((e) => !mrss(e));
  for (const from of atom ? [own('content')[0], own('summary')[0]] : [own('encoded')[0], own('description')[0]]) {
    const text = from ? (atom ? atomHtml(from) : textOf(from)) : '';
    if (from && text) return { text, from };
  }
  const media = [el, ...named(el, 'group').filter(mrss)]
    .flatMap((s) => named(s, 'description').filter(mrss))
    .find((d) => textOf(d));
  if (!media) return { text: '', from: null };
  const value = textOf(media);
  // Plain text is indented by pretty-printing (YouTube): each line is trimmed.
  return { text: media.getAttribute('type') === 'html' ? value : linkify(value.replace(/[ \t]*\n[ \t]*/g, '\n')), from: media };
}

/**
 * The tombstones of a feed read by `readXmlFeed`: its `at:deleted-entry` children (RFC 6721 §3;
 * of the channel in RSS) in the namespace TOMBSTONES_NS, with their `ref` trimmed (required: one
 * without is skipped) and their `when` read as `parseDate` reads dates (null when unreadable).
 */
export function tombstonesOf(feed: XmlFeed): Tombstone[] {
  return named(feed.element, 'deleted-entry')
    .filter((e) => e.namespaceUri === TOMBSTONES_NS)
    .flatMap((e): Tombstone[] => {
      const ref = e.getAttribute('ref')?.trim();
      return ref ? [{ ref, when: parseDate(e.getAttribute('when')) }] : [];
    });
}

/** RSS/Atom entries via @rowanmanning/feed-parser, plus the feed's own date (the entries' fallback). */
function xmlEntries(text: string): { entries: Entry[]; tombstones: Tombstone[]; feedDate: Date | null; links: FeedLinks; title: string | null } {
  const feed = readXmlFeed(text);
  // Each item's url, authors and categories getters read the feed's again, and each of those
  // scans every child of the channel (the items too): read once, kept on the feed object.
  for (const key of ['url', 'authors', 'categories'] as const) Object.defineProperty(feed, key, { value: feed[key] });
  const feedLanguage = feed.language;
  const atom = feed.meta.type === 'atom';
  const entries = feed.items.map((item): Entry => {
    const el = item.element;
    const guid = named(el, 'guid')[0] ?? null;
    // RSS 2.0: a guid is the item's permalink unless isPermaLink="false".
    const permalink = guid !== null && guid.getAttribute('ispermalink') !== 'false' && /^https?:\/\//i.test(item.id ?? '');
    const ownTags = named(el, 'category').length > 0 || named(el, 'subject').length > 0;
    const { text, from } = entryText(item, atom);
    return {
      key: item.id,
      title: titleText(el, atom),
      text,
      base: (from ?? el).baseUrl,
      tags: ownTags ? item.categories.map((c) => c.label ?? c.term) : [],
      link: item.url ?? (permalink ? item.id : null),
      page: feed.url,
      date: firstDate(el, ['pubdate', 'published', 'issued', 'date', 'created', 'updated', 'modified']),
      author: entryAuthor(item, atom),
      media: xmlMedia(el),
      location: xmlLocation(el),
      language: feedLanguage,
      updated: atom ? firstDate(el, ['updated']) : null,
    };
  });
  const tombstones = tombstonesOf(feed);
  const feedDate = firstDate(feed.element, ['pubdate', 'published', 'date', 'lastbuilddate', 'updated', 'modified']);
  // WebSub discovery (W3C WebSub §4): `<link rel="hub">` and `rel="self"`, Atom's own or atom:link in an RSS channel.
  const linksWith = (rel: string) => named(feed.element, 'link')
    .filter((e) => e.getAttribute('rel')?.trim().toLowerCase().split(/\s+/).includes(rel))
    .map((e) => e.getAttributeAsUrl('href')).filter((u): u is string => !!u);
  return { entries, tombstones, feedDate, links: { hubs: linksWith('hub'), self: linksWith('self')[0] ?? null }, title: titleText(feed.element, atom) };
}

/** JSON Feed 1.0/1.1 items (`author` of 1.0, `authors` and `language` of 1.1). */
function jsonEntries(text: string): { entries: Entry[]; links: FeedLinks; title: string | null } {
  const feed = obj(JSON.parse(text));
  if (!/jsonfeed\.org\/version\//.test(str(feed.version) ?? '') || !Array.isArray(feed.items)) {
    throw new SourceError('not a feed: JSON document without a JSON Feed version and items');
  }
  // JSON Feed `hubs`: `{type, url}`, WebSub ones typed `WebSub` (JSON Feed 1.1, "Subscribing to Real-time Notifications").
  const hubs = arr(feed.hubs).map(obj).filter((h) => str(h.type)?.toLowerCase() === 'websub').map((h) => str(h.url)).filter((u): u is string => !!u);
  const entries = feed.items.map(obj).map((it): Entry => {
    const author = obj(arr(it.authors)[0] ?? it.author ?? arr(feed.authors)[0] ?? feed.author);
    const contentText = str(it.content_text);
    return {
      key: str(it.id) ?? (typeof it.id === 'number' ? String(it.id) : null),
      title: str(it.title),
      text: str(it.content_html) ?? (contentText ? escapeHtml(contentText) : null) ?? str(it.summary) ?? '',
      base: null,
      page: str(feed.home_page_url),
      tags: arr(it.tags).map(str).filter((t) => t !== null),
      link: str(it.url) ?? str(it.external_url),
      date: parseDate(str(it.date_published)) ?? parseDate(str(it.date_modified)),
      author: str(author.name) || str(author.url) ? { name: str(author.name), url: str(author.url) } : null,
      media: [
        ...[it.image, it.banner_image].map((url) => ({ url: str(url), kind: 'image' })),
        ...arr(it.attachments).map(obj).map((a) => ({
          url: str(a.url), kind: kindOf(str(a.mime_type), str(a.url)), duration: num(a.duration_in_seconds) })),
      ],
      language: str(it.language) ?? str(feed.language),
    };
  });
  return { entries, links: { hubs, self: str(feed.feed_url) }, title: str(feed.title) };
}

/** An image or an `<audio>`/`<video>` embed (URL escaped for the attribute); other kinds are dropped. */
function toMedia({ url, kind, width, height, duration }: Entry['media'][number]): Media[] {
  if (!url) return [];
  if (kind === 'image') {
    return [{ type: 'image', url, ...(width !== undefined && { width }), ...(height !== undefined && { height }) }];
  }
  if (kind === 'player') return playerEmbed(url);
  return kind === 'video' || kind === 'audio' ? embed(kind, url, { duration }) : [];
}

/**
 * A Media RSS `media:player` page as an `<iframe>` embed when it is an https page of a known player
 * (`EMBED_HOSTS`, the players the wall frames); a YouTube watch page becomes its embed URL. Any
 * other player is dropped (its page is not ours to frame).
 */
function playerEmbed(url: string): Media[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  if (/^(www\.|m\.)?youtube\.com$/.test(u.hostname) && u.pathname === '/watch' && u.searchParams.get('v')) {
    u = new URL(`https://www.youtube.com/embed/${encodeURIComponent(u.searchParams.get('v')!)}`);
  } else if (u.hostname === 'youtu.be' && u.pathname.length > 1) {
    u = new URL(`https://www.youtube.com/embed${u.pathname}`);
  } else if (u.hostname === 'vimeo.com' && /^\/\d+$/.test(u.pathname)) {
    u = new URL(`https://player.vimeo.com/video${u.pathname}`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return [];
  u.protocol = 'https:';
  if (!(EMBED_HOSTS as readonly string[]).includes(u.hostname)) return [];
  return embed('iframe', u.href, { url });
}

/** The bytes as text: BOM, else `charset`, else the XML declaration, else UTF-8; windows-1252 if that fails. */
function decode(body: Uint8Array, contentType: string | undefined): string {
  const head = new TextDecoder('windows-1252').decode(body.subarray(0, 1024));
  const bom = head.startsWith('\xEF\xBB\xBF') ? 'utf-8'
    : head.startsWith('\xFF\xFE') ? 'utf-16le' : head.startsWith('\xFE\xFF') ? 'utf-16be' : null;
  let label = bom ?? /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? '')?.[1]
    ?? /^\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']+)/.exec(head)?.[1] ?? 'utf-8';
  if (!bom && /^utf-?16/i.test(label)) label = 'utf-8'; // an ASCII-readable document is not UTF-16
  try {
    return new TextDecoder(label, { fatal: true }).decode(body);
  } catch {
    return new TextDecoder('windows-1252').decode(body);
  }
}

/** Attributes that hold one URL (HTML 4.01 §6.4 and HTML's `poster`); `srcset` holds a list. */
const URL_ATTRIBUTES = ['href', 'src', 'poster', 'cite', 'longdesc', 'background'];
const ABSOLUTE = /^[a-z][a-z\d+.-]*:/i;

/**
 * `html` with relative URLs in its attributes resolved against `base` (the entry's `xml:base`,
 * itself resolved against the feed URL; XML Base, RFC 3986 §5), as feed readers must before the
 * HTML is shown elsewhere. Re-serialized by sanitize-html with every tag and attribute allowed
 * (sanitizing follows, with the one allow-list: `lib/sanitize.ts`); returned unchanged when
 * nothing was relative.
 */
function absoluteHtml(html: string, base: string): string {
  if (!/<[a-z]/i.test(html)) return html;
  let changed = false;
  const resolve = (value: string) => {
    const v = value.trim();
    if (!v || ABSOLUTE.test(v)) return value;
    try {
      changed = true;
      return new URL(v, base).href;
    } catch {
      return value;
    }
  };
  const out = sanitizeHtml(html, {
    allowedTags: false,
    allowedAttributes: false,
    allowVulnerableTags: true,
    allowedSchemes: ['http', 'https', 'ftp', 'mailto', 'tel', 'data'],
    transformTags: {
      '*': (tagName, attribs) => {
        const next = { ...attribs };
        for (const name of URL_ATTRIBUTES) if (typeof next[name] === 'string') next[name] = resolve(next[name]);
        if (typeof next.srcset === 'string') {
          next.srcset = next.srcset.split(',').map((c) => c.trim().replace(/^\S+/, (u) => resolve(u))).join(', ');
        }
        return { tagName, attribs: next };
      },
    },
  });
  return changed ? out : html;
}

/**
 * The WebSub links a feed names of itself (W3C WebSub §4): its hubs (`rel="hub"`, JSON Feed
 * `hubs` of type WebSub) and its topic URL (`rel="self"`, JSON Feed `feed_url`), absolute.
 */
export interface FeedLinks {
  hubs: string[];
  self: string | null;
}

/** What a feed gave: its items, what had to be dropped or made up (docs/api.md#input-status), its WebSub links. */
export interface FeedResult {
  items: ContentItem[];
  /**
   * The item ids (`feedItemId` of each `ref`) of the entries the feed says were deleted (Atom
   * tombstones, RFC 6721 §3), each once, at most `maxEntries`; none in JSON Feed.
   */
  deleted: string[];
  warnings: PollWarning[];
  links: FeedLinks;
  /** The feed's own title (RSS `channel/title`, Atom `feed/title`, JSON Feed `title`) as plain text, at most `MAX_FEED_TITLE` characters; null when it has none. */
  title: string | null;
}

/** Most characters of a feed's title kept (docs/api.md#inputs, `title`). */
export const MAX_FEED_TITLE = 200;

/**
 * Parses a feed document into content items (pure but for the `now` default).
 *
 * - `body`: the raw bytes; `contentType`: the `Content-Type` header (its `charset` wins over the
 *   XML declaration; unknown labels and bytes that do not decode fall back to windows-1252).
 * - Formats: RSS 0.9x/1.0 (RDF)/2.0, Atom (RFC 4287) feed and entry documents, JSON Feed 1.0/1.1;
 *   GeoRSS locations.
 * - `feedUrl`: the document's URL; relative links, and relative URLs in the entry's HTML, resolve
 *   against the entry's `xml:base` and then it. Only http(s) URLs are kept as links.
 * - `now`: the date given to entries when neither the entry nor the feed has a readable date.
 * - Items: `id` is `rss_` + the first 32 hex digits of SHA-256(guid/id, else link, else title and
 *   date, else description and date, else the first media URL). `type` is `video` when a media
 *   is video, else `link` when there is a link, else `status`.
 * - `maxEntries`: at most this many entries are read, the newest by their own date (undated ones
 *   last), in document order (`feed-entries.ts`; an XML document is cut down before it is parsed).
 * - Deletions: the `ref` of each Atom tombstone (`at:deleted-entry`, RFC 6721 §3) of the feed (of
 *   the channel in RSS) as an item id (`deleted`). An entry with a tombstone in the same document
 *   is left out unless its Atom `updated` is later than the tombstone's `when`. An entry that is
 *   simply no longer in the feed is not a deletion (docs/services.md#rss).
 * - Warnings: entries left out past `maxEntries` are counted (`dropped`); so are entries with none
 *   of those (or an id seen before in the document); entries without a readable date of their own
 *   are counted (`undated`).
 *
 * @throws SourceError `not a feed: …` when the document is neither an RSS/Atom nor a JSON feed,
 *   or is truncated (`readXmlFeed`).
 */
export function parseFeed(
  body: Uint8Array, contentType: string | undefined, feedUrl: string, now: Date = new Date(), maxEntries = MAX_FEED_ENTRIES,
): FeedResult {
  const text = decode(body, contentType).replace(/^[\s\uFEFF]+/, '');
  let entries: Entry[];
  let feedDate: Date | null = null;
  let links: FeedLinks;
  let title: string | null;
  let total: number;
  let tombstones: Tombstone[] = [];
  try {
    if (text.startsWith('{')) ({ entries, links, title } = jsonEntries(text));
    else {
      const cut = cutXmlEntries(text, maxEntries, parseDate);
      ({ entries, tombstones, feedDate, links, title } = xmlEntries(cut.text));
      // The entries cut out, and those the tree parser read (an entry the cut did not count as one is capped below).
      total = cut.total - cut.kept + entries.length;
    }
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError(`not a feed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  total ??= entries.length;
  entries = newestEntries(entries.map((e) => e.date?.getTime() ?? null), maxEntries).map((i) => entries[i]!);
  // Each deleted entry once (the latest `when` of its tombstones; unreadable: no entry outweighs it), at most `maxEntries`.
  const deletedAt = new Map<string, number>();
  for (const { ref, when } of tombstones) {
    const id = feedItemId(ref);
    if (!deletedAt.has(id) && deletedAt.size >= maxEntries) continue;
    deletedAt.set(id, Math.max(deletedAt.get(id) ?? -Infinity, when?.getTime() ?? Infinity));
  }
  const seen = new Set<string>();
  let anonymous = 0;
  let repeated = 0;
  let undated = 0;
  const items = entries.flatMap((entry) => {
    const item = toItem(entry, feedDate ?? now, feedUrl);
    if (!item) anonymous++;
    else if (seen.has(item.id)) repeated++;
    if (!item || seen.has(item.id)) return [];
    seen.add(item.id);
    // An entry and a tombstone of it in one feed (RFC 6721 §3): the entry stands only when
    // updated after the deletion (published again); else it is left out, deleted.
    const deletion = deletedAt.get(item.id);
    if (deletion !== undefined) {
      if ((entry.updated?.getTime() ?? -Infinity) <= deletion) return [];
      deletedAt.delete(item.id);
    }
    if (!entry.date) undated++;
    return [item];
  });
  const warnings: PollWarning[] = [];
  const capped = total - entries.length;
  if (capped > 0) {
    warnings.push({ code: 'dropped', count: capped,
      message: `${capped} ${capped === 1 ? 'entry' : 'entries'} dropped: the feed holds ${total} entries and at most ${maxEntries} are read per poll (the newest)` });
  }
  if (anonymous) {
    warnings.push({ code: 'dropped', count: anonymous,
      message: `${anonymous} ${anonymous === 1 ? 'entry' : 'entries'} dropped: no guid, link, title, description or media to identify ${anonymous === 1 ? 'it' : 'them'}` });
  }
  if (repeated) {
    warnings.push({ code: 'dropped', count: repeated,
      message: `${repeated} ${repeated === 1 ? 'entry' : 'entries'} dropped: the same guid or id as an earlier entry of the feed` });
  }
  if (undated) {
    warnings.push({ code: 'undated', count: undated,
      message: `${undated} ${undated === 1 ? 'entry has' : 'entries have'} no readable date: dated ${feedDate ? "with the feed's date" : 'at the time of the poll'}` });
  }
  return { items, deleted: [...deletedAt.keys()], warnings, links, title: plain(title)?.slice(0, MAX_FEED_TITLE) ?? null };
}

/** One normalized item, or null when nothing identifies the entry (see `parseFeed`). */
function toItem(e: Entry, fallbackDate: Date, feedUrl: string): ContentItem | null {
  const title = e.title?.replace(/\s+/g, ' ').trim() || null;
  const link = httpUrl(e.link, feedUrl);
  const bySrc = new Map<string, Entry['media'][number]>(); // one per URL: the first says, later ones fill in
  for (const m of e.media) {
    const src = httpUrl(m.url, feedUrl);
    const p = src ? bySrc.get(src) : undefined;
    if (src) {
      bySrc.set(src, { url: src, kind: p?.kind ?? m.kind, width: p?.width ?? m.width, height: p?.height ?? m.height,
        duration: p?.duration ?? m.duration });
    }
  }
  const date = e.date?.toISOString() ?? '';
  const key = e.key ?? link ?? (title ? `${title}\n${date}` : null) ?? (e.text.trim() ? `\n${e.text}\n${date}` : null)
    ?? bySrc.keys().next().value ?? null;
  if (!key) return null;
  const media = [...bySrc.values()].flatMap(toMedia);
  const lang = language(e.language);
  // Relative URLs in the HTML resolve as the item's link does: `xml:base`, else the channel's link, else the feed's URL.
  const base = httpUrl(e.base ?? e.page ?? feedUrl, feedUrl) ?? httpUrl(feedUrl);
  return {
    id: feedItemId(key),
    service: 'rss',
    type: media.some((m) => m.type === 'embed' && /^<(video|iframe)\b/.test(m.embed)) ? 'video' : link ? 'link' : 'status',
    ...(title && { title }),
    // Sanitized here, at collection, with the wall's allow-list (lib/sanitize.ts): what is stored and served is safe.
    text: cleanHtml(base ? absoluteHtml(e.text, base) : e.text),
    tags: [...new Set(e.tags.map((t) => t.trim()).filter(Boolean))],
    // No link of its own: an enclosure's, else a guid that is a URL, else the feed's page, else the feed.
    url: itemUrl(link, ...bySrc.keys(), e.key, httpUrl(e.page, feedUrl), feedUrl),
    date: (e.date ?? fallbackDate).toISOString(),
    author: { name: e.author?.name ?? null, username: null, userid: null, url: httpUrl(e.author?.url, feedUrl) },
    media: media.length ? media : null,
    kudos: { score: 0, rss_score: 0 },
    ...(e.location && { location: e.location }),
    ...(lang && { language: lang }),
  };
}
