/**
 * Every item every connector makes from the recorded payloads has exactly the content item's
 * shape (docs/api.md#content-item): validated strictly (no other property, every type exact)
 * against the `ContentItem` schema the API documents, `url` a non-empty http(s) string and
 * `children` an array. The connectors run as the collector runs them (`connectorFor`), against a
 * local server answering with the recorded payloads.
 */
import { readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { type FakeRequest, type FakeResponse, fixtureBytes, fixtureJson, useFakeApi } from '../fake-api.ts';
import { loadConfig } from '../../src/config.ts';
import { COMPONENTS } from '../../src/http/openapi.ts';
import { type ContentItem, inShape } from '../../src/item.ts';
import type { SourceInput } from '../../src/services/connector.ts';
import { connectorFor } from '../../src/services/index.ts';
import { chatItem } from '../../src/services/twitch/connector.ts';
import { parseIrcLine } from '../../src/services/twitch/irc.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const api = useFakeApi();

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
const validItem = ajv.compile(COMPONENTS.find((schema) => (schema as { $id?: string }).$id === 'ContentItem')!);
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Every item (and child) in shape; the state and the pin are the store's to add (docs/api.md#pin-and-spotlight), so they are added here. */
function expectInShape(items: ContentItem[]): void {
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) {
    const stored = { ...item, state: 'published', pinned: false };
    expect(validItem(stored), `${item.id}: ${JSON.stringify(validItem.errors)}`).toBe(true);
    for (const one of [item, ...(item.children ?? [])]) {
      expect(one.url, one.id).toMatch(/^https?:\/\/./);
      expect(Array.isArray(one.children), one.id).toBe(true);
      expect(one.date).toMatch(ISO_MS);
    }
  }
}

const json = (service: string, file: string): FakeResponse => ({ body: fixtureBytes(service, file), headers: { 'content-type': 'application/json' } });
const xml = (service: string, file: string): FakeResponse => ({ body: fixtureBytes(service, file), headers: { 'content-type': 'application/xml' } });

interface Case {
  name: string;
  input: Omit<SourceInput, 'id'>;
  respond: (req: FakeRequest) => FakeResponse;
}

const vimeoVideo = fixtureJson('vimeo', 'video_object_from_programmed_list.json');
const blueskyPost = fixtureJson('bluesky', 'getPostThread_postView_recordWithMedia.json').thread.post;
const mastodonTag = fixtureJson('mastodon', 'timelines_tag_cassette.json')[0];
const mastodonMedia = fixtureJson('mastodon', 'status_with_media_cassette.json')[0];
const album = fixtureJson('facebook', 'post_album_attachments.json');
const channels = fixtureJson('youtube', 'channels_list_contentDetails.json');
const tumblrPosts = fixtureJson('tumblr', 'blog_likes_legacy_posts.json').liked_posts;
const reddit = (file: string, at = 1) => fixtureJson('reddit', file)[at];
/** A fake Reddit: its recorded app token, and `listing` (a recorded interaction's body; a comments answer's first listing) for the rest. */
const redditListing = (interaction: { body: unknown }) => (req: FakeRequest): FakeResponse =>
  req.path === '/api/v1/access_token' ? { body: reddit('r_all_new_before_cassette.json', 0).body } : { body: Array.isArray(interaction.body) ? interaction.body[0] : interaction.body };

