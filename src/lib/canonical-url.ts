/**
 * Canonical URLs for de-duplication (docs/api.md#duplicates): two addresses of the same page
 * reduce to one string. Pure; never throws.
 *
 * The generic part rests on the WHATWG URL parser (scheme and host case, default ports, percent
 * encoding): `www.`, fragments, trailing and repeated slashes, sorted query parameters, and the
 * tracking parameters of `TRACKING` removed. (normalize-url did the same at 13–90 µs per URL
 * against about 3 µs here, too slow for a check on every collected item: bench/dedupe.ts.)
 * On top of it, the mappings of services whose URL forms are
 * documented: YouTube (`youtu.be/<id>`, `m.youtube.com`, `/shorts/<id>`, `/embed/<id>`, `/live/<id>`
 * → `youtube.com/watch?v=<id>`, developers.google.com/youtube/player_parameters), X/Twitter
 * (`x.com`, `mobile.twitter.com` → `twitter.com`; a status `/<user>/status/<id>` →
 * `twitter.com/i/status/<id>`, since the user part is ignored by the service), the Google AMP
 * cache (`google.com/amp/s/<url>`, `<host>.cdn.ampproject.org/c/s/<url>`, developers.google.com/amp/cache),
 * AMP pages (`amp.` host, a trailing `/amp` segment, an `amp` or `outputType=amp` parameter)
 * and the mobile hosts of `MOBILE`. The scheme becomes `https` (the same page over http is the
 * same story).
 */

/** Query parameters that only track the click, besides every `utm_*` (Google Analytics); from their vendors' docs. Compared lowercased. */
const TRACKING = new Set([
  'fbclid', 'gclid', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'yclid', 'twclid', 'ttclid', 'igshid', 'igsh', 'si',
  'mc_cid', 'mc_eid', 'ref_src', 'ref_url', '_hsenc', '_hsmi', 'mkt_tok', 'oly_enc_id', 'oly_anon_id', 'vero_id',
  'wickedid', '__s', 's_cid', 'cmpid', 'ocid', 'spm', 'feature', 'sr_share',
]);

/** Mobile hosts whose desktop host is known (the service serves the same path there). */
const MOBILE: Record<string, string> = {
  'm.youtube.com': 'youtube.com',
  'music.youtube.com': 'youtube.com',
  'mobile.twitter.com': 'twitter.com',
  'm.twitter.com': 'twitter.com',
  'x.com': 'twitter.com',
  'mobile.x.com': 'twitter.com',
  'm.facebook.com': 'facebook.com',
  'mobile.facebook.com': 'facebook.com',
  'touch.facebook.com': 'facebook.com',
  'mbasic.facebook.com': 'facebook.com',
  'fb.com': 'facebook.com',
  'm.vk.com': 'vk.com',
  'm.imgur.com': 'imgur.com',
  'm.tumblr.com': 'tumblr.com',
  'm.flickr.com': 'flickr.com',
  'mobile.reddit.com': 'reddit.com',
  'old.reddit.com': 'reddit.com',
  'm.reddit.com': 'reddit.com',
  'm.bbc.co.uk': 'bbc.co.uk',
  'm.bbc.com': 'bbc.com',
  'mobile.nytimes.com': 'nytimes.com',
  'm.theguardian.com': 'theguardian.com',
  'm.spiegel.de': 'spiegel.de',
  'm.heise.de': 'heise.de',
  'm.vimeo.com': 'vimeo.com',
  'player.vimeo.com': 'vimeo.com',
};

const YOUTUBE_ID = /^[\w-]{11}$/;

/** The page an AMP cache URL serves, or undefined. */
function ampCacheTarget(url: URL): string | undefined {
  const path = url.pathname;
  if (/(^|\.)google\.[a-z.]+$/.test(url.hostname) && path.startsWith('/amp/')) {
    const rest = path.slice('/amp/'.length);
    return rest.startsWith('s/') ? `https://${rest.slice(2)}${url.search}` : `http://${rest}${url.search}`;
  }
  if (url.hostname.endsWith('.cdn.ampproject.org')) {
    const match = /^\/[a-z](?:\/s)?\/(.+)$/.exec(path);
    if (match) return `${path.includes('/s/') ? 'https' : 'http'}://${match[1]}${url.search}`;
  }
  return undefined;
}

