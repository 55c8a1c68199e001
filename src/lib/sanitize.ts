/**
 * Outside HTML made safe, with sanitize-html (an allow-list parser built on htmlparser2; maintained
 * since 2013): one allow-list for item HTML, applied at collection (`cleanHtml`) and on the
 * publication page (`sanitizeText`, docs/api.md#publication).
 *
 * - Item text keeps simple formatting, links and https images. Everything else is dropped:
 *   scripts, styles, event handlers, forms, iframes. Links keep only http(s) and mailto URLs
 *   (no `javascript:` or `data:`) and always open in a new tab with
 *   `rel="noopener noreferrer nofollow"`.
 * - Video embed markup (`media[].embed` from connectors) keeps only an `<iframe>` whose `src` is
 *   https on one of `EMBED_HOSTS` (the same hosts the page's CSP `frame-src` allows), re-sandboxed,
 *   or a `<video>` with https sources. Any other embed renders as a link to the original.
 */
import sanitizeHtml from 'sanitize-html';

/** Video players whose iframes the publication shows; also the CSP `frame-src` list. */
export const EMBED_HOSTS = [
  'www.youtube.com',
  'www.youtube-nocookie.com',
  'player.vimeo.com',
  'www.dailymotion.com',
  'www.facebook.com',
] as const;

const LINK_REL = 'noopener noreferrer nofollow';

/**
 * The one allow-list of item HTML: applied when an item is collected (`cleanHtml`, feeds) and when
 * the wall shows one (`sanitizeText`, which adds only presentation: `rel`, `target`, lazy loading).
 */
const ALLOWLIST: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'a', 'b', 'strong', 'i', 'em', 'u', 's', 'small', 'sub', 'sup', 'ul', 'ol', 'li', 'blockquote', 'q', 'code', 'pre', 'img', 'figure', 'figcaption', 'h3', 'h4', 'span'],
  // rel, target, loading and decoding are only ever set by transformTags below.
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'], img: ['src', 'srcset', 'alt', 'width', 'height', 'loading', 'decoding'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['https'] },
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
};

const TEXT_OPTIONS: sanitizeHtml.IOptions = {
  ...ALLOWLIST,
  transformTags: {
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: LINK_REL, target: '_blank' } }),
    img: (tagName, attribs) => ({ tagName, attribs: { ...attribs, loading: 'lazy', decoding: 'async' } }),
  },
};

/** Item text (HTML from the source) as safe HTML for the wall: the allow-list, links opening in a new tab, images loaded lazily. */
export function sanitizeText(html: string): string {
  return sanitizeHtml(html, TEXT_OPTIONS);
}

/**
 * Item HTML as collected and stored (feeds, docs/services.md#rss): the same allow-list as the wall,
 * nothing added. No script, style, event handler, frame or non-web URL survives (`javascript:`
 * however it is cased, spaced or entity-encoded: sanitize-html reads the decoded value).
 */
export function cleanHtml(html: string): string {
  return sanitizeHtml(html, ALLOWLIST);
}

const EMBED_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ['iframe', 'video', 'source'],
  allowedAttributes: {
    iframe: ['src', 'width', 'height', 'title', 'allow', 'allowfullscreen', 'loading', 'referrerpolicy', 'sandbox'],
    video: ['src', 'poster', 'width', 'height', 'controls', 'preload', 'playsinline', 'muted', 'loop'],
    source: ['src', 'type'],
  },
  allowedSchemes: ['https'],
  allowedIframeHostnames: [...EMBED_HOSTS],
  allowIframeRelativeUrls: false,
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: {
    iframe: (tagName, attribs) => ({
      tagName,
      attribs: {
        ...withoutSandbox(attribs),
        loading: 'lazy',
        referrerpolicy: 'strict-origin-when-cross-origin',
        sandbox: 'allow-scripts allow-same-origin allow-popups allow-presentation',
      },
    }),
    video: (tagName, attribs) => ({ tagName, attribs: { ...attribs, controls: '', preload: 'none' } }),
  },
  exclusiveFilter: (frame) => frame.tag === 'iframe' && !frame.attribs.src,
};

/** The source's own `sandbox` is replaced by ours, never merged. */
function withoutSandbox(attribs: sanitizeHtml.Attributes): sanitizeHtml.Attributes {
  const { sandbox: _ignored, ...rest } = attribs;
  return rest;
}

/** Embed markup as a safe player, or '' when nothing in it is a known-safe player. */
export function sanitizeEmbed(html: string): string {
  const clean = sanitizeHtml(html, EMBED_OPTIONS).trim();
  return /<(iframe|video)\b/.test(clean) ? clean : '';
}

/** `url` when it is an absolute http(s) URL, else undefined (for hrefs we build ourselves). */
export function safeUrl(url: string | null | undefined, schemes: readonly string[] = ['http:', 'https:']): string | undefined {
  if (!url) return undefined;
  try {
    const parsed = new URL(url);
    return schemes.includes(parsed.protocol) ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** Image URLs the page may load: https, or an inline `data:image/…` (CSP `img-src https: data:`). */
export function safeImageUrl(url: string | null | undefined): string | undefined {
  if (url && /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i.test(url)) return url;
  return safeUrl(url, ['https:']);
}