const cases: Case[] = [
  { name: 'twitter keyword search', input: { service: 'twitter', type: 'keyword', input: 'snowman' }, respond: () => json('twitter', 'search_recent_with_includes_docs_sample.json') },
  {
    name: 'twitter user timeline',
    input: { service: 'twitter', type: 'user', input: 'TwitterDev' },
    respond: (req) => (req.path.startsWith('/2/users/by/username/') ? json('twitter', 'user_by_username_docs_sample.json') : json('twitter', 'users_tweets_public_metrics_docs_sample.json')),
  },
  { name: 'facebook page feed', input: { service: 'facebook', type: 'page', input: 'somepage' }, respond: (req) => (req.query.get('after') ? { body: { data: [] } } : json('facebook', 'page_feed_fields_p1.json')) },
  { name: 'facebook minimal posts', input: { service: 'facebook', type: 'page', input: 'somepage' }, respond: (req) => (req.query.get('after') ? { body: { data: [] } } : json('facebook', 'page_posts_minimal_fields.json')) },
  {
    name: 'facebook album with comments (children)',
    input: { service: 'facebook', type: 'page', input: 'somepage' },
    respond: () => ({ body: { data: [{ ...album, comments: { data: [{ id: '1_2', message: 'Nice', created_time: '2021-08-10T18:45:03+0000', from: { id: '42', name: 'Ann' } }] } }] } }),
  },
  {
    name: 'instagram hashtag (recent media)',
    input: { service: 'instagram', type: 'tag', input: 'developers' },
    respond: (req) => (req.path === '/ig_hashtag_search' ? json('instagram', 'ig_hashtag_search.json') : json('instagram', 'hashtag_recent_media_p1.json')),
  },
  {
    name: 'instagram hashtag (top media)',
    input: { service: 'instagram', type: 'tag', input: 'quokka' },
    respond: (req) => (req.path === '/ig_hashtag_search' ? json('instagram', 'ig_hashtag_search.json') : json('instagram', 'hashtag_top_media_p1.json')),
  },
  {
    name: 'instagram user (carousel)',
    input: { service: 'instagram', type: 'user', input: 'ikroskun' },
    respond: () => ({ body: { business_discovery: { id: '17841406338772941', username: 'ikroskun', name: 'Ikro', media: { data: [fixtureJson('instagram', 'ig_media_carousel.json')] } }, id: '1' } }),
  },
  { name: 'youtube keyless channel feed', input: { service: 'youtube', type: 'channel', input: 'UCP7uiEZIqci43m22KDl0sNw' }, respond: () => xml('youtube', 'channel-videos-feed-atom-full.xml') },
  {
    name: 'youtube Data API channel',
    input: { service: 'youtube', type: 'channel', input: 'UC_x5XG1OV2P6uZZ5FSM9Ttw' },
    respond: (req) => {
      if (req.path.endsWith('/channels')) return { body: { ...channels, items: channels.items.slice(0, 1) } };
      if (req.path.endsWith('/playlistItems')) return json('youtube', 'playlistItems_list_p1.json');
      return json('youtube', 'videos_list_statistics_contentDetails.json');
    },
  },
  {
    name: 'youtube live chat',
    input: { service: 'youtube', type: 'live', input: '9ywjjWAkeL0' },
    respond: (req) => (req.path.endsWith('/videos') ? json('youtube', 'videos_list_liveStreamingDetails.json') : json('youtube', 'liveChatMessages_list_p1.json')),
  },
  { name: 'tumblr user', input: { service: 'tumblr', type: 'user', input: 'sashalre' }, respond: () => ({ body: { meta: { status: 200, msg: 'OK' }, response: { posts: tumblrPosts } } }) },
  { name: 'vimeo user', input: { service: 'vimeo', type: 'user', input: 'stevieeatsworms' }, respond: () => ({ body: { total: 1, page: 1, per_page: 50, paging: { next: null, previous: null }, data: [vimeoVideo] } }) },
  { name: 'flickr user', input: { service: 'flickr', type: 'user', input: '35034346050@N01' }, respond: () => json('flickr', 'people_getPhotos.json') },
  { name: 'reddit subreddit new', input: { service: 'reddit', type: 'subreddit', input: 'all' }, respond: redditListing(reddit('r_all_new_before_cassette.json')) },
  { name: 'reddit subreddit new (before page)', input: { service: 'reddit', type: 'subreddit', input: 'all' }, respond: redditListing(reddit('r_all_new_before_cassette.json', 2)) },
  { name: 'reddit search', input: { service: 'reddit', type: 'search', input: 'praw oauth search' }, respond: redditListing(reddit('search_cassette.json')) },
  { name: 'reddit user submitted', input: { service: 'reddit', type: 'user', input: 'spez' }, respond: redditListing(reddit('user_submitted_new_cassette.json')) },
  { name: 'reddit gallery', input: { service: 'reddit', type: 'subreddit', input: 'pics' }, respond: redditListing(reddit('gallery_submission_cassette.json', 0)) },
  { name: 'reddit video', input: { service: 'reddit', type: 'subreddit', input: 'videos' }, respond: redditListing(reddit('video_submission_cassette.json', 0)) },
  { name: 'tiktok user (connected account)', input: { service: 'tiktok', type: 'user', input: 'scout2015' }, respond: () => json('tiktok', 'video_list_p1.json') },
  {
    name: 'linkedin organization',
    input: { service: 'linkedin', type: 'organization', input: 'urn:li:organization:2414183' },
    respond: (req) => (req.path.endsWith('/images') ? json('linkedin', 'images_batch_get.json') : json('linkedin', 'posts_by_author_p1.json')),
  },
  { name: 'bluesky author feed', input: { service: 'bluesky', type: 'user', input: 'test.marshal.dev' }, respond: () => ({ body: { feed: [{ post: blueskyPost }] } }) },
  { name: 'threads user (docs sample)', input: { service: 'threads', type: 'user', input: 'me' }, respond: () => json('threads', 'me_threads_docs_sample.json') },
  { name: 'threads user (carousel, video, image)', input: { service: 'threads', type: 'user', input: 'me' }, respond: () => json('threads', 'me_threads_media_p1.json') },
  { name: 'threads keyword (docs sample)', input: { service: 'threads', type: 'keyword', input: 'first thread' }, respond: () => json('threads', 'keyword_search_docs_sample.json') },
  { name: 'threads mention', input: { service: 'threads', type: 'mention', input: 'me' }, respond: () => json('threads', 'mentions_p1.json') },
];

