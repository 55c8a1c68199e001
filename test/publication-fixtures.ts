/**
 * Items and customizations for the publication tests: one item of each type, a malicious one,
 * and inline SVG images (data: URLs), so no test ever loads anything from outside.
 */
import type { ContentItem } from '../src/item.ts';
import { newId } from '../src/lib/ids.ts';
import { newRecordFields } from '../src/lib/time.ts';
import type { Db } from '../src/store/db.ts';
import { buildItem } from './helper.ts';

/** A gradient "photo" as an SVG data URL. */
export function picture(from: string, to: string, shape = '<circle cx="300" cy="260" r="90" fill="rgba(255,255,255,.35)"/>'): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600" viewBox="0 0 800 600"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs><rect width="800" height="600" fill="url(#g)"/>${shape}<path d="M0 600 L260 330 L420 480 L560 360 L800 600Z" fill="rgba(0,0,0,.25)"/></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

/** One item per type, newest first: image, video, link, status (+ an older status). */
export function typedItems(): ContentItem[] {
  return [
    buildItem({
      id: 'instagram_sunset',
      service: 'instagram',
      type: 'image',
      title: undefined,
      text: 'Sunset over the harbour tonight <b>#golden</b>',
      date: minutesAgo(2),
      author: { name: 'Mara Lind', username: 'maralind', userid: null, url: 'https://instagram.example/maralind' },
      media: [{ type: 'image', url: picture('#f97316', '#7c3aed'), width: 800, height: 600 }],
      kudos: { score: 128, instagram_likes: 120, instagram_comments: 8 },
    }),
    buildItem({
      id: 'youtube_launch',
      service: 'youtube',
      type: 'video',
      title: 'Launch day: the whole story in four minutes',
      text: 'Behind the scenes of our biggest launch.',
      date: minutesAgo(25),
      author: { name: 'Acme Studio', username: 'acmestudio', userid: null, url: null },
      media: [
        { type: 'image', url: picture('#0ea5e9', '#1e3a8a'), width: 800, height: 450 },
        { type: 'embed', embed: '<iframe src="https://www.youtube-nocookie.com/embed/launch" onload="alert(1)" allowfullscreen></iframe>', duration: 240 },
      ],
      kudos: { score: 57, youtube_views: 1200, youtube_likes: 57 },
    }),
    buildItem({
      id: 'rss_story',
      service: 'rss',
      type: 'link',
      title: 'City opens a new riverside park',
      text: '<p>The park adds <a href="https://news.example/park">four hectares</a> of green space along the river.</p>',
      url: 'https://news.example/riverside-park',
      date: minutesAgo(90),
      author: { name: 'The Daily Example', username: null, userid: null, url: null },
      media: [{ type: 'image', url: picture('#22c55e', '#065f46'), width: 800, height: 600 }],
      kudos: { score: 0 },
    }),
    buildItem({
      id: 'mastodon_hello',
      service: 'mastodon',
      type: 'status',
      title: undefined,
      text: '<p>Just arrived at the conference. The keynote hall is already full! Who else is here?</p>',
      url: 'https://social.example/@jo/1',
      date: minutesAgo(180),
      author: { name: 'Jo Park', username: 'jo@social.example', userid: null, url: 'https://social.example/@jo' },
      kudos: { score: 12, mastodon_favourites: 10, mastodon_reblogs: 1 },
    }),
    buildItem({
      id: 'bluesky_coffee',
      service: 'bluesky',
      type: 'status',
      title: undefined,
      text: 'Best coffee in town? Asking for a friend ☕',
      url: 'https://bsky.example/post/2',
      date: minutesAgo(60 * 26),
      author: { name: 'Sam Rivera', username: 'sam.bsky.example', userid: null, url: null },
      kudos: { score: 4 },
    }),
  ];
}

/** Text that would run script if it reached the page unsanitized; each sets a global flag. */
export function maliciousItem(): ContentItem {
  return buildItem({
    id: 'rss_evil',
    service: 'rss',
    type: 'status',
    title: undefined,
    text:
      '<p>Nice post</p><script>window.__pwned = "script"</script>' +
      '<img src="https://x.invalid/none.png" onerror="window.__pwned = \'onerror\'">' +
      '<img src="x" onerror="window.__pwned = \'onerror2\'">' +
      '<a id="evil-link" href="javascript:window.__pwned=\'link\'">click me</a>' +
      '<svg onload="window.__pwned = \'svg\'"></svg><iframe src="javascript:parent.__pwned=\'frame\'"></iframe>',
    date: minutesAgo(1),
    author: { name: '<img src=x onerror="window.__pwned=1">Eve', username: 'eve"><script>window.__pwned=2</script>', userid: null, url: 'javascript:alert(1)' },
    kudos: { score: 1 },
  });
}

/** Inserts a customization row as issue 4's API will; `at` orders creation. */
export async function addCustomization(
  db: Db,
  contractId: string,
  fields: { name: string; type: 'css' | 'js'; data: string; active?: boolean; at?: number },
): Promise<string> {
  const id = newId();
  await db
    .insertInto('customizations')
    .values({
      id,
      contractId,
      name: fields.name,
      type: fields.type,
      data: fields.data,
      version: '1',
      description: null,
      active: fields.active === false ? 0 : 1,
      ...newRecordFields('test', fields.at ?? Date.now()),
    })
    .execute();
  return id;
}

/** A theme the API accepts (docs/api.md#publication-settings): dark, every pair of colours of the wall at WCAG 2.2 AA or better. */
export const DARK_THEME = { background: '#0f172a', card: '#1e293b', text: '#f1f5f9', muted: '#cbd5e1', accent: '#fbbf24', accentText: '#111827', font: 'serif', cardStyle: 'outline', radius: 4 };
