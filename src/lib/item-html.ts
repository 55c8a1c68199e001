/**
 * A content item made inert for serving (docs/api.md#content-item; issue 30): whatever markup the
 * source sent, and however its entities were decoded on the way in, what the queue, content and
 * stream API send (and the publication is given) holds no script, no event handler and no
 * `javascript:` (or any other non-web) URL. Stored items keep the source's text; this runs where
 * a stored row becomes the served item (`store/items/rows.ts` `rowToItem`), whose JSON the read path
 * keeps per item and version (queue/read-path.ts), so an item is cleaned once per process, not
 * once per read.
 *
 * - `text` and `media[].embed`: HTML through sanitize-html (an allow-list parser built on
 *   htmlparser2) with the structure a source sends kept — sanitize-html's default tags (headings,
 *   paragraphs, lists, tables, quotes, inline formatting), plus images and, in embeds only,
 *   players (`iframe`, `video`, `audio`, `source` with https URLs). Attributes: only `href`,
 *   `name`, `title` on links, `src`, `alt`, `title`, `width`, `height` on images and the
 *   players' own. URLs: http, https, mailto and tel (https only for players); any other scheme
 *   (`javascript:`, `data:`, `vbscript:`) is removed, however it is spaced or cased. Scripts,
 *   styles, forms and every `on…` attribute go, the content of `<script>` and `<style>` too. Text
 *   whose every `<` opens a tag that is inert as written (`inertAsWritten`: plain text, and the
 *   common paragraphs, links and images) is returned as is, costing a scan.
 * - `title` and a medium's `alt` are plain text, so `<canvas>` in one is text (issue 34): tags are
 *   removed (repeatedly, so `<scr<b>ipt>` leaves no `<script>`), then any `<` still opening a tag,
 *   except a tag of an inert element written without attributes (`TEXT_TAG_NAMES`: `<b>`,
 *   `<canvas>`, `</p>`), which neither runs nor loads anything even where a title is put into HTML.
 * - `url` (else an empty string), `author.url` (else null) and the URL of a medium must be
 *   absolute http(s) URLs, or for an image an inline `data:image/…` one (an image without either
 *   is left out); so must a duplicate's `url`. Children likewise.
 *
 * The publication applies its own narrower allow-list on top (`lib/sanitize.ts`, which feeds also apply at collection). Pure.
 */
import { Parser as HtmlParser } from 'htmlparser2';
import sanitizeHtml from 'sanitize-html';
import type { ContentItem, Media } from '../item.ts';