const env = (base: string) => ({
  TWITTER_API_URL: base, TWITTER_BEARER_TOKEN: 't',
  FACEBOOK_API_URL: base, FACEBOOK_ACCESS_TOKEN: 't',
  INSTAGRAM_API_URL: base, INSTAGRAM_ACCESS_TOKEN: 't', INSTAGRAM_USER_ID: '17841406338772941',
  YOUTUBE_API_URL: `${base}/youtube/v3`, YOUTUBE_FEED_URL: `${base}/feeds/videos.xml`,
  TUMBLR_API_URL: base, TUMBLR_API_KEY: 't',
  VIMEO_API_URL: base, VIMEO_ACCESS_TOKEN: 't',
  FLICKR_API_URL: `${base}/services/rest`, FLICKR_FEED_URL: `${base}/feed.gne`, FLICKR_API_KEY: 't',
  BLUESKY_API_URL: `${base}/appview`, BLUESKY_PDS_URL: `${base}/pds`,
  REDDIT_API_URL: base, REDDIT_TOKEN_URL: `${base}/api/v1/access_token`, REDDIT_CLIENT_ID: 'c', REDDIT_CLIENT_SECRET: 's',
  TIKTOK_API_URL: base, TIKTOK_ACCESS_TOKEN: 't',
  LINKEDIN_API_URL: `${base}/rest`, LINKEDIN_ACCESS_TOKEN: 't',
  THREADS_API_URL: base, THREADS_ACCESS_TOKEN: 't',
});

async function collect(input: Omit<SourceInput, 'id'>, withEnv: Record<string, string> = {}): Promise<ContentItem[]> {
  const services = loadConfig({ ...env(api.base), ...withEnv }).services;
  const result = await connectorFor(input.service)!.collect({ id: 'a'.repeat(24), ...input }, {}, { fetch: api.fetcher, services, now: NOW });
  return result.items;
}

describe('every connector makes items in the content item shape', () => {
  it.each(cases)('$name', async ({ input, respond }) => {
    api.respond = respond;
    expectInShape(await collect(input, input.service === 'youtube' && input.type === 'channel' && input.input.startsWith('UCP7') ? { YOUTUBE_API_KEY: '' } : { YOUTUBE_API_KEY: 'k' }));
  });

  it('mastodon tag timeline and a status with media', async () => {
    api.respond = () => ({ body: mastodonTag.body });
    expectInShape(await collect({ service: 'mastodon', type: 'tag', input: `${api.base}/tags/hoot` }));
    api.respond = () => ({ body: [mastodonMedia.body].flat() });
    expectInShape(await collect({ service: 'mastodon', type: 'tag', input: `${api.base}/tags/hoot` }));
  });

  it.each(readdirSync(new URL('../fixtures/pixelfed/', import.meta.url)).filter((file) => file !== 'account_lookup.json'))('pixelfed %s', async (file) => {
    api.respond = (req) => (req.path === '/api/v1/accounts/lookup' ? json('pixelfed', 'account_lookup.json') : json('pixelfed', file));
    expectInShape(await collect({ service: 'pixelfed', type: 'tag', input: `${api.base}/discover/tags/seascape` }));
    expectInShape(await collect({ service: 'pixelfed', type: 'user', input: `${api.base}/ann_shore` }));
  });

  it.each(readdirSync(new URL('../fixtures/lemmy/', import.meta.url)))('lemmy %s', async (file) => {
    api.respond = () => json('lemmy', file);
    expectInShape(await collect({ service: 'lemmy', type: 'community', input: `${api.base}/c/technology` }));
    expectInShape(await collect({ service: 'lemmy', type: 'search', input: `${api.base}/search?q=laptop` }));
  });

  // Twitch chat has no poll: its items are made by the chat listener from each recorded PRIVMSG line (put in shape as the store does).
  const chatLines = readdirSync(new URL('../fixtures/twitch/', import.meta.url)).filter((file) => file.startsWith('privmsg_'));
  it.each(chatLines)('twitch chat %s', (file) => {
    const line = fixtureBytes('twitch', file).toString('utf8').replace(/\r?\n$/, '');
    expectInShape([inShape(chatItem(parseIrcLine(line)!)!)]);
  });

  const feeds = readdirSync(new URL('../fixtures/rss/', import.meta.url));
  it.each(feeds)('rss %s', async (file) => {
    api.respond = () => xml('rss', file);
    const items = await collect({ service: 'rss', type: 'feed', input: `${api.base}/feed/${file}` });
    expectInShape(items);
  });
});