/** Applies the service mappings to `url` (mutated). */
function mapServices(url: URL): void {
  let host = url.hostname.toLowerCase().replace(/^www\./, '').replace(/\.$/, '');
  host = MOBILE[host] ?? host.replace(/^([a-z]{2,3})\.m\.(wikipedia\.org)$/, '$1.$2');
  if (host.startsWith('amp.')) host = host.slice(4);
  // Setters only on a change: each re-parses the URL.
  if (host !== url.hostname) url.hostname = host;
  const path = url.pathname.replace(/\/amp\/?$/, '/').replace(/\.amp(\.html?)?$/, '$1');
  if (path !== url.pathname) url.pathname = path;
  if (url.search) {
    url.searchParams.delete('amp');
    if (url.searchParams.get('outputType') === 'amp') url.searchParams.delete('outputType');
  }

  if (host === 'youtu.be' || host === 'youtube.com' || host === 'youtube-nocookie.com') {
    const segments = url.pathname.split('/').filter(Boolean);
    let id: string | null = null;
    if (host === 'youtu.be') id = segments[0] ?? null;
    else if (segments[0] === 'watch') id = url.searchParams.get('v');
    else if (['shorts', 'embed', 'live', 'v', 'e'].includes(segments[0] ?? '')) id = segments[1] ?? null;
    if (id && YOUTUBE_ID.test(id)) {
      url.hostname = 'youtube.com';
      url.pathname = '/watch';
      url.search = `?v=${id}`;
    } else if (host === 'youtube-nocookie.com') url.hostname = 'youtube.com';
  }
  if (host === 'twitter.com') {
    const status = /^\/(?:[\w]{1,15}|i\/web|i)\/status(?:es)?\/(\d+)/.exec(url.pathname);
    if (status) url.pathname = `/i/status/${status[1]}`;
    url.search = ''; // `s`, `t`, `ref_src`: share trackers; the service keeps no content in the query.
  }
}

const isTracking = (name: string) => name.startsWith('utm_') || TRACKING.has(name);

/**
 * The canonical form of `raw` (`https://host/path?sorted=params`), or undefined when it is not an
 * absolute http(s) URL.
 */
export function canonicalUrl(raw: string): string | undefined {
  if (typeof raw !== 'string' || !/^\s*https?:\/\//i.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  const cached = ampCacheTarget(url);
  if (cached) {
    try {
      url = new URL(cached);
    } catch {
      return undefined;
    }
  }
  if (!url.hostname) return undefined;
  // http's default port, explicit or not, is no port once the scheme is https.
  const port = url.protocol === 'http:' && url.port === '80' ? '' : url.port;
  mapServices(url);
  const params = [...url.searchParams].filter(([name]) => !isTracking(name.toLowerCase()));
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  const path = url.pathname.replace(/\/{2,}/g, '/').replace(/\/+$/, '');
  return `https://${url.hostname}${port && port !== '443' ? `:${port}` : ''}${path}${query}`;
}

const HREF = /<a\b[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)')[^>]*>([\s\S]*?)<\/a>/gi;
const BARE = /\bhttps?:\/\/[^\s<>"']+/gi;
const decode = (s: string) => s.replace(/&amp;/g, '&').replace(/&#x2F;/gi, '/').replace(/&#47;/g, '/');
const stripTags = (s: string) => s.replace(/<[^>]*>/g, '').trim();

/**
 * The first external http(s) link of an item's text or HTML: an anchor's `href` (or, without
 * anchors, a bare URL), leaving out mentions and hashtags (anchor text starting with `@` or `#`)
 * and links to `ownHosts` (the item's own service: its page, its author, its media). Undefined
 * when there is none.
 */
export function firstExternalLink(text: string, ownHosts: readonly string[]): string | undefined {
  let own: Set<string> | undefined; // Parsed at the first candidate link: most texts have none.
  const external = (href: string) => {
    const host = hostOf(href);
    own ??= new Set(ownHosts.map(hostOf).filter((h): h is string => !!h));
    return !!host && !own.has(host);
  };
  for (const match of text.matchAll(HREF)) {
    const href = decode(match[1] ?? match[2] ?? '');
    const label = stripTags(match[3] ?? '');
    if (/^[@#]/.test(label) || !/^https?:\/\//i.test(href)) continue;
    if (external(href)) return href;
  }
  for (const match of stripTags(text.replace(HREF, ' ')).matchAll(BARE)) {
    const href = decode(match[0]).replace(/[.,;:!?)\]]+$/, '');
    if (external(href)) return href;
  }
  return undefined;
}

/** The canonical host of a URL (`twitter.com` for `x.com`), or undefined. */
function hostOf(raw: string): string | undefined {
  const canonical = canonicalUrl(raw);
  return canonical ? new URL(canonical).hostname : undefined;
}