const TEXT_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img'],
  allowedAttributes: { a: ['href', 'name', 'title'], img: ['src', 'alt', 'title', 'width', 'height'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
};

const EMBED_OPTIONS: sanitizeHtml.IOptions = {
  ...TEXT_OPTIONS,
  allowedTags: [...(TEXT_OPTIONS.allowedTags as string[]), 'iframe', 'video', 'audio', 'source'],
  allowedAttributes: {
    ...TEXT_OPTIONS.allowedAttributes,
    iframe: ['src', 'width', 'height', 'title', 'allow', 'allowfullscreen', 'loading', 'referrerpolicy', 'sandbox'],
    video: ['src', 'poster', 'width', 'height', 'controls', 'preload', 'playsinline', 'muted', 'loop'],
    audio: ['src', 'controls', 'preload', 'loop', 'muted'],
    source: ['src', 'type'],
  },
  allowedSchemesByTag: { iframe: ['https'], video: ['https'], audio: ['https'], source: ['https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite', 'poster'],
  allowIframeRelativeUrls: false,
};

/**
 * One tag that is inert as written (sticky, case-insensitive): a closed list of formatting tags
 * with no attributes, a link with a literal http(s) or mailto `href` and double-quoted `title` and
 * `name`, an image with a literal http(s) `src` and double-quoted `alt`, `title`, `width` and
 * `height`. Anything else (another tag or attribute, an unquoted value, a comment, a `<` that is
 * text) is left to the sanitizer.
 */
const INERT_TAG =
  /<(?:\/?(?:p|br|b|i|em|strong|u|s|small|sub|sup|ul|ol|li|blockquote|code|pre|h[1-6]|span|div|hr|figure|figcaption)\s*\/?|\/a\s*|a(?:\s+href="(?:https?:\/\/|mailto:)[^"<>]*"|\s+(?:title|name)="[^"<>]*")*\s*|img(?:\s+src="https?:\/\/[^"<>]*"|\s+(?:alt|title|width|height)="[^"<>]*")*\s*\/?)>/iy;

/** Whether every `<` of `html` opens an {@link INERT_TAG}: such HTML is served as it is. */
function inertAsWritten(html: string): boolean {
  for (let at = html.indexOf('<'); at !== -1; at = html.indexOf('<', INERT_TAG.lastIndex)) {
    INERT_TAG.lastIndex = at;
    if (!INERT_TAG.test(html)) return false;
  }
  return true;
}

/**
 * Item HTML (`text`) without scripts, event handlers or non-web URLs; see the module comment. HTML
 * made only of inert tags as written (the common `<p>…</p>`, links, images) is returned as it is:
 * the sanitizer costs some 100 µs an item, the check a few.
 */
export function inertHtml(html: string): string {
  return inertAsWritten(html) ? html : sanitizeHtml(html, TEXT_OPTIONS);
}

/** Embed markup (`media[].embed`) likewise, players with https URLs kept. */
export function inertEmbed(html: string): string {
  return html.includes('<') ? sanitizeHtml(html, EMBED_OPTIONS) : html;
}

const TAG = /<\/?[a-z!?][^<>]*>/gi;

/**
 * Elements a title may name as text (`The <canvas> element`, issue 34): written without
 * attributes, such a tag neither runs nor loads anything even where the title is put into HTML.
 */
const TEXT_TAG_NAMES = 'a|abbr|article|aside|b|bdi|bdo|blockquote|br|canvas|caption|cite|code|data|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|footer|h[1-6]|header|hr|i|ins|kbd|li|main|mark|nav|ol|output|p|pre|q|rp|rt|ruby|s|samp|section|small|span|strong|sub|summary|sup|table|tbody|td|tfoot|th|thead|time|tr|u|ul|var|wbr';
const TEXT_TAG = new RegExp(`^<\\/?(?:${TEXT_TAG_NAMES})\\s*\\/?>$`, 'i');
const TAG_OPEN = new RegExp(`<(?=[a-z/!?])(?!\\/?(?:${TEXT_TAG_NAMES})\\s*\\/?>)`, 'gi');

/** A title (plain text) with no tag left that could run or load anything: see the module comment. */
export function plainTitle(title: string): string {
  if (!title.includes('<')) return title;
  let text = title;
  // Each pass removes at least one tag or stops: at most one pass per `<`.
  for (let passes = 0; passes <= title.length; passes++) {
    const next = text.replace(TAG, (tag) => (TEXT_TAG.test(tag) ? tag : ''));
    if (next === text) break;
    text = next;
  }
  return text.replace(TAG_OPEN, '');
}

/** `url` when it is an absolute http(s) URL (as the URL parser reads it: spaces and case do not hide a scheme), else undefined. */
export function webUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  if (/^https?:\/\//i.test(url)) return url; // what a URL parser reads as such too (nothing before the scheme to strip)
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** An inline image (`data:image/…`), which an `<img>` shows without running anything; the publication shows them too. */
const INLINE_IMAGE = /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i;

function inertMedia(media: Media[] | null): Media[] | null {
  if (!media) return media;
  const kept = media.flatMap((m): Media[] => {
    // Alternative text is plain text, like a title.
    if (m.alt !== undefined) m = { ...m, alt: plainTitle(m.alt) };
    if (m.type === 'image') return webUrl(m.url) || INLINE_IMAGE.test(m.url) ? [m] : [];
    const { url, ...rest } = m;
    return [{ ...rest, ...(webUrl(url) && { url }), embed: inertEmbed(m.embed) }];
  });
  return kept.length ? kept : null;
}

/** `item` (in shape, `inShape`) made inert for serving, children and duplicates too; see the module comment. */
export function inertItem(item: ContentItem): ContentItem {
  return {
    ...item,
    ...(item.title !== undefined && { title: plainTitle(item.title) }),
    text: inertHtml(item.text),
    url: webUrl(item.url) ?? '',
    author: { ...item.author, url: webUrl(item.author.url) ?? null },
    media: inertMedia(item.media),
    ...(item.duplicates && { duplicates: item.duplicates.map((d) => ({ ...d, url: webUrl(d.url) ?? '', author: { ...d.author, url: webUrl(d.author.url) ?? null } })) }),
    ...(item.children && { children: item.children.map(inertItem) }),
  };
}

/** The text of HTML (to read, never to put into HTML): tags removed, entities decoded (by htmlparser2), whitespace collapsed. */
export function htmlText(html: string): string {
  let text = '';
  const parser = new HtmlParser({ ontext(data) { text += data; } }, { decodeEntities: true });
  parser.end(html);
  return text.replace(/\s+/g, ' ').trim();
}
